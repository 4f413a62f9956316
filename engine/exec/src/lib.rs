//! forge execution: scheduling, the per-action sandbox, local CAS + action cache, the remote
//! cache, the build log (`forge log what-ran`) and the test runner.
//!
//! Layout under `buck-out/forge/`: `art/` outputs, `tmp/` scratch paths (inside sandboxes),
//! `sandbox/` action sandboxes (one per worker, emptied and reused between its actions in the
//! symlink-forest mode), `cache/cas/<aa>/<sha256>` blobs, `cache/ac/` action
//! results, `cache/digests` the digest cache, `log/` the build log and failure logs, `lock`
//! the workspace lock.

mod action_cache;
mod action_key;
mod build_log;
mod cas;
mod child_record;
mod digest;
mod executor;
mod failure;
mod file_diff;
mod in_process;
mod janitor;
mod layout;
mod lock;
mod log_diff;
mod outputs;
mod placement;
mod procs;
mod progress;
mod remote;
mod remote_cancel;
mod sandbox;
mod skip_check;
mod test_runner;
mod test_tmpdir;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

use forge_core::{ActionGraph, ArtifactRef, TestSpec};

pub use failure::{ActionFailure, BuildFailed};
pub use procs::{install_signal_handlers, own_group_dying_with_parent};
pub use progress::ConsoleMode;
pub use sandbox::isolated::{isolated_command, HostAccess};
pub use sandbox::worker_sandbox::entry_point as sandbox_worker_entry_point;
pub use sandbox::{SandboxMode, EXCLUDED_ENV, NETWORK_ENV, STRICT_ENV};
pub use test_runner::TEST_ENV_ALLOWLIST;

/// The `forge-sandbox` binary: serves as the persistent sandbox of a forge worker thread.
pub fn sandbox_worker_main() -> ! {
    sandbox::worker_sandbox::serve::main()
}

use layout::Layout;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoteMode {
    Off,
    Read,
    ReadWrite,
}

/// The execution platform's remote cache settings (buck2's `CommandExecutorConfig`).
/// `Default` allows reads and uploads, so callers that have no platform keep the
/// `--remote-cache` mode alone in charge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CachePolicy {
    /// `remote_cache_enabled`: look actions up in the remote cache.
    pub reads: bool,
    /// `allow_cache_uploads`: upload locally run actions that allow it themselves.
    pub uploads: bool,
    /// `max_cache_upload_mebibytes` in bytes: larger results are not uploaded.
    pub max_upload_bytes: Option<u64>,
}

impl Default for CachePolicy {
    fn default() -> CachePolicy {
        CachePolicy {
            reads: true,
            uploads: true,
            max_upload_bytes: None,
        }
    }
}

/// Remote execution, from the execution platform's `CommandExecutorConfig` (buck2's
/// semantics): with `remote_enabled` every run action goes to the engine of
/// `[buck2_re_client]`, except `local_only = True` actions and, while `local_enabled`,
/// `prefer_local = True` ones.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RemoteExecPolicy {
    /// `local_enabled`.
    pub local_enabled: bool,
    /// `remote_execution_properties`: into the Command's and Action's platform.
    pub properties: Vec<(String, String)>,
    /// `[build] remote_execution_cancel_on_estimated_queue_time_exceeds_s`: an action no
    /// worker takes within this long is cancelled and fails, naming its properties.
    pub queue_timeout: Option<std::time::Duration>,
}

pub struct ExecOptions {
    pub project_root: PathBuf,
    /// Parallel jobs (weight permits); 0 = number of cores.
    pub jobs: usize,
    pub remote: Option<Arc<dyn forge_reapi::RemoteCache>>,
    pub remote_mode: RemoteMode,
    /// `[buck2] default_allow_cache_upload`.
    pub default_allow_cache_upload: bool,
    /// What the execution platform's `CommandExecutorConfig` allows of the remote cache.
    pub cache_policy: CachePolicy,
    /// `Some` when the platform has `remote_enabled = True` (off by default).
    pub remote_exec: Option<RemoteExecPolicy>,
    /// `[forge] sandbox_passthrough`: see the `sandbox` module docs.
    pub sandbox_passthrough: Vec<String>,
    /// `[forge] sandbox` ([`SandboxMode::parse`]); the module docs of `sandbox` explain the
    /// default's trade-off.
    pub sandbox: SandboxMode,
    /// The persistent sandbox's worker program (`forge-sandbox`); `None`: the running binary
    /// when it serves as its own worker (`forge`), else `forge-sandbox` next to it.
    pub sandbox_worker: Option<PathBuf>,
    pub console: ConsoleMode,
    /// Per-test timeout for `run_tests`.
    pub test_timeout: Option<Duration>,
}

