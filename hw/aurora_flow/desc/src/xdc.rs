//! A reader for the XDC the kernel's packaging writes (`aurora-flow-desc package`, package.rs): Tcl commands
//! split into words, bracketed object queries (`[get_cells -hier -filter {NAME =~ pat}]`,
//! `get_pins`, `get_clocks`, `get_ports`) resolved into [`Object`]s, and the timing
//! constraints among them turned into [`Constraint`]s. Anything it does not understand is an
//! error naming the line: a constraint the precedence check cannot read could be the one that
//! shadows a crossing.

use anyhow::{anyhow, bail, Result};

/// The design objects one query names (patterns as Vivado matches them: `*` and `?` are
/// wildcards, brackets are literal bus indices).
#[derive(Clone, Debug, PartialEq)]
pub enum Object {
    Cells(String),
    Pins(String),
    Ports(String),
    /// `get_clocks PATTERN`; `generated`: `-include_generated_clocks` (the clocks derived
    /// from the matched ones are in the set too)
    Clocks {
        pattern: String,
        generated: bool,
    },
}

/// The constraints the precedence check reasons about (UG903 "Timing Exceptions").
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    CreateClock {
        name: String,
        port: String,
    },
    /// `set_clock_groups`: each `-group` is a list of clock queries
    ClockGroups {
        groups: Vec<Vec<Object>>,
    },
    FalsePath,
    MaxDelay {
        datapath_only: bool,
        ns: f64,
    },
    MinDelay,
    MulticyclePath,
    /// `set_bus_skew`: not a timing exception; clock groups and false paths leave it in force
    BusSkew {
        ns: f64,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Constraint {
    /// 1-based line of the command's first word
    pub line: usize,
    pub kind: Kind,
    /// `-from`, `-to`, `-through` object lists (empty: not given)
    pub from: Vec<Object>,
    pub to: Vec<Object>,
    pub through: Vec<Object>,
}

#[derive(Clone, Debug, PartialEq)]
enum Word {
    Text(String),
    Command(Vec<Word>),
}

/// Parses XDC text; errors name `origin` and the line.
pub fn parse(origin: &str, text: &str) -> Result<Vec<Constraint>> {
    let mut out = Vec::new();
    for (line, words) in commands(text).map_err(|e| anyhow!("{origin}: {e}"))? {
        let c = constraint(line, &words).map_err(|e| anyhow!("{origin}:{line}: {e}"))?;
        out.extend(c);
    }
    Ok(out)
}

/// Splits the text into commands (newline or `;` ends one, `\` + newline continues it,
/// `#` at a command's start is a comment), each with the line it starts on.
fn commands(text: &str) -> Result<Vec<(usize, Vec<Word>)>> {
    let chars: Vec<char> = text.chars().collect();
    let mut pos = 0;
    let mut line = 1;
    let mut out = Vec::new();
    while pos < chars.len() {
        // skip blank space between commands
        while pos < chars.len() && matches!(chars[pos], ' ' | '\t' | '\n' | '\r' | ';') {
            if chars[pos] == '\n' {
                line += 1;
            }
            pos += 1;
        }
        if pos >= chars.len() {
            break;
        }
        if chars[pos] == '#' {
            while pos < chars.len() && chars[pos] != '\n' {
                pos += 1;
            }
            continue;
        }
        let start_line = line;
        let words = words(&chars, &mut pos, &mut line, false)?;
        out.push((start_line, words));
    }
    Ok(out)
}

/// Reads words up to the end of the command (or the closing `]` when `nested`).
fn words(chars: &[char], pos: &mut usize, line: &mut usize, nested: bool) -> Result<Vec<Word>> {
    let mut out = Vec::new();
    loop {
        while *pos < chars.len() && matches!(chars[*pos], ' ' | '\t' | '\r') {
            *pos += 1;
        }
        if *pos + 1 < chars.len() && chars[*pos] == '\\' && chars[*pos + 1] == '\n' {
            *pos += 2;
            *line += 1;
            continue;
        }
        if *pos >= chars.len() {
            if nested {
                bail!("line {line}: `[` without `]`");
            }
            return Ok(out);
        }
        match chars[*pos] {
            '\n' | ';' if !nested => return Ok(out),
            '\n' => {
                *line += 1;
                *pos += 1;
            }
            ']' if nested => {
                *pos += 1;
                return Ok(out);
            }
            '[' => {
                *pos += 1;
                out.push(Word::Command(words(chars, pos, line, true)?));
            }
            '{' => {
                let mut depth = 0;
                let mut s = String::new();
                loop {
                    let Some(&c) = chars.get(*pos) else {
                        bail!("line {line}: `{{` without `}}`");
                    };
                    *pos += 1;
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        '\n' => *line += 1,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                    if !(c == '{' && depth == 1) {
                        s.push(c);
                    }
                }
                out.push(Word::Text(s));
            }
            '"' => {
                *pos += 1;
                let mut s = String::new();
                while let Some(&c) = chars.get(*pos) {
                    *pos += 1;
                    if c == '"' {
                        break;
                    }
                    s.push(c);
                }
                out.push(Word::Text(s));
            }
            _ => {
                let mut s = String::new();
                while let Some(&c) = chars.get(*pos) {
                    if matches!(c, ' ' | '\t' | '\r' | '\n' | ';' | '[' | ']') {
                        break;
                    }
                    s.push(c);
                    *pos += 1;
                }
                out.push(Word::Text(s));
            }
        }
    }
}

fn text(w: &Word) -> Result<&str> {
    match w {
        Word::Text(s) => Ok(s),
        Word::Command(_) => bail!("a bracketed command where a word was expected"),
    }
}

/// One bracketed query, or a braced list of them (`-group {[get_clocks a] [get_clocks b]}`
/// arrives as text and is read again).
fn objects(w: &Word) -> Result<Vec<Object>> {
    match w {
        Word::Command(q) => Ok(vec![query(q)?]),
        Word::Text(s) => {
            let mut out = Vec::new();
            for (_, ws) in commands(s)? {
                for w in &ws {
                    match w {
                        Word::Command(q) => out.push(query(q)?),
                        Word::Text(t) => bail!(
                            "`{t}`: a bare name, not a get_cells/get_pins/get_clocks/get_ports \
                             query; write the query so the objects it names are explicit"
                        ),
                    }
                }
            }
            Ok(out)
        }
    }
}

fn query(q: &[Word]) -> Result<Object> {
    let Some(cmd) = q.first() else {
        bail!("empty `[]`");
    };
    let cmd = text(cmd)?;
    let mut pattern = None;
    let mut generated = false;
    let mut i = 1;
    while i < q.len() {
        let w = text(&q[i])?;
        match w {
            "-hier" | "-hierarchical" => {}
            "-include_generated_clocks" => generated = true,
            "-filter" => {
                i += 1;
                let f = q.get(i).map(text).transpose()?.unwrap_or_default();
                let Some(p) = f.trim().strip_prefix("NAME =~ ") else {
                    bail!("`-filter {{{f}}}`: only `NAME =~ pattern` filters are understood");
                };
                pattern = Some(p.trim().to_string());
            }
            other if other.starts_with('-') => bail!("`{cmd} {other}`: option not understood"),
            other => pattern = Some(other.to_string()),
        }
        i += 1;
    }
    let Some(pattern) = pattern else {
        bail!("`{cmd}` without a name or filter");
    };
    Ok(match cmd {
        "get_cells" => Object::Cells(pattern),
        "get_pins" => Object::Pins(pattern),
        "get_ports" => Object::Ports(pattern),
        "get_clocks" => Object::Clocks { pattern, generated },
        other => bail!("`{other}`: not a query the check understands"),
    })
}

fn number(w: &Word) -> Result<f64> {
    let s = text(w)?;
    s.parse().map_err(|_| anyhow!("`{s}`: not a delay in ns"))
}

fn constraint(line: usize, words: &[Word]) -> Result<Option<Constraint>> {
    let Some(first) = words.first() else {
        return Ok(None);
    };
    let cmd = text(first)?;
    let mut c = Constraint {
        line,
        kind: Kind::FalsePath,
        from: vec![],
        to: vec![],
        through: vec![],
    };
    let mut flags = Vec::new();
    let mut values = Vec::new();
    let mut groups = Vec::new();
    let mut name = None;
    let mut i = 1;
    while i < words.len() {
        let w = &words[i];
        let opt = match w {
            Word::Text(s) if s.starts_with('-') && s.parse::<f64>().is_err() => s.as_str(),
            _ => {
                values.push(w.clone());
                i += 1;
                continue;
            }
        };
        let arg = || {
            words
                .get(i + 1)
                .ok_or_else(|| anyhow!("`{cmd} {opt}` without a value"))
        };
        match opt {
            "-from" => c.from.extend(objects(arg()?)?),
            "-to" => c.to.extend(objects(arg()?)?),
            "-through" => c.through.extend(objects(arg()?)?),
            "-group" => groups.push(objects(arg()?)?),
            "-name" => name = Some(text(arg()?)?.to_string()),
            "-period" => {
                number(arg()?)?;
            }
            _ => {
                flags.push(opt.to_string());
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    let one_value = |what: &str| -> Result<f64> {
        match values.as_slice() {
            [v] => number(v),
            _ => bail!("`{cmd}` needs exactly one {what}"),
        }
    };
    c.kind = match cmd {
        "create_clock" => {
            let port = match values.as_slice() {
                [v] => match objects(v)?.as_slice() {
                    [Object::Ports(p)] => p.clone(),
                    _ => bail!("`create_clock` on something other than one port"),
                },
                _ => bail!("`create_clock` needs one port"),
            };
            let name = name.ok_or_else(|| anyhow!("`create_clock` without -name"))?;
            Kind::CreateClock { name, port }
        }
        "set_clock_groups" => {
            if groups.is_empty() {
                bail!("`set_clock_groups` without -group");
            }
            Kind::ClockGroups { groups }
        }
        "set_false_path" => Kind::FalsePath,
        "set_max_delay" => Kind::MaxDelay {
            datapath_only: flags.iter().any(|f| f == "-datapath_only"),
            ns: one_value("delay")?,
        },
        "set_min_delay" => Kind::MinDelay,
        "set_multicycle_path" => Kind::MulticyclePath,
        "set_bus_skew" => Kind::BusSkew {
            ns: one_value("skew")?,
        },
        other => bail!(
            "`{other}`: not a constraint the precedence check understands; teach it \
             (hw/aurora_flow/desc/src/xdc.rs) before the packaging writes it"
        ),
    };
    Ok(Some(c))
}

/// Vivado's name matching: `*` any run of characters, `?` one; everything else literal.
pub fn glob(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some(('*', rest)) => (0..=n.len()).any(|k| go(rest, &n[k..])),
            Some(('?', rest)) => !n.is_empty() && go(rest, &n[1..]),
            Some((c, rest)) => n.first() == Some(c) && go(rest, &n[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&p, &n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_and_options() {
        let c = parse(
            "t.xdc",
            "# comment\nset_max_delay -datapath_only -from [get_cells -hier -filter {NAME =~ */a_reg[*]}] \\\n  -to [get_cells b] 2.5\n",
        )
        .unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].line, 2);
        assert_eq!(
            c[0].kind,
            Kind::MaxDelay {
                datapath_only: true,
                ns: 2.5
            }
        );
        assert_eq!(c[0].from, vec![Object::Cells("*/a_reg[*]".into())]);
        assert_eq!(c[0].to, vec![Object::Cells("b".into())]);
    }

    #[test]
    fn unknown_command_is_an_error_naming_the_line() {
        let e = parse("t.xdc", "\nset_disable_timing [get_cells x]\n").unwrap_err();
        assert!(e.to_string().contains("t.xdc:2:"), "{e}");
    }

    #[test]
    fn glob_treats_brackets_as_literal() {
        assert!(glob(
            "*/u_kernel/u_tx_fifo/wgray_reg[*]",
            "top/u_kernel/u_tx_fifo/wgray_reg[3]"
        ));
        assert!(!glob(
            "*/u_kernel/u_tx_fifo/wgray_reg[*]",
            "top/u_kernel/u_rx_fifo/wgray_reg[3]"
        ));
        assert!(glob("*/mem_reg*", "x/mem_reg_bram_0"));
    }
}
