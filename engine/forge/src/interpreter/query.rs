//! `uquery` over unconfigured target nodes: `deps(x[, depth])`, `rdeps(universe, x[, depth])`,
//! `kind(regex, x)`, `filter(regex, x)`, `set(...)`, `+`/`union`, `^`/`intersect`,
//! `-`/`except`, target patterns as literals.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use anyhow::{anyhow, bail, Result};

use super::Loader;
use crate::model::TargetLabel;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    LParen,
    RParen,
    Comma,
    Op(char),
}

fn tokenize(s: &str) -> Result<Vec<Tok>> {
    let mut out = Vec::new();
    let cs: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        match c {
            c if c.is_whitespace() => i += 1,
            '(' => {
                out.push(Tok::LParen);
                i += 1
            }
            ')' => {
                out.push(Tok::RParen);
                i += 1
            }
            ',' => {
                out.push(Tok::Comma);
                i += 1
            }
            '+' | '^' => {
                out.push(Tok::Op(c));
                i += 1
            }
            '-' if i + 1 == cs.len() || cs[i + 1].is_whitespace() => {
                out.push(Tok::Op('-'));
                i += 1
            }
            '"' | '\'' => {
                let end = cs[i + 1..]
                    .iter()
                    .position(|x| *x == c)
                    .ok_or_else(|| anyhow!("Unterminated string in query `{s}`"))?;
                out.push(Tok::Word(cs[i + 1..i + 1 + end].iter().collect()));
                i += end + 2;
            }
            _ => {
                let start = i;
                while i < cs.len() && !cs[i].is_whitespace() && !matches!(cs[i], '(' | ')' | ',') {
                    i += 1;
                }
                out.push(Tok::Word(cs[start..i].iter().collect()));
            }
        }
    }
    Ok(out)
}

#[derive(Debug)]
enum Expr {
    Pattern(String),
    Func(String, Vec<Expr>),
    Int(u32),
    Bin(char, Box<Expr>, Box<Expr>),
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }
    fn expect(&mut self, t: Tok) -> Result<()> {
        match self.next() {
            Some(x) if x == t => Ok(()),
            other => bail!("Query syntax error: expected {t:?}, found {other:?}"),
        }
    }
    fn binop(&self) -> Option<char> {
        match self.peek()? {
            Tok::Op(c) => Some(*c),
            Tok::Word(w) => match w.as_str() {
                "union" => Some('+'),
                "intersect" => Some('^'),
                "except" => Some('-'),
                _ => None,
            },
            _ => None,
        }
    }
    fn expr(&mut self) -> Result<Expr> {
        let mut lhs = self.primary()?;
        while let Some(op) = self.binop() {
            self.pos += 1;
            let rhs = self.primary()?;
            lhs = Expr::Bin(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }
    fn primary(&mut self) -> Result<Expr> {
        match self.next() {
            Some(Tok::LParen) => {
                let e = self.expr()?;
                self.expect(Tok::RParen)?;
                Ok(e)
            }
            Some(Tok::Word(w)) => {
                if self.peek() == Some(&Tok::LParen) {
                    self.pos += 1;
                    let mut args = Vec::new();
                    if w == "set" {
                        while let Some(Tok::Word(x)) = self.peek().cloned() {
                            self.pos += 1;
                            args.push(Expr::Pattern(x));
                        }
                    } else if self.peek() != Some(&Tok::RParen) {
                        loop {
                            args.push(self.expr()?);
                            if self.peek() == Some(&Tok::Comma) {
                                self.pos += 1;
                            } else {
                                break;
                            }
                        }
                    }
                    self.expect(Tok::RParen)?;
                    return Ok(Expr::Func(w, args));
                }
                if let Ok(n) = w.parse::<u32>() {
                    return Ok(Expr::Int(n));
                }
                Ok(Expr::Pattern(w))
            }
            other => bail!("Query syntax error: unexpected {other:?}"),
        }
    }
}

type Set = BTreeSet<TargetLabel>;

pub struct QueryEnv<'a> {
    pub loader: &'a Loader,
    pub cwd_package: &'a str,
}

