//! style-check: see the crate docs (src/lib.rs).

use std::io::Write;
use std::process::{Command, ExitCode};

use style_check::args::Args;
use style_check::verdict::{judge, Exit};

fn main() -> ExitCode {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let output = match Command::new(&args.command[0])
        .args(&args.command[1..])
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!(
                "style-check: cannot run `{}` for {}: {e}.\nIts toolchain names it; `./forge` \
                 installs it (tools/bootstrap), see docs/style.md.",
                args.command[0], args.target
            );
            return ExitCode::from(2);
        }
    };
    // The tool's own report first, as it printed it.
    let _ = std::io::stdout().write_all(&output.stdout);
    let _ = std::io::stderr().write_all(&output.stderr);
    let exit = match output.status.code() {
        Some(code) => Exit::Code(code),
        None => {
            use std::os::unix::process::ExitStatusExt;
            Exit::Signal(output.status.signal().unwrap_or(0))
        }
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let verdict = judge(&args, exit, &text);
    eprintln!("{}", verdict.message);
    if verdict.pass {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
