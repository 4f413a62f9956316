//! The per-test timeout of `forge test`: `--timeout`, else `[test] timeout` in
//! `.buckconfig`, else none. buck2's `ExternalRunnerTestInfo` has no field for it, so it is a
//! setting of the run rather than of the test. A test that runs longer is reported as
//! `✗ Timeout` with the tail of its output, and its whole process group is killed.

use std::time::Duration;

use anyhow::{bail, Context, Result};

/// `90`, `90s`, `1500ms`, `5m` or `1h`.
pub fn parse(value: &str) -> Result<Duration> {
    let v = value.trim();
    let (num, unit) = match v.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => (&v[..i], &v[i..]),
        None => (v, "s"),
    };
    let n: f64 = num
        .parse()
        .with_context(|| format!("`{value}` is not a duration (write e.g. `90`, `90s`, `5m`)"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        other => bail!("`{value}`: unknown unit `{other}` (use ms, s, m or h)"),
    };
    if !(secs > 0.0 && secs.is_finite()) {
        bail!("`{value}`: a timeout must be positive");
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The timeout in force: the flag wins over the config.
pub fn resolve(flag: Option<&str>, config: Option<String>) -> Result<Option<Duration>> {
    if let Some(f) = flag {
        return parse(f).map(Some).context("in `--timeout`");
    }
    match config {
        Some(c) if !c.trim().is_empty() => parse(&c)
            .map(Some)
            .context("in `[test] timeout` (`.buckconfig` or `-c test.timeout=...`)"),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse("1500ms").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse("5m").unwrap(), Duration::from_secs(300));
        assert!(parse("0").is_err() && parse("5 parsecs").is_err() && parse("x").is_err());
        assert_eq!(
            resolve(Some("2s"), Some("9s".into())).unwrap(),
            Some(Duration::from_secs(2))
        );
        assert_eq!(resolve(None, None).unwrap(), None);
    }
}
