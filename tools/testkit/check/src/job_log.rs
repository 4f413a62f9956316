//! The output of a deployment's job (its `local` job script under Slurm, host/driver's
//! lines): the checks the Slurm tests share, each finding named by file and line.
//!
//! The lines read, as host/driver prints them: `== fpga0 (rank 0, DEVICE)` opens a rank's
//! `status` report, `   CORE_STATUS     0x11ff (gt_powergood 0xf, ...)` is a link end up, `   ..._OVERFLOW_COUNT  N`
//! counts words lost at a full FIFO; `link A->B: TX .. beats, RX .. beats, ..., overflow N`
//! is `infer`'s per-link line; the job script's own first line is
//! `job ID: N rank(s) on NODELIST: COMMAND`; Open MPI 4.1's map (rmaps_base_display_map)
//! has `Data for node: NAME ...` followed by its `Process rank: R` lines.

use std::collections::BTreeMap;

use crate::{read, Error};

/// CORE_STATUS of a link end whose channel and lanes are up (AuroraFlow's register map).
pub const CORE_STATUS_UP: &str = "0x11ff";

/// The log's lines, numbered from 1.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l))
}

/// A line reporting an error: it starts with `error` or says `: error`.
fn is_error(line: &str) -> bool {
    line.starts_with("error") || line.contains(": error")
}

/// The count after `OVERFLOW_COUNT` on a register line, if the line is one.
fn overflow_count(line: &str) -> Option<u64> {
    let (_, rest) = line.split_once("OVERFLOW_COUNT")?;
    rest.split_whitespace().next()?.parse().ok()
}

fn count(what: &str, text: &str) -> Result<usize, Error> {
    text.parse()
        .map_err(|_| Error::Bad(format!("{what}: {text:?} is not a count")))
}

/// `job-status LOG RANKS LINKS`: a `status` job: every rank 0..RANKS printed its report once,
/// 2 x LINKS link ends report CORE_STATUS 0x11ff, no overflow counter above 0, no error line.
pub fn status(path: &str, ranks: &str, links: &str) -> Result<String, Error> {
    let (ranks, links) = (count("RANKS", ranks)?, count("LINKS", links)?);
    let text = read(path)?;
    let mut found = Vec::new();
    let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
    let mut up = 0;
    for (n, line) in lines(&text) {
        if let Some(rank) = report_rank(line) {
            if rank >= ranks {
                found.push(format!(
                    "{path}:{n}: rank {rank} reported; the job has {ranks} rank(s)"
                ));
            } else if let Some(first) = seen.insert(rank, n) {
                found.push(format!(
                    "{path}:{n}: rank {rank} reported again (first at line {first})"
                ));
            }
        }
        // the register's value, then its fields decoded in parentheses
        if let Some(v) = line.trim_start().strip_prefix("CORE_STATUS ") {
            if v.split_whitespace().next() == Some(CORE_STATUS_UP) {
                up += 1;
            } else {
                found.push(format!(
                    "{path}:{n}: a link end not up: CORE_STATUS {}",
                    v.trim()
                ));
            }
        }
        if overflow_count(line).is_some_and(|c| c > 0) {
            found.push(format!("{path}:{n}: lost words: {}", line.trim()));
        }
        if is_error(line) {
            found.push(format!("{path}:{n}: an error: {line}"));
        }
    }
    for rank in (0..ranks).filter(|r| !seen.contains_key(r)) {
        found.push(format!(
            "{path}: rank {rank} printed no report (no '== <device> (rank {rank}, ...' line)"
        ));
    }
    if up != 2 * links {
        found.push(format!(
            "{path}: {up} link end(s) report CORE_STATUS {CORE_STATUS_UP}, want {} ({links} link(s), two ends each)",
            2 * links
        ));
    }
    if !found.is_empty() {
        return Err(Error::Failed(found));
    }
    Ok(format!(
        "{ranks} of {ranks} rank(s) reported, {up} link ends up, no overflow, no error"
    ))
}

/// The rank of a `== DEVICE (rank R, ...)` line.
fn report_rank(line: &str) -> Option<usize> {
    let rest = line.strip_prefix("== ")?;
    let (_, after) = rest.split_once(" (rank ")?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// `job-links LOG`: an `infer` job: at least one `link ...` line, each with overflow 0, and
/// no error line.
pub fn links(path: &str) -> Result<String, Error> {
    let text = read(path)?;
    let mut found = Vec::new();
    let mut clean = 0;
    for (n, line) in lines(&text) {
        if let Some(count) = line
            .strip_prefix("link ")
            .and_then(|l| l.rsplit_once(", overflow "))
            .and_then(|(_, c)| c.parse::<u64>().ok())
        {
            if count == 0 {
                clean += 1;
            } else {
                found.push(format!("{path}:{n}: lost words: {line}"));
            }
        }
        if is_error(line) {
            found.push(format!("{path}:{n}: an error: {line}"));
        }
    }
    if clean == 0 && found.is_empty() {
        found.push(format!(
            "{path}: no 'link ...: ..., overflow N' line: the run printed no link counters"
        ));
    }
    if !found.is_empty() {
        return Err(Error::Failed(found));
    }
    Ok(format!("{clean} link(s), overflow 0 on each, no error"))
}

/// `job-nodes LOG`: the NODELIST of the job script's `job ID: N rank(s) on NODELIST: ...`
/// line (Slurm's compressed form; `scontrol show hostnames` expands it).
pub fn nodes(path: &str) -> Result<String, Error> {
    let text = read(path)?;
    for (_, line) in lines(&text) {
        let Some(rest) = line.strip_prefix("job ") else {
            continue;
        };
        let Some((_, after)) = rest.split_once(" rank(s) on ") else {
            continue;
        };
        if let Some((list, _)) = after.split_once(": ") {
            return Ok(list.to_string());
        }
    }
    Err(Error::Failed(vec![format!(
        "{path}: no 'job ID: N rank(s) on NODELIST: ...' line (the job script's first line)"
    )]))
}

/// `mpi-map LOG`: Open MPI's map of ranks to nodes, one `RANK NODE` line per rank.
pub fn mpi_map(path: &str) -> Result<String, Error> {
    let text = read(path)?;
    let mut node: Option<&str> = None;
    let mut placed: BTreeMap<u64, &str> = BTreeMap::new();
    for (n, line) in lines(&text) {
        if let Some((_, rest)) = line.split_once("Data for node: ") {
            node = rest.split_whitespace().next();
        }
        if let Some((_, rest)) = line.split_once("Process rank: ") {
            let rank = rest.split_whitespace().next().and_then(|r| r.parse().ok());
            match (rank, node) {
                (Some(r), Some(host)) => {
                    placed.insert(r, host);
                }
                _ => {
                    return Err(Error::Bad(format!(
                        "{path}:{n}: a 'Process rank:' line without a rank or before any 'Data for node:' line"
                    )))
                }
            }
        }
    }
    if placed.is_empty() {
        return Err(Error::Failed(vec![format!(
            "{path}: no map of Open MPI (set OMPI_MCA_rmaps_base_display_map=1 for the job)"
        )]));
    }
    let lines: Vec<String> = placed.iter().map(|(r, h)| format!("{r} {h}")).collect();
    Ok(lines.join("\n"))
}
