//! The benchmark's CSV (host/driver's `bench --csv`: a header row, then one row per
//! receiving CU and message size; plain values, no quoting): columns that must be 0 in
//! every row, and which host each rank ran on.

use std::collections::BTreeMap;

use crate::{read, Error};

/// A CSV read whole: its header and its rows with their line numbers.
struct Table {
    header: Vec<String>,
    rows: Vec<(usize, Vec<String>)>,
}

fn table(path: &str) -> Result<Table, Error> {
    let text = read(path)?;
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.is_empty());
    let header: Vec<String> = match lines.next() {
        Some((_, h)) => h.split(',').map(str::to_string).collect(),
        None => return Err(Error::Failed(vec![format!("{path}: empty, no header row")])),
    };
    let mut rows = Vec::new();
    for (i, line) in lines {
        let cells: Vec<String> = line.split(',').map(str::to_string).collect();
        if line.contains('"') || cells.len() != header.len() {
            return Err(Error::Bad(format!(
                "{path}:{}: {} cells (want {}, unquoted): not a row of the bench CSV",
                i + 1,
                cells.len(),
                header.len()
            )));
        }
        rows.push((i + 1, cells));
    }
    Ok(Table { header, rows })
}

impl Table {
    fn column(&self, path: &str, name: &str) -> Result<usize, Error> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| Error::Bad(format!("{path}:1: no column {name:?} in the header")))
    }
}

/// `csv-errors FILE [COLUMN...]`: every row has 0 in each COLUMN (default `byte_errors`);
/// a file without rows fails too (nothing was measured).
pub fn errors(path: &str, columns: &[String]) -> Result<String, Error> {
    let default = ["byte_errors".to_string()];
    let columns = if columns.is_empty() {
        &default[..]
    } else {
        columns
    };
    let t = table(path)?;
    let index: Vec<usize> = columns
        .iter()
        .map(|c| t.column(path, c))
        .collect::<Result<_, _>>()?;
    if t.rows.is_empty() {
        return Err(Error::Failed(vec![format!(
            "{path}: no rows after the header"
        )]));
    }
    let mut found = Vec::new();
    for (line, cells) in &t.rows {
        for (c, &i) in columns.iter().zip(&index) {
            if cells[i] != "0" {
                found.push(format!("{path}:{line}: {c} {}, want 0", cells[i]));
            }
        }
    }
    if !found.is_empty() {
        return Err(Error::Failed(found));
    }
    Ok(format!(
        "{} rows, {} 0 in every row",
        t.rows.len(),
        columns.join(" and ")
    ))
}

/// `csv-sum FILE COLUMN`: the sum of an integer column.
pub fn sum(path: &str, column: &str) -> Result<String, Error> {
    let t = table(path)?;
    let i = t.column(path, column)?;
    let mut total: u128 = 0;
    for (line, cells) in &t.rows {
        let v: u128 = cells[i].parse().map_err(|_| {
            Error::Bad(format!(
                "{path}:{line}: {column} {:?} is no count",
                cells[i]
            ))
        })?;
        total += v;
    }
    Ok(total.to_string())
}

/// `csv-hosts FILE`: one line `RANK HOST[ HOST...]` per rank, ranks and hosts sorted: where
/// each rank says it ran (its `hostname` column).
pub fn hosts(path: &str) -> Result<String, Error> {
    let t = table(path)?;
    let (r, h) = (t.column(path, "rank")?, t.column(path, "hostname")?);
    let mut by_rank: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
    for (line, cells) in &t.rows {
        let rank: u64 = cells[r]
            .parse()
            .map_err(|_| Error::Bad(format!("{path}:{line}: rank {:?} is no number", cells[r])))?;
        let hosts = by_rank.entry(rank).or_default();
        if !hosts.contains(&cells[h].as_str()) {
            hosts.push(&cells[h]);
        }
    }
    let lines: Vec<String> = by_rank
        .into_iter()
        .map(|(rank, mut hosts)| {
            hosts.sort_unstable();
            format!("{rank} {}", hosts.join(" "))
        })
        .collect();
    Ok(lines.join("\n"))
}
