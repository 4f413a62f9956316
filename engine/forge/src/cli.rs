//! The `forge` command line (clap): build, run, test, targets, uquery, clean, log, audit.

mod audit;
mod build;
mod docs;
mod out;
mod query;
mod test_labels;
mod test_timeout;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::interpreter::{Loader, Workspace};

/// buck2's exit code for every user error (parse, analysis, action failure, bad pattern).
pub const EXIT_USER_ERROR: i32 = 3;
/// buck2's exit code when a test failed.
pub const EXIT_TEST_FAILURE: i32 = 32;
/// buck2's exit code for errors it tags as infrastructure errors.
pub const EXIT_INFRA_ERROR: i32 = 2;

/// The exit code buck2 gives `e`: 3 (user error) except for the few errors buck2 tags as
/// infrastructure errors, such as a `..` source path.
pub(crate) fn exit_code_for(e: &anyhow::Error) -> i32 {
    let infra = e.chain().any(|c| {
        c.downcast_ref::<crate::interpreter::coerce::UnnormalizedPath>()
            .is_some()
    });
    if infra {
        EXIT_INFRA_ERROR
    } else {
        EXIT_USER_ERROR
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "forge",
    about = "Builds Buck2 workspaces: the same BUCK and .bzl files, buck2's semantics"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct Common {
    /// Override a buckconfig value: `-c section.key=value` (`section.key=` unsets it).
    #[arg(short = 'c', long = "config", value_name = "SECTION.KEY=VALUE")]
    config: Vec<String>,
    /// Parallel jobs (default: number of cores).
    #[arg(short = 'j', long = "num-threads")]
    jobs: Option<usize>,
    /// Remote cache use (when `[buck2_re_client]` configures one).
    #[arg(long = "remote-cache", value_enum, default_value_t = RemoteCacheArg::Readwrite)]
    remote_cache: RemoteCacheArg,
    /// Progress display.
    #[arg(long = "console", value_enum, default_value_t = ConsoleArg::Auto)]
    console: ConsoleArg,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq)]
pub(crate) enum RemoteCacheArg {
    Off,
    Read,
    Readwrite,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq)]
pub(crate) enum ConsoleArg {
    Auto,
    Simple,
    Super,
    None,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq)]