impl QueryEnv<'_> {
    fn deps_of(&self, t: &TargetLabel) -> Result<Vec<TargetLabel>> {
        let node = self.loader.get_target(t)?;
        Ok(node.deps().into_iter().map(|(l, _)| l.target).collect())
    }

    fn closure(&self, roots: &Set, depth: Option<u32>) -> Result<Set> {
        let mut seen = Set::new();
        let mut queue: VecDeque<(TargetLabel, u32)> =
            roots.iter().map(|r| (r.clone(), 0)).collect();
        while let Some((t, d)) = queue.pop_front() {
            if !seen.insert(t.clone()) {
                continue;
            }
            if depth.is_some_and(|m| d >= m) {
                continue;
            }
            for dep in self
                .deps_of(&t)
                .map_err(|e| e.context(format!("Loading deps of `{t}`")))?
            {
                queue.push_back((dep, d + 1));
            }
        }
        Ok(seen)
    }

    fn eval(&self, e: &Expr) -> Result<Set> {
        match e {
            Expr::Pattern(p) => Ok(self
                .loader
                .resolve_patterns(std::slice::from_ref(p), self.cwd_package)?
                .into_iter()
                .map(|l| l.target)
                .collect()),
            Expr::Int(n) => bail!("Query: unexpected integer `{n}`"),
            Expr::Bin(op, a, b) => {
                let (a, b) = (self.eval(a)?, self.eval(b)?);
                Ok(match op {
                    '+' => a.union(&b).cloned().collect(),
                    '^' => a.intersection(&b).cloned().collect(),
                    _ => a.difference(&b).cloned().collect(),
                })
            }
            Expr::Func(name, args) => match (name.as_str(), args.as_slice()) {
                ("set", xs) => {
                    let mut out = Set::new();
                    for x in xs {
                        out.extend(self.eval(x)?);
                    }
                    Ok(out)
                }
                ("kind", [Expr::Pattern(re), x]) => {
                    let re = regex::Regex::new(re)
                        .map_err(|e| anyhow!("kind(): invalid regex `{re}`: {e}"))?;
                    let mut out = Set::new();
                    for t in self.eval(x)? {
                        if re.is_match(&self.loader.get_target(&t)?.rule.name) {
                            out.insert(t);
                        }
                    }
                    Ok(out)
                }
                ("filter", [Expr::Pattern(re), x]) => {
                    let re = regex::Regex::new(re)
                        .map_err(|e| anyhow!("filter(): invalid regex `{re}`: {e}"))?;
                    Ok(self.eval(x)?.into_iter().filter(|t| re.is_match(&t.to_string())).collect())
                }
                ("deps", [x]) => self.closure(&self.eval(x)?, None),
                ("deps", [x, Expr::Int(d)]) => self.closure(&self.eval(x)?, Some(*d)),
                ("rdeps", [u, x]) => self.rdeps(&self.eval(u)?, &self.eval(x)?, None),
                ("rdeps", [u, x, Expr::Int(d)]) => self.rdeps(&self.eval(u)?, &self.eval(x)?, Some(*d)),
                _ => bail!(
                    "Unsupported query function `{name}` with {} argument(s) (supported: deps, rdeps, kind, filter, set)",
                    args.len()
                ),
            },
        }
    }

    fn rdeps(&self, universe: &Set, targets: &Set, depth: Option<u32>) -> Result<Set> {
        let all = self.closure(universe, None)?;
        let mut rev: BTreeMap<TargetLabel, Vec<TargetLabel>> = BTreeMap::new();
        for t in &all {
            for d in self.deps_of(t)? {
                rev.entry(d).or_default().push(t.clone());
            }
        }
        let mut seen = Set::new();
        let mut queue: VecDeque<(TargetLabel, u32)> = targets
            .iter()
            .filter(|t| all.contains(*t))
            .map(|t| (t.clone(), 0))
            .collect();
        while let Some((t, d)) = queue.pop_front() {
            if !seen.insert(t.clone()) {
                continue;
            }
            if depth.is_some_and(|m| d >= m) {
                continue;
            }
            for r in rev.get(&t).into_iter().flatten() {
                queue.push_back((r.clone(), d + 1));
            }
        }
        Ok(seen)
    }

    /// Evaluates a query expression to a sorted set of targets.
    pub fn run(&self, query: &str) -> Result<Vec<TargetLabel>> {
        let mut p = Parser {
            toks: tokenize(query)?,
            pos: 0,
        };
        let e = p.expr()?;
        if p.pos != p.toks.len() {
            bail!("Query syntax error: trailing input in `{query}`");
        }
        Ok(self.eval(&e)?.into_iter().collect())
    }

    /// Edges among `targets` (for `--output-format dot`).
    pub fn edges(&self, targets: &[TargetLabel]) -> Result<Vec<(TargetLabel, TargetLabel)>> {
        let set: Set = targets.iter().cloned().collect();
        let mut out = Vec::new();
        for t in targets {
            for d in self.deps_of(t)? {
                if set.contains(&d) {
                    out.push((t.clone(), d));
                }
            }
        }
        Ok(out)
    }
}
