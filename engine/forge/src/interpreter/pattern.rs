//! Target labels (`cell//pkg:name[sub]`) and command-line target patterns.

use anyhow::{anyhow, bail, Result};

use super::cells::{join, Cells};
use crate::model::{ProvidersLabel, TargetLabel};

/// What a pattern names before the packages are looked at.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// `//pkg:name[sub]`
    Target(ProvidersLabel),
    /// `//pkg:` — every target of one package.
    Package { cell: String, package: String },
    /// `//pkg/...` — every target of every package under `pkg`.
    Recursive { cell: String, package: String },
}

fn check_package(p: &str, original: &str) -> Result<()> {
    for seg in p.split('/') {
        if seg.is_empty() && !p.is_empty() {
            bail!("Invalid target `{original}`: package path `{p}` has an empty segment");
        }
        if seg == "." || seg == ".." {
            bail!("Invalid target `{original}`: package path `{p}` must be normalized");
        }
    }
    Ok(())
}

/// Splits trailing `[a][b]` sub-target selectors from `s`.
fn split_subtargets<'a>(s: &'a str, original: &str) -> Result<(&'a str, Vec<String>)> {
    let Some(open) = s.find('[') else {
        return Ok((s, Vec::new()));
    };
    let (base, mut rest) = s.split_at(open);
    let mut subs = Vec::new();
    while !rest.is_empty() {
        let inner = rest
            .strip_prefix('[')
            .and_then(|r| r.find(']').map(|e| (&r[..e], &r[e + 1..])))
            .ok_or_else(|| anyhow!("Invalid sub-target syntax in `{original}`"))?;
        if inner.0.is_empty() {
            bail!("Empty sub-target name in `{original}`");
        }
        subs.push(inner.0.to_owned());
        rest = inner.1;
    }
    Ok((base, subs))
}

fn check_name(name: &str, original: &str) -> Result<()> {
    if name == "..." {
        bail!("Invalid target pattern `{original}`: Target name must not be equal to `...`");
    }
    if name.is_empty() || name.contains('/') || name.contains(':') {
        bail!("Invalid target name `{name}` in `{original}`");
    }
    Ok(())
}

/// Splits `cell//rest` / `//rest` into the canonical cell (default `ctx_cell`) and `rest`.
fn split_cell<'a>(s: &'a str, ctx_cell: &str, cells: &Cells) -> Result<Option<(String, &'a str)>> {
    match s.find("//") {
        Some(pos) => {
            let cell = &s[..pos];
            let cell = if cell.is_empty() {
                ctx_cell.to_owned()
            } else {
                cells.resolve_or_err(cell)?
            };
            Ok(Some((cell, &s[pos + 2..])))
        }
        None => Ok(None),
    }
}

/// A target label as written in a BUCK attribute: `:name`, `//pkg:name`, `cell//pkg:name`,
/// optionally with `[sub]` selectors, relative to the package being evaluated.
pub fn parse_label(
    s: &str,
    ctx_cell: &str,
    ctx_package: &str,
    cells: &Cells,
) -> Result<ProvidersLabel> {
    let (base, subs) = split_subtargets(s, s)?;
    let (cell, package, name) = if let Some(name) = base.strip_prefix(':') {
        (ctx_cell.to_owned(), ctx_package.to_owned(), name)
    } else if let Some((cell, rest)) = split_cell(base, ctx_cell, cells)? {
        let (pkg, name) = rest.split_once(':').ok_or_else(|| {
            anyhow!("Invalid target `{s}`: expected `//package:name` (missing `:`)")
        })?;
        (cell, pkg.to_owned(), name)
    } else {
        bail!("Invalid target `{s}`: expected `:name`, `//package:name` or `cell//package:name`");
    };
    check_package(&package, s)?;
    check_name(name, s)?;
    Ok(ProvidersLabel {
        target: TargetLabel {
            cell,
            package,
            name: name.to_owned(),
        },
        sub_target: subs,
    })
}

