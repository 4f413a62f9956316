//! `forge test --include/--exclude/--always-exclude`: which tests run, by the `labels` of their
//! `ExternalRunnerTestInfo`, with buck2's rules (conformance/test): the `--include` patterns
//! are tried in order and the first that names one of the test's labels decides (`!label`
//! excludes); then any `--exclude` label excludes; a test no pattern names runs only when
//! there are no `--include` patterns. `--always-exclude` puts `--exclude` first. Filtered
//! tests are not built (buck2's default, without `--build-filtered`).

#[derive(Clone, Debug, Default)]
pub struct LabelFilter {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub always_exclude: bool,
}

impl LabelFilter {
    /// Whether a test with `labels` is left out of the run.
    pub fn excludes(&self, labels: &[String]) -> bool {
        let has = |l: &str| labels.iter().any(|x| x == l);
        let excluded = self.exclude.iter().any(|l| has(l));
        if self.always_exclude && excluded {
            return true;
        }
        for pattern in &self.include {
            match pattern.strip_prefix('!') {
                Some(label) if has(label) => return true,
                None if has(pattern) => return false,
                _ => {}
            }
        }
        excluded || !self.include.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(include: &[&str], exclude: &[&str], always: bool) -> LabelFilter {
        LabelFilter {
            include: include.iter().map(|s| s.to_string()).collect(),
            exclude: exclude.iter().map(|s| s.to_string()).collect(),
            always_exclude: always,
        }
    }

    fn runs(f: &LabelFilter, labels: &[&str]) -> bool {
        let labels: Vec<String> = labels.iter().map(|s| s.to_string()).collect();
        !f.excludes(&labels)
    }

    // The tests of conformance/test: `fails` [soak, slow], `env_check` [unit], `plain` [],
    // under each flag combination upstream buck2 was run with there.
    const SOAK: &[&str] = &["soak", "slow"];
    const UNIT: &[&str] = &["unit"];
    const PLAIN: &[&str] = &[];

    #[test]
    fn no_flags_run_everything() {
        let f = LabelFilter::default();
        assert!(runs(&f, SOAK) && runs(&f, UNIT) && runs(&f, PLAIN));
    }

    #[test]
    fn exclude_leaves_out_the_label() {
        let f = filter(&[], &["soak"], false);
        assert!(!runs(&f, SOAK) && runs(&f, UNIT) && runs(&f, PLAIN));
    }

    #[test]
    fn include_runs_only_the_label() {
        let f = filter(&["soak"], &[], false);
        assert!(runs(&f, SOAK) && !runs(&f, UNIT) && !runs(&f, PLAIN));
        let f = filter(&["soak", "unit"], &[], false);
        assert!(runs(&f, SOAK) && runs(&f, UNIT) && !runs(&f, PLAIN));
    }

    #[test]
    fn a_negated_include_excludes_and_includes_nothing_else() {
        let f = filter(&["!soak"], &[], false);
        assert!(!runs(&f, SOAK) && !runs(&f, UNIT) && !runs(&f, PLAIN));
        // first match wins: `!slow` before `soak`
        let f = filter(&["!slow", "soak"], &[], false);
        assert!(!runs(&f, SOAK));
    }

    #[test]
    fn include_wins_over_exclude_unless_always_exclude() {
        let f = filter(&["soak"], &["slow"], false);
        assert!(runs(&f, SOAK) && !runs(&f, UNIT));
        let f = filter(&["soak"], &["slow"], true);
        assert!(!runs(&f, SOAK));
        let f = filter(&["unit"], &["soak"], false);
        assert!(!runs(&f, SOAK) && runs(&f, UNIT) && !runs(&f, PLAIN));
    }
}
