//! testkit-check: see the crate docs (src/lib.rs) and README.md.

use std::process::ExitCode;

use testkit_check::{cli, Error};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match cli::run(&args) {
        Ok(out) => {
            if !out.is_empty() {
                println!("{out}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(match e {
                Error::Bad(_) => 2,
                Error::Failed(_) => 1,
            })
        }
    }
}
