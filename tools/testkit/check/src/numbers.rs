//! Arithmetic the shell cannot do on `date +%s.%N` times and other decimals: differences,
//! ratios and thresholds, printed with a fixed number of decimals.

use crate::Error;

fn number(what: &str, text: &str) -> Result<f64, Error> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| Error::Bad(format!("{what}: {text:?} is not a number")))
}

/// The decimals argument (default 1).
fn digits(arg: Option<&String>) -> Result<usize, Error> {
    match arg {
        None => Ok(1),
        Some(d) => d
            .parse()
            .ok()
            .filter(|&d: &usize| d <= 9)
            .ok_or_else(|| Error::Bad(format!("DIGITS: {d:?}: give 0 to 9 decimals"))),
    }
}

/// `elapsed T0 T1 [DIGITS]`: T1 - T0 (seconds, e.g. two `date +%s.%N`).
pub fn elapsed(t0: &str, t1: &str, d: Option<&String>) -> Result<String, Error> {
    let (a, b) = (number("T0", t0)?, number("T1", t1)?);
    Ok(format!("{:.*}", digits(d)?, b - a))
}

/// `ratio A B [DIGITS]`: A / B.
pub fn ratio(a: &str, b: &str, d: Option<&String>) -> Result<String, Error> {
    let (a, b) = (number("A", a)?, number("B", b)?);
    if b == 0.0 {
        return Err(Error::Bad("ratio: B is 0".to_string()));
    }
    Ok(format!("{:.*}", digits(d)?, a / b))
}

/// `below X LIMIT`: succeeds when X < LIMIT, prints nothing.
pub fn below(x: &str, limit: &str) -> Result<String, Error> {
    let (v, l) = (number("X", x)?, number("LIMIT", limit)?);
    if v < l {
        Ok(String::new())
    } else {
        Err(Error::Failed(vec![format!("{x} is not below {limit}")]))
    }
}
