//! forge-re-worker: a bot for BuildGrid's Bots service (Remote Workers API v1test2). It
//! takes leases, runs each action in forge's bubblewrap sandbox on inputs fetched from the
//! CAS, uploads the outputs and reports the ActionResult in the lease.

mod args;
mod exec_root;
mod execute;
mod log;
mod materialize;
mod proto;
mod session;
mod stop;

use log::log;

fn main() {
    let args = match args::Args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("forge-re-worker: {e:#}\n\n{}", args::USAGE);
            std::process::exit(2);
        }
    };
    stop::install();
    if let Err(e) = session::run(args) {
        log!("{e:#}");
        std::process::exit(1);
    }
}
