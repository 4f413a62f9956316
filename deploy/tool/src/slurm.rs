//! The `[slurm]` table of a description: the job's time limit, account, constraint and
//! modules, each held to what sbatch and `ml` accept (`fields`). What a cluster asks by
//! default (its partition, modules, ...) is its cluster file's (cluster_file).

use anyhow::Result;
use serde::Deserialize;
use toml::Spanned;

use crate::diag::Source;
use crate::fields;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSlurm {
    time: Option<Spanned<String>>,
    account: Option<Spanned<String>>,
    constraint: Option<Spanned<String>>,
    modules: Option<Vec<Spanned<String>>>,
}

#[derive(Clone, Debug, Default)]
pub struct Slurm {
    pub time: String,
    pub account: Option<String>,
    pub constraint: Option<String>,
    /// The description's modules; None: the cluster's (its file's `job.modules`).
    pub modules: Option<Vec<String>>,
}

/// The job's time limit when the description gives none.
pub const DEFAULT_TIME: &str = "00:30:00";

/// The [slurm] table, every field held to what sbatch and `ml` accept (`fields`).
pub(crate) fn parse_slurm(src: &Source, s: RawSlurm) -> Result<Slurm> {
    let checked = |f: &Spanned<String>, what: &str, why: Option<String>| match why {
        Some(why) => Err(src.at(&f.span(), format!("slurm {what} {:?} {why}", f.get_ref()))),
        None => Ok(f.get_ref().clone()),
    };
    let time = match &s.time {
        Some(t) => checked(t, "time", fields::slurm_time(t.get_ref()))?,
        None => DEFAULT_TIME.into(),
    };
    let account = s
        .account
        .as_ref()
        .map(|a| checked(a, "account", fields::slurm_account(a.get_ref())))
        .transpose()?;
    let constraint = s
        .constraint
        .as_ref()
        .map(|c| checked(c, "constraint", fields::slurm_constraint(c.get_ref())))
        .transpose()?;
    let modules = match &s.modules {
        Some(ms) => Some(
            ms.iter()
                .map(|m| checked(m, "module", fields::module_name(m.get_ref())))
                .collect::<Result<Vec<_>>>()?,
        ),
        None => None,
    };
    Ok(Slurm {
        time,
        account,
        constraint,
        modules,
    })
}