impl ExecOptions {
    /// Defaults: all cores, no remote cache, bubblewrap sandbox, automatic console.
    pub fn new(project_root: impl Into<PathBuf>) -> ExecOptions {
        ExecOptions {
            project_root: project_root.into(),
            jobs: 0,
            remote: None,
            remote_mode: RemoteMode::Off,
            default_allow_cache_upload: false,
            cache_policy: CachePolicy::default(),
            remote_exec: None,
            sandbox_passthrough: Vec::new(),
            sandbox: SandboxMode::Bubblewrap,
            sandbox_worker: None,
            console: ConsoleMode::Auto,
            test_timeout: None,
        }
    }
}

#[derive(Debug, Default, Clone)]
pub struct BuildReport {
    /// Run actions executed locally.
    pub local: usize,
    /// Run actions served from the local cache.
    pub cached: usize,
    /// Run actions served from the remote cache.
    pub remote: usize,
    /// Run actions executed by the remote engine (buck2's `remote:`).
    pub remote_executed: usize,
    /// Remote cache calls that failed (the build continued locally).
    pub remote_errors: usize,
    /// write/copy/symlinked_dir/copied_dir actions performed (not commands).
    pub in_process: usize,
    /// Actions whose outputs were already in place and current.
    pub up_to_date: usize,
    /// `bubblewrap` or `symlink-forest`.
    pub sandbox: String,
    /// Actions that ran locally while a writable remote cache was configured and were not
    /// uploaded: (action, why), sorted.
    pub not_shared: Vec<(String, String)>,
}

impl BuildReport {
    /// Run actions that executed or were served from a cache (buck2's `Commands: N`).
    pub fn commands(&self) -> usize {
        self.local + self.cached + self.remote + self.remote_executed
    }

    /// buck2's two summary lines, when any command ran:
    /// `Cache hits: N%` and `Commands: N (cached: C, remote: R, local: L)`. As in buck2
    /// (`buck2_event_observer::action_stats`), `cached` counts action-cache hits, local or
    /// remote (an `Execute` answered from the cache among them), and `remote` the commands
    /// that ran on remote workers.
    pub fn summary_lines(&self) -> Vec<String> {
        let n = self.commands();
        if n == 0 {
            return Vec::new();
        }
        let hits = (self.cached + self.remote) * 100 / n;
        vec![
            format!("Cache hits: {hits}%"),
            format!(
                "Commands: {n} (cached: {}, remote: {}, local: {})",
                self.cached + self.remote,
                self.remote_executed,
                self.local
            ),
        ]
    }

    /// The actions a second machine sharing the remote cache will have to run itself, one
    /// line each with the reason; empty when every local run was uploaded.
    pub fn not_shared_lines(&self) -> Vec<String> {
        if self.not_shared.is_empty() {
            return Vec::new();
        }
        let mut lines = vec![format!(
            "Not shared through the remote cache: {} (ran locally, not uploaded)",
            match self.not_shared.len() {
                1 => "1 action".to_string(),
                n => format!("{n} actions"),
            }
        )];
        lines.extend(
            self.not_shared
                .iter()
                .map(|(action, why)| format!("  {action}: {why}")),
        );
        lines
    }
}

pub struct Executor {
    opts: ExecOptions,
    layout: Layout,
    sandbox: sandbox::Sandboxes,
    build_id: String,
}

