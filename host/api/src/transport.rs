//! Emulated Aurora links between ranks, carried over MPI.
//!
//! The link model (RX FIFO, in-flight window, XOFF/XON) lives with the receiving CU; the
//! sending rank ships its words in chunks with synchronous sends (MPI_Issend), and the
//! receiving rank only takes the next chunk once the model accepted the previous one. When
//! XOFF holds the model's TX FIFO full, the upstream rank's send cannot complete: a slow
//! downstream rank stalls its upstream exactly through the flow control, visibly in the
//! receiving CU's NFC counters. Every wait has a deadline; a peer that stops answering ends
//! the run with an error naming the rank and the link.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::idle::Backoff;
use anyhow::{bail, Result};
use fpga_device::sim::aurora_cu::LinkSender;
use fpga_device::sim::link::AuroraLink;
use fpga_device::sim::stream::Beat;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::topology::{Communicator, SimpleCommunicator};

/// Words per MPI message.
const CHUNK_WORDS: usize = 64;
/// Flag byte of a chunk: the message ends with it (the link may drain).
const END_OF_MESSAGE: u8 = 1;
/// Flag byte of a chunk: its last word carries TLAST (a pass-through card ends its packet
/// there, as on a card where the link kernel hands TLAST on).
const TLAST: u8 = 2;
/// Tag of the words for QSFP port `p` of the receiving device; an empty message closes.
pub fn tag(port: u32) -> i32 {
    100 + port as i32
}

/// The sending end: this CU's words to `peer_rank`'s CU on `peer_port`.
pub struct MpiSender {
    pub name: String,
    peer_rank: i32,
    peer_port: u32,
    width: usize,
    timeout: Duration,
    pending: Mutex<Vec<u8>>,
    /// Closed already (by the CU's pump at the end of its stream, or at the end of the
    /// run): the peer stopped listening after the first close.
    closed: AtomicBool,
}

impl MpiSender {
    pub fn new(
        name: String,
        peer_rank: i32,
        peer_port: u32,
        width: usize,
        timeout: Duration,
    ) -> MpiSender {
        MpiSender {
            name,
            peer_rank,
            peer_port,
            width,
            timeout,
            pending: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
        }
    }

    /// `bytes` = flag byte (END_OF_MESSAGE, TLAST) + words; empty = close.
    fn ship(&self, bytes: &[u8]) -> Result<()> {
        let world = SimpleCommunicator::world();
        let peer = world.process_at_rank(self.peer_rank);
        let deadline = Instant::now() + self.timeout;
        let done = mpi::request::scope(|scope| {
            let mut req =
                peer.immediate_synchronous_send_with_tag(scope, bytes, tag(self.peer_port));
            let mut backoff = Backoff::default();
            loop {
                match req.test() {
                    Ok(_) => return true,
                    Err(r) => req = r,
                }
                if Instant::now() >= deadline {
                    // The request cannot be abandoned inside the scope: report and leave.
                    fatal(&format!(
                        "link {}: rank {} stopped taking data for {:?} (dead or hung; check its log)",
                        self.name, self.peer_rank, self.timeout
                    ));
                }
                backoff.pause();
            }
        });
        if !done {
            bail!("link {}: send failed", self.name);
        }
        Ok(())
    }
}

impl LinkSender for MpiSender {
    fn send(&self, beat: Beat) -> Result<()> {
        let mut p = self.pending.lock().unwrap();
        let mut data = beat.data;
        data.resize(self.width, 0);
        if p.is_empty() {
            p.push(0);
        }
        p.extend_from_slice(&data);
        if beat.last {
            // TLAST is the chunk's last word: shipped now, it keeps its place
            p[0] = TLAST | END_OF_MESSAGE;
            let chunk = std::mem::take(&mut *p);
            drop(p);
            self.ship(&chunk)?;
        } else if p.len() > CHUNK_WORDS * self.width {
            let chunk = std::mem::take(&mut *p);
            drop(p);
            self.ship(&chunk)?;
        }
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        let mut chunk = std::mem::take(&mut *self.pending.lock().unwrap());
        if chunk.is_empty() {
            chunk.push(0);
        }
        chunk[0] |= END_OF_MESSAGE;
        self.ship(&chunk)
    }

