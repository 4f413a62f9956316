//! A test either runs or fails: `forge test` fails a test that exits 0 but printed a
//! `SKIPPED` line, unless the line names a tool the run's `FORGE_ALLOW_MISSING` opt-out
//! allows (`SKIPPED (FORGE_ALLOW_MISSING=<tool>): ...`, see the forge_allow_missing crate).
//! With `CI` set the opt-out is ignored, so CI never passes a test that did not run.

use forge_allow_missing::{parse, skip_line_allowed, VAR};

/// The opt-out of this `forge test` run: what `FORGE_ALLOW_MISSING` names, or nothing
/// under CI. Tests get the variable only when this is not empty.
pub fn opt_out_in_force() -> Vec<String> {
    let Ok(value) = std::env::var(VAR) else {
        return Vec::new();
    };
    let tools = parse(&value);
    if !tools.is_empty() && std::env::var_os("CI").is_some() {
        eprintln!("forge: {VAR}={value} is ignored because CI is set: in CI every test runs");
        return Vec::new();
    }
    tools
}

/// The first `SKIPPED` line of a test's output that `allowed` does not cover.
pub fn unallowed_skip(stdout: &[u8], stderr: &[u8], allowed: &[String]) -> Option<String> {
    [stdout, stderr]
        .into_iter()
        .flat_map(|out| {
            String::from_utf8_lossy(out)
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .find(|line| skip_line_allowed(line, allowed) == Some(false))
}

/// The failure detail of a test that printed `line`.
pub fn failure_detail(line: &str) -> String {
    format!(
        "printed `{}`: a test that did not run fails (install what it needs, or opt out with \
         {VAR}=<tool> outside CI)",
        line.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_skips_the_opt_out_does_not_cover() {
        let allowed = vec!["bwrap".to_string()];
        let out = b"running 3 tests\nSKIPPED (FORGE_ALLOW_MISSING=bwrap): no bwrap\n";
        assert_eq!(unallowed_skip(out, b"", &allowed), None);
        let err = b"x\nSKIPPED: nix-instantiate is not installed\n";
        assert_eq!(
            unallowed_skip(out, err, &allowed).as_deref(),
            Some("SKIPPED: nix-instantiate is not installed")
        );
        let err = b"SKIPPED (FORGE_ALLOW_MISSING=buildgrid): no bgd\n";
        assert!(unallowed_skip(b"", err, &allowed).is_some());
        assert_eq!(unallowed_skip(b"all 3 passed\n", b"", &[]), None);
    }
}