fn new_build_id() -> String {
    let seed = format!("{:?}{}", std::time::SystemTime::now(), std::process::id());
    let h = digest::hash_bytes(seed.as_bytes());
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

impl Executor {
    pub fn new(mut opts: ExecOptions) -> Result<Executor> {
        opts.project_root = opts
            .project_root
            .canonicalize()
            .with_context(|| format!("project root `{}`", opts.project_root.display()))?;
        if opts.jobs == 0 {
            opts.jobs = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1);
        }
        let sandbox = sandbox::Sandboxes::new(opts.sandbox, opts.sandbox_worker.clone())?;
        let layout = Layout::new(&opts.project_root);
        // Process groups an earlier forge left running when it was killed with SIGKILL.
        procs::reap_leftovers(&layout.procs_dir());
        Ok(Executor {
            layout,
            opts,
            sandbox,
            build_id: new_build_id(),
        })
    }

    /// Builds `wanted` and everything they need; errors name the failing action. A failed
    /// action makes this return an error that downcasts to [`BuildFailed`]; each failure
    /// is also printed to stderr as it happens (as buck2 streams it).
    pub fn build(&self, graph: &ActionGraph, wanted: &[ArtifactRef]) -> Result<BuildReport> {
        self.build_quietly(graph, wanted, true)
    }

    pub(crate) fn build_quietly(
        &self,
        graph: &ActionGraph,
        wanted: &[ArtifactRef],
        show_progress: bool,
    ) -> Result<BuildReport> {
        self.build_with_riders(graph, wanted, show_progress, None)
    }

    /// Builds `wanted` and runs each rider on the build's job permits once the actions it
    /// needs have succeeded (`forge test`).
    pub(crate) fn build_with_riders(
        &self,
        graph: &ActionGraph,
        wanted: &[ArtifactRef],
        show_progress: bool,
        riders: Option<&executor::Riders>,
    ) -> Result<BuildReport> {
        let lock_file = self.layout.lock_file();
        let _lock = match lock::WorkspaceLock::try_acquire(&lock_file)? {
            Some(lock) => lock,
            None => {
                // Another forge is writing: when nothing needs writing, there is no need to
                // wait for it (see `executor::up_to_date`).
                if let Some(n) = executor::all_up_to_date(&self.layout, graph, wanted) {
                    return Ok(BuildReport {
                        up_to_date: n,
                        sandbox: self.sandbox.name().to_string(),
                        ..BuildReport::default()
                    });
                }
                lock::WorkspaceLock::wait_for(&lock_file)?
            }
        };
        let console = if show_progress {
            self.opts.console
        } else {
            ConsoleMode::Quiet
        };
        let progress = progress::Progress::new(console);
        executor::Build::new(
            &self.layout,
            &self.opts,
            &self.sandbox,
            &self.build_id,
            progress,
        )
        .run(graph, wanted, riders)
    }

    /// Per-test timeout for [`run_tests`] (`forge test --timeout`, `[test] timeout`).
    pub fn set_test_timeout(&mut self, timeout: Option<Duration>) {
        self.opts.test_timeout = timeout;
    }

    pub fn project_root(&self) -> &Path {
        &self.opts.project_root
    }

    pub fn options(&self) -> &ExecOptions {
        &self.opts
    }

    /// `BUCK_BUILD_ID` of this command (shared by its actions and tests).
    pub fn build_id(&self) -> &str {
        &self.build_id
    }

    /// `bubblewrap` or `symlink-forest`: what actions run in (in the `forest` mode, those that
    /// ask for the strict sandbox run under bubblewrap).
    pub fn sandbox_name(&self) -> &'static str {
        self.sandbox.name()
    }
}

#[derive(Debug, Default, Clone)]
pub struct TestSummary {
    pub passed: usize,
    /// Tests that ran and failed (non-zero exit or signal).
    pub failed: usize,
    pub timed_out: usize,
    /// Tests that could not be started.
    pub infra_failures: usize,
    /// Tests whose inputs failed to build (buck2 exits 3 for these).
    pub build_failures: usize,
    /// Every test that did not pass, sorted.
    pub failed_labels: Vec<String>,
}

impl TestSummary {
    /// Everything that did not pass: the `N failed` of the closing line.
    pub fn failed_total(&self) -> usize {
        self.failed + self.timed_out + self.infra_failures + self.build_failures
    }
}

/// Runs the tests in parallel (after building their inputs) and prints per-test results.
pub fn run_tests(
    exec: &Executor,
    graph: &ActionGraph,
    tests: Vec<TestSpec>,
) -> Result<TestSummary> {
    test_runner::run(exec, graph, tests)
}

/// `forge log diff A B`: the report comparing two builds' action outputs, and whether every
/// action both ran produced the same bytes.
pub fn log_diff(a: &std::path::Path, b: &std::path::Path) -> Result<(String, bool)> {
    let (a, b) = (log_diff::Side::open(a)?, log_diff::Side::open(b)?);
    let d = log_diff::compare(&a, &b);
    Ok((log_diff::render(&d), d.identical()))
}

/// `forge log what-ran`: the last build's actions, executor, and changed inputs.
pub fn what_ran(project_root: &std::path::Path) -> Result<String> {
    Ok(build_log::render_what_ran(&build_log::read_last(
        project_root,
    )?))
}
