//! `action stamp OUT -- CMD [ARGS...]` (was rules/tools/verilator/stamp.sh): runs CMD; on
//! success writes its combined output to OUT, so a check such as `verilator --lint-only`
//! becomes a cacheable build action with one output. On failure OUT is not written at all
//! (the output goes to a temporary file first), so a failed check is never cached as passed.

use crate::util::{fail, run_logged, Result, TmpFile};
use std::path::PathBuf;
use std::process::Command;

#[derive(clap::Args)]
pub struct Args {
    /// the output file
    out: PathBuf,
    /// CMD [ARGS...], after `--`
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

pub fn run(a: Args) -> Result {
    let log = TmpFile::beside(&a.out);
    let status = run_logged(
        Command::new(&a.command[0]).args(&a.command[1..]),
        log.path(),
        false,
    );
    let ok = match status {
        Ok(s) => s.success(),
        Err(e) => {
            eprintln!("{}: {e}", a.command[0]);
            false
        }
    };
    if !ok {
        // the tool's own report first, then which command it was
        if let Ok(text) = std::fs::read(log.path()) {
            eprint!("{}", String::from_utf8_lossy(&text));
        }
        return fail(
            3,
            format!(
                "error: `{}` failed (command above); fix the reported problem and rebuild",
                a.command[0]
            ),
        );
    }
    log.commit()
        .or_else(|e| fail(3, format!("error: cannot write {}: {e}", a.out.display())))
}
