//! `action run-sim BINARY [-- PLUSARGS...]...` (was rules/tools/verilator/run_sim.sh): runs a
//! simulation binary once per `--`-separated plusarg set and fails if any run fails.
//!
//! Each plusarg is one argv word here and stays one word for the binary: the script joined a
//! set into a string and split it again unquoted, which broke any plusarg with a space. Two
//! runs go at a time (a testbench is single-threaded; two fill the build machine's cores
//! without starving the rest of the build). A passing run prints its `RESULT` lines; a
//! failing run prints its whole output (the testbench reports its seed and cycle) and then
//! `FAILED: ` with the command line that replays it.

use crate::util::{shell_line, split_at_dashes, Result};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::process::{Child, Command, Stdio};

/// How many simulations run at once.
const PARALLEL: usize = 2;

#[derive(clap::Args)]
pub struct Args {
    /// the simulation binary
    binary: String,
    /// plusarg sets, each after a `--` (none: one run without plusargs)
    #[arg(last = true, value_name = "PLUSARGS")]
    sets: Vec<String>,
}

struct Run {
    args: Vec<String>,
    child: std::io::Result<Child>,
    log: File,
}

/// Waits for `run`, prints what it should and says whether it passed.
fn finish(binary: &str, mut run: Run) -> bool {
    let status = match &mut run.child {
        Ok(child) => child.wait().map(|s| s.success()).unwrap_or(false),
        Err(_) => false,
    };
    // the child's descriptors share the file's offset: read from the start
    let mut text = Vec::new();
    let _ = run.log.seek(SeekFrom::Start(0));
    let _ = run.log.read_to_end(&mut text);
    if let Err(e) = &run.child {
        text.extend_from_slice(format!("{binary}: {e}\n").as_bytes());
    }
    if status {
        for line in BufReader::new(&text[..]).lines().map_while(|l| l.ok()) {
            if line.starts_with("RESULT") {
                println!("{line}");
            }
        }
    } else {
        print!("{}", String::from_utf8_lossy(&text));
        let mut line = vec![binary.to_string()];
        line.extend(run.args.iter().cloned());
        println!("FAILED: {}", shell_line(&line));
    }
    status
}

/// One run: stdout and stderr into an anonymous temporary file (read back by `finish`).
fn start(binary: &str, args: Vec<String>) -> std::io::Result<Run> {
    let log = tempfile()?;
    let child = Command::new(binary)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log.try_clone()?)
        .spawn();
    Ok(Run { args, child, log })
}

/// A file that no longer has a name: nothing is left behind whatever happens.
fn tempfile() -> std::io::Result<File> {
    let dir = std::env::temp_dir();
    for n in 0.. {
        let path = dir.join(format!("run-sim-{}-{n}.log", std::process::id()));
        match File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                std::fs::remove_file(&path)?;
                return Ok(f);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!()
}

pub fn run(a: Args) -> Result {
    let mut sets = split_at_dashes(&a.sets);
    if sets.is_empty() {
        sets.push(vec![]);
    }
    let mut failed = false;
    let mut running: VecDeque<Run> = VecDeque::new();
    for set in sets {
        match start(&a.binary, set) {
            Ok(r) => running.push_back(r),
            Err(e) => return crate::util::fail(3, format!("run-sim: cannot start a run: {e}")),
        }
        // the oldest run is reported first, so the output keeps the order of the sets
        if running.len() >= PARALLEL {
            let r = running.pop_front().unwrap();
            failed |= !finish(&a.binary, r);
        }
    }
    while let Some(r) = running.pop_front() {
        failed |= !finish(&a.binary, r);
    }
    if failed {
        Err(crate::util::Exit(1))
    } else {
        Ok(())
    }
}
