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

fn main() {
    // A mismatch is a verdict, not an error: exit status 1 after a clean finish; an error
    // ends every rank at once with its message (auroraforge_host::main_with_status).
    auroraforge_host::main_with_status(|session, rest| {
        run::main(session, rest).map(|same| if same { 0 } else { 1 })
    })
}