/// A command-line pattern, relative patterns resolved against `cwd_package` in `cwd_cell`.
pub fn parse_pattern(s: &str, cwd_cell: &str, cwd_package: &str, cells: &Cells) -> Result<Pattern> {
    let (cell, rest) = match split_cell(s, cwd_cell, cells)? {
        Some((cell, rest)) => (cell, rest.to_owned()),
        None => {
            // Relative pattern: `:name`, `sub:name`, `sub/...`, `...`.
            let joined = if let Some(r) = s.strip_prefix(':') {
                format!("{cwd_package}:{r}")
            } else {
                join(cwd_package, s)
            };
            (cwd_cell.to_owned(), joined)
        }
    };
    if rest == "..." || rest.ends_with("/...") {
        let package = rest
            .trim_end_matches("...")
            .trim_end_matches('/')
            .to_owned();
        check_package(&package, s)?;
        return Ok(Pattern::Recursive { cell, package });
    }
    let (pkg, name) = match rest.split_once(':') {
        Some(x) => x,
        None => {
            // buck2 reads `//pkg` as `//pkg:pkg`'s last segment.
            let last = rest.rsplit('/').next().unwrap_or("");
            if last.is_empty() {
                bail!("Invalid target pattern `{s}`");
            }
            (rest.as_str(), last)
        }
    };
    check_package(pkg, s)?;
    if name.is_empty() {
        return Ok(Pattern::Package {
            cell,
            package: pkg.to_owned(),
        });
    }
    let (name, subs) = split_subtargets(name, s)?;
    check_name(name, s)?;
    Ok(Pattern::Target(ProvidersLabel {
        target: TargetLabel {
            cell,
            package: pkg.to_owned(),
            name: name.to_owned(),
        },
        sub_target: subs,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interpreter::config::BuckConfig;
    use std::path::Path;

    fn cells() -> Cells {
        let mut c = BuckConfig::default();
        c.merge_text(
            "[cells]\n root = .\n toolchains = toolchains\n",
            Path::new("x"),
        )
        .unwrap();
        Cells::from_config(&c).unwrap()
    }

    fn l(s: &str) -> String {
        parse_label(s, "root", "lib", &cells()).unwrap().to_string()
    }

    #[test]
    fn labels_resolve_relative_to_the_package() {
        assert_eq!(l(":a"), "root//lib:a");
        assert_eq!(l("//x/y:b"), "root//x/y:b");
        assert_eq!(l("toolchains//:cc"), "toolchains//:cc");
        assert_eq!(l("//:t[docs][index]"), "root//:t[docs][index]");
        assert!(parse_label("nocolon", "root", "", &cells()).is_err());
        assert!(parse_label("//pkg", "root", "", &cells()).is_err());
        assert!(parse_label("nocell//p:x", "root", "", &cells()).is_err());
    }

    #[test]
    fn patterns() {
        let c = cells();
        let p = |s: &str| parse_pattern(s, "root", "sub", &c).unwrap();
        assert_eq!(
            p("//..."),
            Pattern::Recursive {
                cell: "root".into(),
                package: "".into()
            }
        );
        assert_eq!(
            p("toolchains//..."),
            Pattern::Recursive {
                cell: "toolchains".into(),
                package: "".into()
            }
        );
        assert_eq!(
            p("//a/b/..."),
            Pattern::Recursive {
                cell: "root".into(),
                package: "a/b".into()
            }
        );
        assert_eq!(
            p("//a:"),
            Pattern::Package {
                cell: "root".into(),
                package: "a".into()
            }
        );
        match p(":x[s]") {
            Pattern::Target(t) => assert_eq!(t.to_string(), "root//sub:x[s]"),
            other => panic!("{other:?}"),
        }
        let e = parse_pattern("//tests:...", "root", "", &c)
            .unwrap_err()
            .to_string();
        assert!(e.contains("Target name must not be equal to `...`"), "{e}");
    }
}
