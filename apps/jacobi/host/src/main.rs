//! `jacobi-host`: the jacobi deployment's host program, one MPI rank per card (the run
//! script and job script start it with the deployment's options, which the host API takes).
//!
//!     jacobi-host <deployment options> run --rows R --cols C --iterations N [--json FILE]
//!
//! Every rank writes its slab of the initial grid (R rows per card, C columns) to its card,
//! runs the card's jacobi CU for N iterations and reads the slab back; rank 0 gathers the
//! slabs, compares them bit for bit with the whole-grid reference, and prints the verdict,
//! every card's streams and link counters and the modelled time per iteration. A mismatch
//! fails the run (an error line for the launcher, exit status 1).

mod report;
mod run;

use auroraforge_host::{rank_lines, transport, Session};

fn main() {
    let (mut session, rest) = match Session::init(std::env::args().skip(1)) {
        Ok(s) => s,
        Err(e) if mpi::environment::is_initialized() => transport::fatal(&format!("{e:#}")),
        Err(e) => {
            // before MPI: the launcher (or mpirun) ends the run on this exit
            let rank = std::env::var("OMPI_COMM_WORLD_RANK").unwrap_or_else(|_| "?".into());
            rank_lines::stderr_line(&format!("{}{rank}: error: {e:#}", rank_lines::ERROR));
            std::process::exit(1)
        }
    };
    // An error ends every rank at once with its message; the session stays open for that
    // (dropping it would finalise MPI under the abort).
    let same = match run::main(&mut session, rest) {
        Ok(same) => same,
        Err(e) => transport::fatal(&format!("{e:#}")),
    };
    if let Err(e) = session.finish() {
        transport::fatal(&format!("{e:#}"));
    }
    std::process::exit(if same { 0 } else { 1 })
}
