//! One lease: the Action (BuildGrid 0.4.4 packs the Action itself into `lease.payload`,
//! or its Digest), its Command and inputs from the CAS, the command in forge's bubblewrap
//! sandbox, and the outputs + stdout/stderr uploaded into an ActionResult.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use bazel_remote_apis::google::protobuf::Any;
use forge_reapi::{Digest, GrpcRemoteCache, LocalOutput};
use prost::Message;

use crate::log::log;
use crate::materialize;

const ACTION_TYPE: &str = "build.bazel.remote.execution.v2.Action";
const DIGEST_TYPE: &str = "build.bazel.remote.execution.v2.Digest";
/// How often a running action is checked for its end, its time limit and a cancel.
const POLL_CHILD: Duration = Duration::from_millis(20);

pub fn action_of(cas: &GrpcRemoteCache, payload: &Any) -> Result<re::Action> {
    let type_name = payload.type_url.rsplit('/').next().unwrap_or_default();
    match type_name {
        ACTION_TYPE => Ok(re::Action::decode(payload.value.as_slice())?),
        DIGEST_TYPE => {
            let d = Digest::from_proto(Some(&re::Digest::decode(payload.value.as_slice())?))?;
            Ok(re::Action::decode(cas.read_blob(&d)?.as_slice())?)
        }
        other => bail!("lease payload of unknown type `{other}`"),
    }
}

#[allow(deprecated)] // v2.0 clients fill output_files/output_directories, not output_paths
fn output_paths(cmd: &re::Command) -> Vec<String> {
    let mut set: BTreeSet<String> = cmd.output_paths.iter().cloned().collect();
    set.extend(cmd.output_files.iter().cloned());
    set.extend(cmd.output_directories.iter().cloned());
    set.into_iter().collect()
}

/// What may end an action before it ends by itself.
#[derive(Clone, Debug, Default)]
pub struct Stop {
    /// Set when the server took the lease back (its operation was cancelled).
    pub cancelled: Arc<AtomicBool>,
    /// The worker's `--action-timeout`: the limit for actions whose `Action.timeout` is
    /// unset or longer.
    pub max_timeout: Option<Duration>,
}

/// How a lease's command runs: what may end it, and what of the host it may reach.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    pub stop: Stop,
    pub host: forge_exec::HostAccess,
}

/// An action the worker ran to its end or to its time limit.
pub struct Ran {
    pub result: re::ActionResult,
    /// `Some(limit)`: killed at its time limit (REAPI: the lease ends DEADLINE_EXCEEDED,
    /// with what the action wrote until then).
    pub timed_out: Option<Duration>,
}

/// How the command's process ended.
enum Ended {
    Exited,
    TimedOut(Duration),
    Cancelled,
}