pub(crate) enum OutputFormat {
    List,
    Dot,
    Json,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Build the targets matching the patterns.
    Build {
        #[arg(required = true)]
        patterns: Vec<String>,
        /// Print `<label> <path>` of each target's default output on stdout.
        #[arg(long = "show-output")]
        show_output: bool,
        /// Copy the output of the built target to this path (`-` to stdout); a directory
        /// output's contents are copied into it.
        #[arg(long = "out", value_name = "OUTPUT_PATH")]
        out: Option<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Build a target's RunInfo and run it with the given arguments.
    Run {
        target: String,
        #[command(flatten)]
        common: Common,
        /// Arguments passed to the program (after `--`).
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// Build and run the tests (ExternalRunnerTestInfo) of the matching targets.
    Test {
        #[arg(required = true)]
        patterns: Vec<String>,
        /// Per-test timeout (`90`, `90s`, `5m`); default `[test] timeout` in .buckconfig.
        #[arg(long)]
        timeout: Option<String>,
        /// Labels on targets to include from tests; `!label` excludes. The first pattern
        /// that names a label of the test wins; with any, tests they do not name are left out.
        #[arg(long, num_args = 1..)]
        include: Vec<String>,
        /// Labels on targets to exclude from tests.
        #[arg(long, num_args = 1..)]
        exclude: Vec<String>,
        /// A label of `--exclude` excludes whatever `--include` says.
        #[arg(long)]
        always_exclude: bool,
        #[command(flatten)]
        common: Common,
    },
    /// List the targets matching the patterns.
    Targets {
        #[arg(required = true)]
        patterns: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Query the unconfigured target graph: deps(), rdeps(), set operations.
    Uquery {
        query: String,
        #[arg(long = "output-format", value_enum, default_value_t = OutputFormat::List)]
        output_format: OutputFormat,
        #[command(flatten)]
        common: Common,
    },
    /// Delete forge's outputs and caches (buck-out/forge).
    Clean {
        #[command(flatten)]
        common: Common,
    },
    /// Analysis without building: `audit providers` (as buck2's), `audit tools` (forge only).
    Audit {
        #[command(subcommand)]
        what: audit::AuditCommand,
    },
    /// Print the documentation of `.bzl` symbols (as buck2's `docs starlark`).
    Docs {
        #[command(subcommand)]
        what: docs::DocsCommand,
    },
    /// Inspect the last build.
    Log {
        #[command(subcommand)]
        what: LogCommand,
    },
}

#[derive(Subcommand, Debug)]
enum LogCommand {
    /// Each action of the last build, how it ran, and which input changed on a cache miss.
    WhatRan,
    /// Compare two builds' action outputs (each a checkout, or its
    /// buck-out/forge/log/last-build.json): prints the first action whose outputs differ with
    /// a diff of the differing file; exit code 1 when any action's outputs differ.
    Diff {
        /// The first build: a checkout or its last-build.json.
        a: PathBuf,
        /// The second build.
        b: PathBuf,
    },
}

/// The workspace and loader of one invocation, plus where the user stands.
pub(crate) struct Session {
    pub loader: Arc<Loader>,
    /// The invocation directory.
    pub cwd: PathBuf,
    /// `cwd` relative to the project root (`""` at the root).
    pub cwd_package: String,
    pub common: Common,
}

impl Session {
    fn open(common: &Common) -> Result<Session> {
        let cwd = std::env::current_dir().context("Reading the current directory")?;
        let ws = Workspace::discover(&cwd, &common.config)?;
        let canon = cwd.canonicalize().unwrap_or(cwd.clone());
        let root = ws.root.canonicalize().unwrap_or(ws.root.clone());
        let cwd_package = canon
            .strip_prefix(&root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let loader = Arc::new(Loader::new(
            Arc::new(ws),
            crate::analysis::register_globals,
        )?);
        Ok(Session {
            loader,
            cwd,
            cwd_package,
            common: common.clone(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.loader.workspace().root
    }
}

/// Prints an error the way buck2 does (the chain of causes) on stderr.
pub(crate) fn report(e: &anyhow::Error) {
    eprintln!("{}", render_error(e));
}

/// `msg`, then `Caused by:` and the causes, in anyhow's layout as buck2 prints it (never a
/// backtrace): one cause is indented 4 spaces on every line; several are numbered `{:>5}: `
/// with their further lines indented 7.
pub(crate) fn render_error(e: &anyhow::Error) -> String {
    let mut out = e.to_string();
    let causes: Vec<String> = e.chain().skip(1).map(|c| c.to_string()).collect();
    if !causes.is_empty() {
        out.push_str("\n\nCaused by:");
        let numbered = causes.len() > 1;
        let further = if numbered { "       " } else { "    " };
        for (i, c) in causes.iter().enumerate() {
            // split, not lines: a message ending in a newline ends in an indented empty line.
            let mut lines = c.split('\n');
            let first = lines.next().unwrap_or("");
            if numbered {
                out.push_str(&format!("\n{i:>5}: {first}"));
            } else {
                out.push_str(&format!("\n    {first}"));
            }
            for l in lines {
                out.push_str(&format!("\n{further}{l}"));
            }
        }
    }
    out
}

pub fn main() -> i32 {
    // Ctrl-C, SIGTERM or SIGHUP: every action and test forge started dies with it.
    forge_exec::install_signal_handlers();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USER_ERROR } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let result = match cli.command {
        Command::Build {
            patterns,
            show_output,
            out,
            common,
        } => {
            Session::open(&common).map(|s| build::build(&s, &patterns, show_output, out.as_deref()))
        }
        Command::Run {
            target,
            common,
            args,
        } => Session::open(&common).map(|s| build::run(&s, &target, &args)),
        Command::Test {
            patterns,
            timeout,
            include,
            exclude,
            always_exclude,
            common,
        } => {
            let labels = test_labels::LabelFilter {
                include,
                exclude,
                always_exclude,
            };
            Session::open(&common).map(|s| build::test(&s, &patterns, timeout.as_deref(), &labels))
        }
        Command::Targets { patterns, common } => {
            Session::open(&common).and_then(|s| query::targets(&s, &patterns))
        }
        Command::Uquery {
            query,
            output_format,
            common,
        } => Session::open(&common).and_then(|s| query::uquery(&s, &query, output_format)),
        Command::Clean { common } => Session::open(&common).and_then(|s| clean(&s)),
        Command::Audit { what } => {
            Session::open(what.common()).and_then(|s| audit::audit(&s, &what))
        }
        Command::Docs { what } => Session::open(what.common()).and_then(|s| docs::docs(&s, &what)),
        Command::Log {
            what: LogCommand::WhatRan,
        } => what_ran(),
        Command::Log {
            what: LogCommand::Diff { a, b },
        } => log_diff(&a, &b),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            report(&e);
            exit_code_for(&e)
        }
    }
}

fn clean(s: &Session) -> Result<i32> {
    let dir = s.root().join("buck-out").join("forge");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("Removing {}", dir.display()))?;
    }
    Ok(0)
}

fn what_ran() -> Result<i32> {
    let cwd = std::env::current_dir()?;
    let root = crate::interpreter::find_root(&cwd)?;
    print!("{}", forge_exec::what_ran(&root)?);
    Ok(0)
}

/// Exit code of `forge log diff` when the builds differ (as diff(1)).
const EXIT_LOGS_DIFFER: i32 = 1;

fn log_diff(a: &Path, b: &Path) -> Result<i32> {
    let (text, identical) = forge_exec::log_diff(a, b)?;
    print!("{text}");
    Ok(if identical { 0 } else { EXIT_LOGS_DIFFER })
}

#[cfg(test)]
mod tests {
    use super::render_error;

    /// anyhow's own `{:?}` layout (which buck2 prints) is the reference; a backtrace, if the
    /// environment asks anyhow for one, is not part of it.
    fn anyhow_layout(e: &anyhow::Error) -> String {
        let debug = format!("{e:?}");
        match debug.find("\n\nStack backtrace:") {
            Some(pos) => debug[..pos].to_owned(),
            None => debug,
        }
    }

    #[test]
    fn one_multi_line_cause_is_indented_four() {
        let e = anyhow::anyhow!("cycle:\n  a ->\n  b ->\n  a\n").context("Error running analysis");
        assert_eq!(render_error(&e), anyhow_layout(&e));
        assert!(render_error(&e).contains("\n      a ->\n      b ->\n      a\n    "));
    }

    #[test]
    fn several_causes_are_numbered_with_further_lines_indented_seven() {
        let e = anyhow::anyhow!("root\nsecond line")
            .context("middle")
            .context("top");
        assert_eq!(render_error(&e), anyhow_layout(&e));
        assert!(render_error(&e).contains("\n    0: middle\n    1: root\n       second line"));
    }
}
