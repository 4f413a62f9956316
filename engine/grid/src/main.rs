//! forge-re-grid: `serve` runs BuildGrid with execution in the foreground until SIGTERM or
//! SIGINT (or until one of its processes dies), then stops everything it started.

mod args;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use forge_re_grid::{Grid, Options};

/// Set by the signal handler; the main loop and a start in progress poll it.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

fn main() {
    let opts = match args::parse(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("forge-re-grid: {e:#}\n\n{}", args::USAGE);
            std::process::exit(2);
        }
    };
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
    if let Err(e) = run(opts) {
        eprintln!("forge-re-grid: {e:#}");
        std::process::exit(1);
    }
}

fn run(mut opts: Options) -> anyhow::Result<()> {
    opts.cancel = Some(&STOP);
    let mut grid = Grid::start(&opts)?;
    println!("{}", grid.address());
    std::io::stdout().flush()?;
    eprintln!(
        "forge-re-grid: serving at {} (logs in {}); SIGTERM or Ctrl-C stops it",
        grid.address(),
        grid.dir.display()
    );
    while !STOP.load(Ordering::SeqCst) {
        if let Some(what) = grid.exited() {
            grid.stop();
            anyhow::bail!("{what}; logs in {}", opts.dir.display());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    grid.stop();
    Ok(())
}
