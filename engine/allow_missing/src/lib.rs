//! What a test does when a tool the project requires is missing: it FAILS, unless the person
//! running it named that tool in `FORGE_ALLOW_MISSING` (comma-separated, e.g.
//! `FORGE_ALLOW_MISSING=buildgrid,bwrap`). Then it prints one line
//!
//! ```text
//! SKIPPED (FORGE_ALLOW_MISSING=bwrap): bubblewrap does not run here (...)
//! ```
//!
//! and returns. `forge test` fails every test that prints a `SKIPPED` line not covered by the
//! opt-out (see [`skip_line_allowed`]), and ignores the opt-out when `CI` is set, so CI runs
//! everything or fails.

use std::io::Write;

/// The environment variable of the opt-out.
pub const VAR: &str = "FORGE_ALLOW_MISSING";

/// The tools a test may be allowed to miss, with what provides them.
pub const TOOLS: &[(&str, &str)] = &[
    (
        "buildgrid",
        "BuildGrid's `bgd` (tools/bootstrap/python/buildgrid, made by `./forge`; or set FORGE_BGD)",
    ),
    (
        "bwrap",
        "bubblewrap (tools/bootstrap/apt.txt; user namespaces must be allowed)",
    ),
    ("openssl", "the openssl CLI (tools/bootstrap/apt.txt)"),
    (
        "host-network",
        "a network interface besides loopback (the test checks the sandbox hides it)",
    ),
];

/// The names `value` (a `FORGE_ALLOW_MISSING` value) allows.
pub fn parse(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether this process may go without `tool`.
pub fn allowed(tool: &str) -> bool {
    std::env::var(VAR).is_ok_and(|v| parse(&v).iter().any(|t| t == tool))
}

/// The `SKIPPED` line a test prints when it goes without `tool`.
pub fn skip_line(tool: &str, why: &str) -> String {
    format!("SKIPPED ({VAR}={tool}): {why}")
}

/// Whether a line of a test's output is a `SKIPPED` line, and if so whether `allowed` (the
/// opt-out in force) covers it. `None`: not a SKIPPED line.
pub fn skip_line_allowed(line: &str, allowed: &[String]) -> Option<bool> {
    let rest = line.trim_start().strip_prefix("SKIPPED")?;
    let named = rest
        .strip_prefix(" (")
        .and_then(|r| r.strip_prefix(VAR))
        .and_then(|r| r.strip_prefix('='))
        .and_then(|r| r.split_once(')'))
        .map(|(tool, _)| tool);
    Some(named.is_some_and(|tool| allowed.iter().any(|a| a == tool)))
}

/// Call where `tool` turned out to be missing. Panics (the test fails) with `why` and how to
/// get the tool, unless the opt-out names it; then prints the SKIPPED line straight to the
/// process's stderr (past the test harness's capture, so `forge test` sees it) and returns, so
/// the caller can return too.
pub fn missing(tool: &str, why: &str) {
    let provider = TOOLS
        .iter()
        .find(|(name, _)| *name == tool)
        .map(|(_, p)| *p)
        .unwrap_or_else(|| panic!("{tool:?} is not one of the tools {VAR} knows"));
    if !allowed(tool) {
        panic!(
            "{why}. This test needs {provider}. Install it, or set {VAR}={tool} to skip \
             (never in CI)."
        );
    }
    let _ = writeln!(std::io::stderr(), "{}", skip_line(tool, why));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_a_comma_list() {
        assert_eq!(
            parse(" buildgrid, bwrap ,,"),
            names(&["buildgrid", "bwrap"])
        );
        assert!(parse("").is_empty());
    }

    #[test]
    fn only_named_skips_are_allowed() {
        let allowed = names(&["bwrap"]);
        let line = skip_line("bwrap", "bubblewrap does not run");
        assert_eq!(skip_line_allowed(&line, &allowed), Some(true));
        let other = skip_line("buildgrid", "no bgd");
        assert_eq!(skip_line_allowed(&other, &allowed), Some(false));
        assert_eq!(
            skip_line_allowed("SKIPPED: nix-instantiate is not installed", &allowed),
            Some(false)
        );
        assert_eq!(
            skip_line_allowed("  SKIPPED (FORGE_ALLOW_MISSING=bwrap", &allowed),
            Some(false)
        );
        assert_eq!(skip_line_allowed("all good", &allowed), None);
        assert_eq!(skip_line_allowed("test x ... SKIPPED", &allowed), None);
    }
}