    fn close(&self) -> Result<()> {
        if self.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        self.flush()?;
        self.ship(&[])
    }
}

/// Prints the error and ends every rank of the run (MPI_Abort), so the others do not wait
/// for their link timeouts or sit in a collective that this rank will never join. Under
/// `mpirun --enable-recovery` an abort is not reflected in mpirun's exit status; the
/// launcher fails the run because this rank (and the ones the abort ended) printed no
/// `done` line.
pub fn fatal(msg: &str) -> ! {
    let world = SimpleCommunicator::world();
    crate::rank_lines::stderr_line(&format!("aurora-host: rank {}: error: {msg}", world.rank()));
    // The first failing thread aborts; others (a link noticing the same dead peer) only
    // add their message and wait for the abort to end the process: concurrent MPI_Abort
    // calls, or MPI calls failing under an abort in progress, would crash instead.
    if ABORTING.swap(true, Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
    world.abort(2)
}

static ABORTING: AtomicBool = AtomicBool::new(false);

/// A failure every rank has agreed on and reached the end of the run with (a refused
/// input): the ranks finish together and the reporting rank then exits with an error, so
/// the others' `done` lines are not cut off.
#[derive(Debug)]
pub struct Agreed(pub String);

impl std::fmt::Display for Agreed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Agreed {}

/// Ends MPI as every other rank does (`MPI_Finalize` is collective: a rank that exited
/// without it would leave the others waiting in theirs for good), then prints the error
/// and exits with status 2.
pub fn fail_after_finalize(universe: mpi::environment::Universe, msg: &str) -> ! {
    let rank = SimpleCommunicator::world().rank();
    drop(universe);
    crate::rank_lines::stderr_line(&format!("aurora-host: rank {rank}: error: {msg}"));
    std::process::exit(2)
}

/// A panic on any thread of a rank ends the run like an error, with the panic's message.
pub fn abort_on_panic() {
    std::panic::set_hook(Box::new(|info| {
        if ABORTING.load(Ordering::SeqCst) {
            // a call failing because the run is being ended: the abort's message stands
            loop {
                std::thread::park();
            }
        }
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown payload".into());
        let at = info
            .location()
            .map_or(String::new(), |l| format!(" at {}:{}", l.file(), l.line()));
        let thread = std::thread::current()
            .name()
            .unwrap_or("unnamed")
            .to_string();
        fatal(&format!("panic in thread {thread}{at}: {what}"))
    }));
}

/// The receiving end: chunks from `peer_rank` into the local link model, until the peer
/// closes. Runs on its own thread.
pub fn receive_loop(
    link: Arc<AuroraLink>,
    peer_rank: i32,
    port: u32,
    width: usize,
    timeout: Duration,
) {
    let world = SimpleCommunicator::world();
    let peer = world.process_at_rank(peer_rank);
    let mut last = Instant::now();
    let mut backoff = Backoff::default();
    loop {
        match peer.immediate_matched_probe_with_tag(tag(port)) {
            Some(probed) => {
                backoff.reset();
                let (bytes, _) = probed.matched_receive_vec::<u8>();
                if bytes.is_empty() {
                    link.close_sender();
                    return;
                }
                let words = (bytes.len() - 1) / width.max(1);
                for (i, word) in bytes[1..].chunks(width).enumerate() {
                    let mut beat = Beat::new(word.to_vec());
                    beat.last = bytes[0] & TLAST != 0 && i + 1 == words;
                    if let Err(e) = link.send(beat) {
                        fatal(&format!("{e:#} (words from rank {peer_rank})"));
                    }
                }
                if bytes[0] & END_OF_MESSAGE != 0 {
                    link.flush_sender();
                }
                last = Instant::now();
            }
            None => {
                if last.elapsed() > timeout && link.has_waiting_receiver() {
                    let why = format!(
                        "rank {peer_rank} sent nothing for {timeout:?} while this side waits for data (dead or hung; check its log)"
                    );
                    link.fail(&why);
                    fatal(&format!("link {}: {why}", link.name));
                }
                backoff.pause();
            }
        }
    }
}