/// Runs the action in a fresh directory under `work_dir` (removed afterwards, or by the next
/// worker there if this one is killed: `exec_root`) and returns the ActionResult whose blobs
/// are in the CAS. A failing command is a result with its exit code; an `Err` means the
/// worker could not run it at all, or it was cancelled.
pub fn run(
    cas: &GrpcRemoteCache,
    action: &re::Action,
    work_dir: &Path,
    bot_id: &str,
    policy: &Policy,
) -> Result<Ran> {
    let stop = &policy.stop;
    let cmd_digest = Digest::from_proto(action.command_digest.as_ref())?;
    let command = re::Command::decode(cas.read_blob(&cmd_digest)?.as_slice())
        .with_context(|| format!("decoding Command {cmd_digest}"))?;
    if command.arguments.is_empty() {
        bail!("the Command has no arguments");
    }
    let scratch = crate::exec_root::ExecRoot::create(work_dir)?;
    let root = scratch.path().join("root");
    let Some(input_root) = action.input_root_digest.as_ref() else {
        bail!("the Action has no input root");
    };
    materialize::input_root(cas, input_root, &root)?;
    let cwd = root.join(&command.working_directory);
    let outputs = output_paths(&command);
    for o in &outputs {
        forge_reapi::check_output_path(o)?;
        if let Some(parent) = Path::new(o).parent() {
            std::fs::create_dir_all(cwd.join(parent))?;
        }
    }
    let env: Vec<(String, String)> = command
        .environment_variables
        .iter()
        .map(|e| (e.name.clone(), e.value.clone()))
        .collect();
    make_scratch_dir(&env, &cwd)?;
    let mut child = forge_exec::isolated_command(
        &root,
        &command.working_directory,
        &command.arguments,
        &env,
        &policy.host,
    )?
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .context("starting bubblewrap")?;
    let readers = read_both(&mut child);
    let ended = wait(&mut child, stop, time_limit(action, stop))?;
    // The action's process group: anything it left behind dies with it.
    // SAFETY: signalling the process group of a child this worker spawned.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    let status = child.wait()?;
    let (stdout, stderr) = readers();
    let timed_out = match ended {
        Ended::Cancelled => bail!("cancelled by the server; the action was killed"),
        Ended::TimedOut(limit) => Some(limit),
        Ended::Exited => None,
    };
    use std::os::unix::process::ExitStatusExt;
    let exit_code = status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    if exit_code != 0 {
        log!(
            "the action exited with {exit_code}: {}",
            String::from_utf8_lossy(&stderr)
                .lines()
                .last()
                .unwrap_or_default()
        );
    }
    let found: Vec<LocalOutput> = outputs
        .iter()
        .filter_map(|o| {
            let on_disk: PathBuf = cwd.join(o);
            let meta = std::fs::symlink_metadata(&on_disk).ok()?;
            Some(LocalOutput {
                path: o.clone(),
                is_dir: meta.is_dir(),
                on_disk,
            })
        })
        .collect();
    let result = cas.upload_outputs(&found, &stdout, &stderr, exit_code, bot_id)?;
    drop(scratch);
    Ok(Ran { result, timed_out })
}

/// The shorter of the Action's own `timeout` and the worker's limit.
fn time_limit(action: &re::Action, stop: &Stop) -> Option<Duration> {
    let own = action
        .timeout
        .as_ref()
        .filter(|t| t.seconds > 0 || t.nanos > 0)
        .map(|t| Duration::new(t.seconds.max(0) as u64, t.nanos.max(0) as u32));
    match (own, stop.max_timeout) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Waits for the command, its time limit or the server's cancel, whichever comes first.
fn wait(child: &mut std::process::Child, stop: &Stop, limit: Option<Duration>) -> Result<Ended> {
    let started = Instant::now();
    loop {
        if child.try_wait()?.is_some() {
            return Ok(Ended::Exited);
        }
        if stop.cancelled.load(Ordering::Relaxed) {
            return Ok(Ended::Cancelled);
        }
        if let Some(limit) = limit.filter(|l| started.elapsed() >= *l) {
            return Ok(Ended::TimedOut(limit));
        }
        std::thread::sleep(POLL_CHILD);
    }
}

/// buck2 gives every action an empty scratch directory named by `$BUCK_SCRATCH_PATH`
/// (relative to the working directory); the client sends the name, the worker makes it.
fn make_scratch_dir(env: &[(String, String)], cwd: &Path) -> Result<()> {
    let Some((_, path)) = env.iter().find(|(k, _)| k == "BUCK_SCRATCH_PATH") else {
        return Ok(());
    };
    forge_reapi::check_output_path(path).with_context(|| format!("BUCK_SCRATCH_PATH `{path}`"))?;
    std::fs::create_dir_all(cwd.join(path))
        .with_context(|| format!("creating BUCK_SCRATCH_PATH `{path}`"))
}

/// stdout and stderr read on their own threads, so neither pipe fills up and blocks the
/// action; the returned function waits for both to reach their end.
fn read_both(child: &mut std::process::Child) -> impl FnOnce() -> (Vec<u8>, Vec<u8>) {
    fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    }
    let out = drain(child.stdout.take().expect("piped"));
    let err = drain(child.stderr.take().expect("piped"));
    move || {
        (
            out.join().unwrap_or_default(),
            err.join().unwrap_or_default(),
        )
    }
}
