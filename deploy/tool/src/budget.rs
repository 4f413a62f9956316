//! A device's resource bounds for the partitioner: `max_util` (at most this fraction of each
//! resource, FINN+'s `max_utilization`) and `min_util` (at least this fraction, the
//! partitioner's lower bound: a card given a floor is never left idle by the plan).

use std::collections::BTreeMap;
use std::ops::Range;

use anyhow::Result;
use toml::Spanned;

use crate::deployment::{Number, DEFAULT_MAX_UTIL, RESOURCES};
use crate::diag::Source;

/// A `{ LUT = 0.8, ... }` table as the description gives it.
pub type Table = Spanned<BTreeMap<String, Number>>;

/// Both bounds, every resource of [`RESOURCES`] present, with where each was given (the
/// device's line when it was not).
#[derive(Clone, Debug)]
pub struct Bounds {
    pub max: BTreeMap<String, f64>,
    pub max_span: Range<usize>,
    pub min: BTreeMap<String, f64>,
    pub min_span: Range<usize>,
}

/// The bounds of one device (or of every generated one): the fractions given, the rest at
/// their defaults (max 0.8, min 0), and no floor above its cap (the partitioner would find
/// no plan; this names the line instead).
pub fn parse(
    src: &Source,
    device: &str,
    max: Option<&Table>,
    min: Option<&Table>,
    fallback_span: Range<usize>,
) -> Result<Bounds> {
    let b = Bounds {
        max: fractions(src, "max_util", max, DEFAULT_MAX_UTIL)?,
        max_span: max.map(|m| m.span()).unwrap_or(fallback_span.clone()),
        min: fractions(src, "min_util", min, 0.0)?,
        min_span: min.map(|m| m.span()).unwrap_or(fallback_span),
    };
    for r in RESOURCES {
        let (lo, hi) = (b.min[r], b.max[r]);
        if lo > hi {
            return Err(src.at(
                &b.min_span,
                format!(
                    "device {device}: min_util {r} = {lo} is above its max_util {r} = {hi}; \
                     no plan can use more than the cap and less than the floor: lower min_util \
                     or raise max_util"
                ),
            ));
        }
    }
    Ok(b)
}

fn fractions(
    src: &Source,
    key: &str,
    m: Option<&Table>,
    default: f64,
) -> Result<BTreeMap<String, f64>> {
    let mut out: BTreeMap<String, f64> =
        RESOURCES.iter().map(|r| (r.to_string(), default)).collect();
    if let Some(m) = m {
        for (k, v) in m.get_ref() {
            if !RESOURCES.contains(&k.as_str()) {
                return Err(src.at(
                    &m.span(),
                    format!(
                        "{key} names '{k}'; the resources are {}",
                        RESOURCES.join(", ")
                    ),
                ));
            }
            let f = v.get();
            if !(0.0..=1.0).contains(&f) {
                return Err(src.at(
                    &m.span(),
                    format!("{key} {k} = {f} is not a fraction in 0..1"),
                ));
            }
            out.insert(k.clone(), f);
        }
    }
    Ok(out)
}
