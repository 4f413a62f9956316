//! One lease: the Action (BuildGrid 0.4.4 packs the Action itself into `lease.payload`,
//! or its Digest), its Command and inputs from the CAS, the command in forge's bubblewrap
//! sandbox, and the outputs + stdout/stderr uploaded into an ActionResult.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{bail, Context, Result};
use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use bazel_remote_apis::google::protobuf::Any;
use forge_reapi::{Digest, GrpcRemoteCache, LocalOutput};
use prost::Message;

use crate::materialize;

const ACTION_TYPE: &str = "build.bazel.remote.execution.v2.Action";
const DIGEST_TYPE: &str = "build.bazel.remote.execution.v2.Digest";

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

/// Runs the action in a fresh directory under `work_dir` (removed afterwards) and returns
/// the ActionResult whose blobs are in the CAS. A failing command is a result with its
/// exit code; an `Err` means the worker could not run it at all.
pub fn run(
    cas: &GrpcRemoteCache,
    action: &re::Action,
    work_dir: &Path,
    bot_id: &str,
) -> Result<re::ActionResult> {
    let cmd_digest = Digest::from_proto(action.command_digest.as_ref())?;
    let command = re::Command::decode(cas.read_blob(&cmd_digest)?.as_slice())
        .with_context(|| format!("decoding Command {cmd_digest}"))?;
    if command.arguments.is_empty() {
        bail!("the Command has no arguments");
    }
    let scratch = tempfile::Builder::new()
        .prefix("forge-re-")
        .tempdir_in(work_dir)
        .with_context(|| format!("creating an execution root in {}", work_dir.display()))?;
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
    let mut child =
        forge_exec::isolated_command(&root, &command.working_directory, &command.arguments, &env)?
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("starting bubblewrap")?;
    let (stdout, stderr) = read_both(&mut child);
    let status = child.wait()?;
    // The action's process group: anything it left behind dies with it.
    // SAFETY: signalling the process group of a child this worker spawned.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    use std::os::unix::process::ExitStatusExt;
    let exit_code = status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    if exit_code != 0 {
        eprintln!(
            "forge-re-worker: the action exited with {exit_code}: {}",
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
    Ok(result)
}

/// stdout and stderr read concurrently, so neither pipe fills up and blocks the action.
fn read_both(child: &mut std::process::Child) -> (Vec<u8>, Vec<u8>) {
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let mut o = Vec::new();
    let _ = out.read_to_end(&mut o);
    (o, t.join().unwrap_or_default())
}
