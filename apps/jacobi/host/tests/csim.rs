//! C simulation of the jacobi kernel against the whole-grid reference: one instance per card
//! of a ring, each on its own thread, loaded from the kernel's C-simulation library
//! (JACOBI_LIB, built by hls_kernel) through af_sim_abi.h as the simulated devices load it,
//! their halo streams joined by bounded FIFOs of exactly one row, the least the kernel's
//! send-before-read exchange needs (jacobi.cpp). The slabs, stacked, must equal
//! `reference::run` on the whole grid bit for bit.

use std::ffi::CString;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fpga_device::sim::hls::{self, AfArg, AfStream, HlsLibrary, StreamEnd};
use fpga_device::sim::stream::StreamFifo;
use jacobi_host::{grid, layout, reference};

fn library() -> Arc<HlsLibrary> {
    let path = std::env::var("JACOBI_LIB").expect(
        "JACOBI_LIB: the jacobi kernel's C-simulation library (./forge test //apps/jacobi:tests)",
    );
    // project-relative (the rule's env_files) or absolute; tests run in the crate's directory
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../..")
        .join(path);
    Arc::new(HlsLibrary::load(&path).unwrap())
}

fn scalar(name: &CString, v: u64) -> AfArg {
    AfArg {
        name: name.as_ptr(),
        kind: hls::AF_ARG_SCALAR,
        scalar: v,
        mem: std::ptr::null_mut(),
        mem_bytes: 0,
        stream: AfStream {
            ctx: std::ptr::null_mut(),
            read: None,
            write: None,
        },
    }
}

/// Runs one kernel instance over `mem` with its four streams; the kernel's error if any.
fn run_card(
    lib: &HlsLibrary,
    mem: &mut [u8],
    rows: u32,
    cols: u32,
    iterations: u32,
    streams: [(&str, Arc<StreamFifo>); 4],
) -> anyhow::Result<()> {
    let names: Vec<CString> = ["grid", "rows", "cols", "iterations"]
        .iter()
        .chain(streams.iter().map(|(n, _)| n))
        .map(|n| CString::new(*n).unwrap())
        .collect();
    let ends: Vec<Box<StreamEnd>> = streams
        .iter()
        .map(|(_, f)| {
            Box::new(StreamEnd {
                fifo: f.clone(),
                timeout: Duration::from_secs(20),
                error: Mutex::new(None),
            })
        })
        .collect();
    let mut args = vec![
        AfArg {
            name: names[0].as_ptr(),
            kind: hls::AF_ARG_MEMORY,
            scalar: 0,
            mem: mem.as_mut_ptr().cast(),
            mem_bytes: mem.len() as u64,
            stream: AfStream {
                ctx: std::ptr::null_mut(),
                read: None,
                write: None,
            },
        },
        scalar(&names[1], rows as u64),
        scalar(&names[2], cols as u64),
        scalar(&names[3], iterations as u64),
    ];
    for (i, end) in ends.iter().enumerate() {
        args.push(AfArg {
            name: names[4 + i].as_ptr(),
            kind: hls::AF_ARG_STREAM,
            scalar: 0,
            mem: std::ptr::null_mut(),
            mem_bytes: 0,
            stream: AfStream {
                ctx: (&**end as *const StreamEnd) as *mut _,
                read: Some(hls::stream_read),
                write: Some(hls::stream_write),
            },
        });
    }
    lib.run(&args)
}

/// `cards` kernel instances in a ring, each on `rows` x `cols`, for `iterations`; the
/// stacked slabs after the run and the FIFOs (all of them, to check they were drained).
fn ring(
    lib: &Arc<HlsLibrary>,
    cards: usize,
    rows: u32,
    cols: u32,
    iterations: u32,
    depth: usize,
) -> (Vec<u32>, Vec<Arc<StreamFifo>>) {
    // south[k]: card k's south_out -> card k+1's north_in; north[k]: card k's north_out ->
    // card k-1's south_in
    let fifo = |what: &str, k: usize| Arc::new(StreamFifo::new(format!("{what}{k}"), depth));
    let south: Vec<_> = (0..cards).map(|k| fifo("south", k)).collect();
    let north: Vec<_> = (0..cards).map(|k| fifo("north", k)).collect();
    let threads: Vec<_> = (0..cards)
        .map(|k| {
            let lib = lib.clone();
            let mut mem = layout::to_bytes(&grid::slab(k, cards, rows as usize, cols as usize));
            let streams = [
                ("north_out", north[k].clone()),
                ("north_in", south[(k + cards - 1) % cards].clone()),
                ("south_out", south[k].clone()),
                ("south_in", north[(k + 1) % cards].clone()),
            ];
            std::thread::spawn(move || {
                run_card(&lib, &mut mem, rows, cols, iterations, streams)
                    .map(|_| layout::from_bytes(&mem))
            })
        })
        .collect();
    let mut all = Vec::new();
    for (k, t) in threads.into_iter().enumerate() {
        all.extend(
            t.join()
                .unwrap()
                .unwrap_or_else(|e| panic!("card {k}: {e:#}")),
        );
    }
    (all, south.into_iter().chain(north).collect())
}

fn check(cards: usize, rows: u32, cols: u32, iterations: u32) {
    let lib = library();
    let words = (cols / layout::Layout::of_kernel().unwrap().cells_per_word()) as usize;
    let (got, fifos) = ring(&lib, cards, rows, cols, iterations, words);
    let total = cards * rows as usize;
    let want = reference::run(
        &grid::whole(total, cols as usize),
        total,
        cols as usize,
        iterations,
    );
    assert_eq!(got.len(), want.len());
    let differ = (0..want.len()).filter(|&i| got[i] != want[i]).count();
    assert_eq!(
        differ, 0,
        "{cards} cards x {rows} x {cols}, {iterations} iterations: {differ} cells differ"
    );
    // the result moved away from the start (the test would not notice a kernel doing nothing)
    assert_ne!(want, grid::whole(total, cols as usize));
    assert!(
        fifos.iter().all(|f| f.is_empty()),
        "a halo row was left unread"
    );
}

#[test]
fn four_cards_three_rows_two_words() {
    check(4, 3, 32, 5);
}

#[test]
fn four_cards_one_row_each() {
    // every row is both a card's first and last: the halos are all it sees vertically
    check(4, 1, 16, 7);
}

#[test]
fn three_cards_wider_slabs() {
    check(3, 6, 48, 4);
}

#[test]
fn one_card_is_its_own_neighbour() {
    check(1, 5, 32, 3);
}

#[test]
fn sizes_the_kernel_cannot_take_leave_the_slab_untouched() {
    let lib = library();
    let fifo = || Arc::new(StreamFifo::new("x", 4));
    let too_wide = layout::Layout::of_kernel().unwrap().max_cols + 16;
    for (rows, cols) in [(0, 16), (2, 24), (2, 0), (2, too_wide)] {
        let before = layout::to_bytes(&grid::slab(0, 1, 2, 32));
        let mut mem = before.clone();
        let streams = [
            ("north_out", fifo()),
            ("north_in", fifo()),
            ("south_out", fifo()),
            ("south_in", fifo()),
        ];
        let sent: Vec<_> = [streams[0].1.clone(), streams[2].1.clone()].into();
        run_card(&lib, &mut mem, rows, cols, 3, streams).unwrap();
        assert_eq!(mem, before, "rows {rows} cols {cols}");
        assert!(
            sent.iter().all(|f| f.is_empty()),
            "rows {rows} cols {cols}: sent a beat"
        );
    }
}
