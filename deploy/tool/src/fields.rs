//! What a description's text may hold. Its strings end up in shell scripts (`ml`, the host's
//! command line), Slurm directives (`#SBATCH -A ...`), v++ configs, file and target names, so
//! a description shared between users is read as hostile: every string is one line of
//! printable text, and each field is held to what its reader accepts (Slurm's formats, a file
//! name, a C identifier) before anything is derived from it. The scripts quote what they
//! write on top of that (`scripts::quote`).

use std::ops::Range;

use anyhow::Result;
use toml_edit::{ImDocument, Item, Table, Value};

use crate::diag::Source;

/// No key and no string of the file holds a control character (a line break in a Slurm field
/// would start a directive of its own in the job script).
pub fn check_printable(src: &Source) -> Result<()> {
    let doc = ImDocument::parse(src.text.as_str()).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        src.at(&span, e.message())
    })?;
    walk_table(src, doc.as_table(), "")
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn walk_table(src: &Source, t: &Table, path: &str) -> Result<()> {
    for (k, item) in t.iter() {
        let key_span = t.key(k).and_then(|k| k.span());
        let here = join(path, k);
        printable(src, k, key_span.clone(), &here, "key")?;
        walk_item(src, item, &here, key_span)?;
    }
    Ok(())
}

fn walk_item(src: &Source, item: &Item, path: &str, near: Option<Range<usize>>) -> Result<()> {
    match item {
        Item::Value(v) => walk_value(src, v, path, near),
        Item::Table(t) => walk_table(src, t, path),
        Item::ArrayOfTables(a) => {
            for t in a.iter() {
                walk_table(src, t, path)?;
            }
            Ok(())
        }
        Item::None => Ok(()),
    }
}

