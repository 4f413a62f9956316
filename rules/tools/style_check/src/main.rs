//! style-check: see the crate docs (src/lib.rs).

use std::io::Write;
use std::process::{Command, ExitCode, Output};

use style_check::args::Args;
use style_check::record::Recorded;
use style_check::verdict::{judge, Exit};

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some("--record") {
        return record(&argv[1..]);
    }
    let args = match Args::parse(argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let run = match &args.replay {
        Some(file) => match std::fs::read(file)
            .map_err(|e| e.to_string())
            .and_then(|b| Recorded::decode(&b))
        {
            Ok(run) => run,
            Err(e) => {
                eprintln!(
                    "style-check: {file}: no recorded run of {} to judge ({e}); rebuild it \
                     (`./forge build {}`)",
                    args.check, args.target
                );
                return ExitCode::from(2);
            }
        },
        None => match run_tool(&args.command, &args.target) {
            Ok(output) => recorded(&output),
            Err(code) => return code,
        },
    };
    // The tool's own report first, as it printed it.
    let _ = std::io::stdout().write_all(&run.stdout);
    let _ = std::io::stderr().write_all(&run.stderr);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let verdict = judge(&args, run.exit, &text);
    eprintln!("{}", verdict.message);
    if verdict.pass {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `--record FILE -- TOOL ARGS...`: runs the tool and writes how it ended and what it printed
/// to FILE (atomically), whatever its exit status; the verdict is `--replay`'s. A tool killed
/// by a signal fails instead.
fn record(argv: &[String]) -> ExitCode {
    let (file, command) = match argv {
        [file, sep, command @ ..] if sep == "--" && !command.is_empty() => (file, command),
        _ => {
            eprintln!("style-check: usage: style-check --record FILE -- TOOL ARGS...");
            return ExitCode::from(2);
        }
    };
    let output = match run_tool(command, file) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let run = recorded(&output);
    if let Exit::Signal(sig) = run.exit {
        // not a verdict about the files (killed, out of memory): fail the action rather than
        // record it, so no cache keeps it
        let _ = std::io::stderr().write_all(&run.stderr);
        eprintln!("style-check: `{}` was killed by signal {sig}", command[0]);
        return ExitCode::from(2);
    }
    let partial = format!("{file}.partial");
    let written =
        std::fs::write(&partial, run.encode()).and_then(|()| std::fs::rename(&partial, file));
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("style-check: cannot write the record {file}: {e}");
            ExitCode::from(2)
        }
    }
}

/// Runs the tool; on failure to start it, says which tool for what and how to get it.
fn run_tool(command: &[String], what: &str) -> Result<Output, ExitCode> {
    Command::new(&command[0])
        .args(&command[1..])
        .output()
        .map_err(|e| {
            eprintln!(
                "style-check: cannot run `{}` for {what}: {e}.\nIts toolchain names it; \
                 `./forge` installs it (tools/bootstrap), see docs/style.md.",
                command[0]
            );
            ExitCode::from(2)
        })
}

fn recorded(output: &Output) -> Recorded {
    let exit = match output.status.code() {
        Some(code) => Exit::Code(code),
        None => {
            use std::os::unix::process::ExitStatusExt;
            Exit::Signal(output.status.signal().unwrap_or(0))
        }
    };
    Recorded {
        exit,
        stdout: output.stdout.clone(),
        stderr: output.stderr.clone(),
    }
}
