//! `run`: one rank's part (its slab through its card's jacobi CU) and rank 0's check of the
//! gathered grid against the whole-grid reference.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use auroraforge_host::{gather, idle, rank_lines, Arg, Session};
use jacobi_host::{grid, layout, model, reference};
use mpi::collective::Root;
use mpi::topology::{Communicator, SimpleCommunicator};
use serde_json::{Map, Value};
use xclbin::DeviceDescription;

use crate::report::{self, Card, Outcome};

const USAGE: &str = "jacobi-host run --rows R --cols C --iterations N [--json FILE]";

/// How long a kernel run may take: the links' own stall timeout ends a run that hangs.
const RUN_LIMIT: Duration = Duration::from_secs(600);

pub struct Args {
    pub rows: u32,
    pub cols: u32,
    pub iterations: u32,
    pub json: Option<PathBuf>,
}

fn parse(words: Vec<String>) -> Result<Args> {
    let mut it = words.into_iter();
    match it.next().as_deref() {
        Some("run") => {}
        Some(other) => bail!("unknown command {other}: {USAGE}"),
        None => bail!("no command: {USAGE}"),
    }
    let (mut rows, mut cols, mut iterations, mut json) = (None, None, None, None);
    while let Some(w) = it.next() {
        let mut value = |name: &str| -> Result<u32> {
            let v = it
                .next()
                .with_context(|| format!("{name} needs a value: {USAGE}"))?;
            v.parse()
                .with_context(|| format!("{name} {v}: not a whole number"))
        };
        match w.as_str() {
            "--rows" => rows = Some(value("--rows")?),
            "--cols" => cols = Some(value("--cols")?),
            "--iterations" => iterations = Some(value("--iterations")?),
            "--json" => json = Some(PathBuf::from(it.next().context("--json needs a file")?)),
            other => bail!("unknown argument {other}: {USAGE}"),
        }
    }
    Ok(Args {
        rows: rows.with_context(|| format!("--rows is missing: {USAGE}"))?,
        cols: cols.with_context(|| format!("--cols is missing: {USAGE}"))?,
        iterations: iterations.with_context(|| format!("--iterations is missing: {USAGE}"))?,
        json,
    })
}

/// The CU of this card that runs the kernel `jacobi`.
fn jacobi_cu(d: &DeviceDescription) -> Result<String> {
    let cus: Vec<&str> = d
        .kernels
        .iter()
        .filter(|k| k.kernel == "jacobi")
        .map(|k| k.cu.as_str())
        .collect();
    match cus[..] {
        [cu] => Ok(cu.to_string()),
        _ => bail!(
            "device {}: {} CUs of kernel jacobi (one per card expected; is this the jacobi deployment?)",
            d.device,
            cus.len()
        ),
    }
}

/// The parameters of this card's AuroraFlow kernel and its longest cable: what the halo
/// rows cross.
fn ring_link(d: &DeviceDescription) -> Result<(Map<String, Value>, f64)> {
    let link = d
        .links
        .iter()
        .max_by(|a, b| a.cable_m.total_cmp(&b.cable_m))
        .with_context(|| format!("device {}: no cabled AuroraFlow CU", d.device))?;
    let params = d
        .kernel(&link.cu)
        .map(|k| k.params.clone())
        .with_context(|| {
            format!(
                "device {}: link CU {} is not among its kernels",
                d.device, link.cu
            )
        })?;
    Ok((params, link.cable_m))
}

/// Every rank's slab bytes, in rank order, on rank 0 (empty on the others).
fn gather_slabs(world: &SimpleCommunicator, mine: &[u8]) -> Vec<u8> {
    let root = world.process_at_rank(0);
    if world.rank() == 0 {
        let mut all = vec![0u8; mine.len() * world.size() as usize];
        mpi::request::scope(|scope| {
            idle::complete(root.immediate_gather_into_root(scope, mine, &mut all[..]))
        });
        all
    } else {
        mpi::request::scope(|scope| idle::complete(root.immediate_gather_into(scope, mine)));
        Vec::new()
    }
}

/// One rank's run; true unless rank 0 found the result differing from the reference.
pub fn main(s: &mut Session, words: Vec<String>) -> Result<bool> {
    let a = parse(words)?;
    let layout = layout::Layout::of_kernel()?;
    layout.check(a.rows, a.cols)?;
    let desc = s.description().clone();
    let cu = jacobi_cu(&desc)?;
    let (link_params, cable_m) = ring_link(&desc)?;
    let buffered = model::link_buffer_bytes(&link_params, cable_m)?;
    if layout.row_bytes(a.cols) > buffered {
        bail!(
            "--cols {}: a row of {} B does not fit the {buffered} B one link direction holds \
             before flow control stops its sender (TX FIFO + RX FIFO up to XOFF); every card \
             sends its rows before it reads, so the ring would stop: use fewer columns",
            a.cols,
            layout.row_bytes(a.cols)
        );
    }
    let (rank, ranks) = (s.rank(), s.ranks());
    let (rows, cols) = (a.rows as usize, a.cols as usize);
    let slab = layout::to_bytes(&grid::slab(rank, ranks, rows, cols));
    let buf = s.alloc(&cu, "grid", slab.len())?;
    s.write(&buf, 0, &slab)?;
    s.reset_link_counters()?;
    // every slab in place and every counter at zero before any card sends
    s.barrier();
    let started = Instant::now();
    let run = s.start(
        &cu,
        &[
            ("grid", Arg::Buffer(&buf)),
            ("rows", Arg::Scalar(a.rows as u64)),
            ("cols", Arg::Scalar(a.cols as u64)),
            ("iterations", Arg::Scalar(a.iterations as u64)),
        ],
    )?;
    // rank 0's reference while the cards compute: no link waits idle for it (the simulated
    // links take a silence longer than --timeout-s for a dead peer, README.md)
    let total_rows = rows * ranks;
    let want = (rank == 0).then(|| {
        reference::run(
            &grid::whole(total_rows, cols),
            total_rows,
            cols,
            a.iterations,
        )
    });
    s.wait(run, RUN_LIMIT)?;
    let wall_s = started.elapsed().as_secs_f64();
    let mut result = vec![0u8; slab.len()];
    s.read(&buf, 0, &mut result)?;
    // every card finished: the counters hold the whole run's traffic
    s.barrier();
    let card = Card::of(s, &desc, &cu, wall_s)?;
    let slabs = gather_slabs(s.world(), &result);
    let cards = gather::to_root(s.world(), serde_json::to_string(&card)?);
    if rank != 0 {
        return Ok(true);
    }
    let cards: Vec<Card> = cards
        .iter()
        .map(|c| serde_json::from_str(c))
        .collect::<Result<_, _>>()?;
    let want = want.context("rank 0 computes the reference")?;
    let got = layout::from_bytes(&slabs);
    let model = model::iteration(
        &layout,
        a.rows,
        a.cols,
        desc.clock_mhz,
        &link_params,
        cable_m,
    )?;
    let outcome = Outcome::new(&a, ranks, &got, &want, cards, model);
    report::print(&outcome);
    if let Some(path) = &a.json {
        report::write_json(path, &outcome)?;
    }
    if !outcome.bit_exact {
        rank_lines::stderr_line(&format!(
            "{}0: error: the grid differs from the whole-grid reference in {} cells",
            rank_lines::ERROR,
            outcome.mismatches
        ));
    }
    Ok(outcome.bit_exact)
}