fn walk_value(src: &Source, v: &Value, path: &str, near: Option<Range<usize>>) -> Result<()> {
    let span = v.span().or(near);
    match v {
        Value::String(s) => printable(src, s.value(), span, path, "value"),
        Value::Array(a) => {
            for x in a.iter() {
                walk_value(src, x, path, span.clone())?;
            }
            Ok(())
        }
        Value::InlineTable(t) => {
            for (k, _) in t.iter() {
                let (key, item) = t.get_key_value(k).expect("iterated key");
                let here = join(path, k);
                printable(src, k, key.span().or(span.clone()), &here, "key")?;
                walk_item(src, item, &here, key.span().or(span.clone()))?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn printable(
    src: &Source,
    text: &str,
    span: Option<Range<usize>>,
    path: &str,
    what: &str,
) -> Result<()> {
    match text.chars().find(|c| c.is_control()) {
        None => Ok(()),
        Some(c) => Err(src.at(
            &span.unwrap_or(0..0),
            format!(
                "the {what} of `{path}` holds the control character U+{:04X} ({}): every key \
                 and string of a deployment is one line of printable text (a line break in a \
                 Slurm field would become a directive of its own in the job script); remove it",
                c as u32,
                c.escape_debug()
            ),
        )),
    }
}

/// Why `name` cannot name the deployment (its targets, its files, the Slurm job), if it
/// cannot: a file and target name of letters, digits, `_`, `-` and `.`, not starting with
/// `.` or `-`, without `..`.
pub fn deployment_name(name: &str) -> Option<String> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
    if name.is_empty() {
        return Some("is empty".into());
    }
    if let Some(c) = name.chars().find(|c| !ok_char(*c)) {
        return Some(format!(
            "holds {:?}, but a deployment's name is a file and target name: letters, digits, `_`, `-` and `.` only",
            c
        ));
    }
    if name.starts_with(['.', '-']) || name.contains("..") {
        return Some(
            "starts with `.` or `-` or holds `..`, which a file name must not (it would name a hidden file, an option or a parent directory)"
                .into(),
        );
    }
    if name.len() > 64 {
        return Some(format!("is {} characters long; at most 64", name.len()));
    }
    None
}

/// Why `name` cannot name a device, if it cannot: it becomes part of compute-unit names
/// (`finn_<device>`), target names and file names, so it is a C identifier.
pub fn device_name(name: &str) -> Option<String> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Some(
            "is not a C identifier (a letter or `_`, then letters, digits and `_`): it becomes part of compute-unit, target and file names"
                .into(),
        );
    }
    if name.len() > 32 {
        return Some(format!("is {} characters long; at most 32", name.len()));
    }
    None
}

/// Why `t` is not a Slurm time limit, if it is not. sbatch(1) of Slurm 22.05 (`--time`):
/// "Acceptable time formats include "minutes", "minutes:seconds", "hours:minutes:seconds",
/// "days-hours", "days-hours:minutes" and "days-hours:minutes:seconds"" ("0": no limit).
/// A field after the first is a clock field: minutes and seconds below 60, hours after days
/// below 24.
pub fn slurm_time(t: &str) -> Option<String> {
    const FORMATS: &str = "one of Slurm's time formats: minutes, minutes:seconds, \
                           hours:minutes:seconds, days-hours, days-hours:minutes, \
                           days-hours:minutes:seconds (e.g. \"00:30:00\" or \"1-12\")";
    let number = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let (days, clock) = match t.split_once('-') {
        Some((d, rest)) => (Some(d), rest),
        None => (None, t),
    };
    let mut parts = Vec::new();
    for p in clock.split(':') {
        match number(p) {
            Some(n) => parts.push(n),
            None => return Some(format!("is not {FORMATS}")),
        }
    }
    let days = match days.map(number) {
        Some(None) => return Some(format!("is not {FORMATS}")),
        Some(Some(d)) => Some(d),
        None => None,
    };
    // (name, value, limit) of each clock field after the first.
    let checks: Vec<(&str, u64, u64)> = match (days.is_some(), parts.as_slice()) {
        (false, [_]) => vec![],
        (false, [_, s]) => vec![("seconds", *s, 60)],
        (false, [_, m, s]) => vec![("minutes", *m, 60), ("seconds", *s, 60)],
        (true, [h]) => vec![("hours", *h, 24)],
        (true, [h, m]) => vec![("hours", *h, 24), ("minutes", *m, 60)],
        (true, [h, m, s]) => vec![("hours", *h, 24), ("minutes", *m, 60), ("seconds", *s, 60)],
        _ => return Some(format!("is not {FORMATS}")),
    };
    for (name, value, limit) in checks {
        if value >= limit {
            return Some(format!("has {name} {value}, which must be below {limit}"));
        }
    }
    None
}

/// Why `account` is not a Slurm account name this tool writes into `#SBATCH -A`, if it is
/// not: letters, digits, `_`, `-` and `.`, starting with a letter or digit (sbatch(1) calls an
/// account "an arbitrary string"; a directive line has no quoting sbatch and a reader agree
/// on, so the name must need none).
pub fn slurm_account(account: &str) -> Option<String> {
    word(account, "_-.", "a Slurm account")
}

/// Why `constraint` is not a Slurm node-feature constraint, if it is not: feature names
/// (letters, digits, `_`, `-`, `.`) joined by sbatch(1)'s operators `&`, `|`, `*` (count),
/// `[ ]` and `( )`, no spaces.
pub fn slurm_constraint(constraint: &str) -> Option<String> {
    let ok = |c: char| c.is_ascii_alphanumeric() || "_-.&|*[]()".contains(c);
    if constraint.is_empty() {
        return Some("is empty".into());
    }
    match constraint.chars().find(|c| !ok(*c)) {
        Some(c) => Some(format!(
            "holds {c:?}: a Slurm constraint is feature names (letters, digits, `_`, `-`, `.`) joined by `&`, `|`, `*`, `[ ]` and `( )`, without spaces"
        )),
        None if constraint.starts_with('-') => {
            Some("starts with `-`, which sbatch would read as an option".into())
        }
        None => None,
    }
}

/// Why `module` is not an environment module name for `ml`, if it is not: `name/version`
/// of letters, digits and `_ - . + /`, starting with a letter or digit (a leading `-` would
/// make `ml` unload the module or read an option).
pub fn module_name(module: &str) -> Option<String> {
    word(module, "_-.+/", "an environment module name")
}

fn word(text: &str, extra: &str, what: &str) -> Option<String> {
    if text.is_empty() {
        return Some("is empty".into());
    }
    if let Some(c) = text
        .chars()
        .find(|c| !c.is_ascii_alphanumeric() && !extra.contains(*c))
    {
        let shown: String = extra.chars().map(|e| format!("`{e}` ")).collect();
        return Some(format!(
            "holds {c:?}: {what} is letters, digits and {}only",
            shown
        ));
    }
    if !text.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Some(format!(
            "starts with {:?}: {what} starts with a letter or digit",
            text.chars().next().unwrap()
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The formats sbatch(1) lists, one example each, and what is not one of them.
    #[test]
    fn slurm_times() {
        for ok in [
            "0",
            "30",
            "30:15",
            "01:30:00",
            "100:00:00",
            "2-12",
            "2-12:30",
            "2-12:30:15",
        ] {
            assert_eq!(slurm_time(ok), None, "{ok}");
        }
        for bad in [
            "",
            "30m",
            "1h",
            "1:2:3:4",
            "-5",
            "1--2",
            "1-2-3",
            "01:60:00",
            "00:00:60",
            "1-24",
            "1-:30",
            " 30",
            "30 ",
            "1.5",
            "+30",
            "UNLIMITED",
        ] {
            assert!(slurm_time(bad).is_some(), "{bad:?} accepted");
        }
    }
}
