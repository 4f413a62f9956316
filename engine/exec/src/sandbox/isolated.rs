//! The bubblewrap view for a command whose whole input root is one fresh directory (a
//! remote worker's execution root): the remote system view (`system_view`: `/usr` and a
//! minimal `/etc`, never the worker user's home or credentials) read-only, that
//! directory writable at its own path, private `/tmp`, every namespace unshared (no
//! network, no other process), and the command dies with its parent.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::Result;

use crate::sandbox::system_view::remote_system_binds;
use crate::sandbox::{find_bwrap, SandboxKind, EXCLUDED_ENV};

/// What a worker's operator lets its actions reach beyond the system directories: tool
/// installations outside them (a Vitis tree), read-only at their own paths, and the host's
/// network (a licence server). Both are the operator's choice, per worker, not the action's.
#[derive(Clone, Debug, Default)]
pub struct HostAccess {
    pub read_only: Vec<std::path::PathBuf>,
    pub network: bool,
}

/// A command that runs `argv` in `exec_root/working_dir` under bubblewrap, with exactly
/// `env` (REAPI's rule: the Command's environment, nothing inherited), plus `PATH` when
/// `env` has none, so a bare program name resolves as under the local sandbox.
/// Errors: bubblewrap missing or unable to create namespaces (names the Debian package).
pub fn isolated_command(
    exec_root: &Path,
    working_dir: &str,
    argv: &[String],
    env: &[(String, String)],
    host: &HostAccess,
) -> Result<Command> {
    let SandboxKind::Bubblewrap(bwrap) = find_bwrap()? else {
        unreachable!("find_bwrap gives bubblewrap")
    };
    let root = exec_root.to_string_lossy().into_owned();
    let cwd = if working_dir.is_empty() {
        root.clone()
    } else {
        format!("{root}/{working_dir}")
    };
    let mut cmd = Command::new(bwrap);
    cmd.args(["--die-with-parent", "--unshare-all", "--new-session"]);
    if host.network {
        cmd.arg("--share-net");
    }
    cmd.args(remote_system_binds());
    for dir in &host.read_only {
        cmd.arg("--ro-bind").arg(dir).arg(dir);
    }
    cmd.args(["--bind", &root, &root, "--chdir", &cwd, "--"])
        .args(argv);
    cmd.env_clear();
    if !env.iter().any(|(k, _)| k == "PATH") {
        cmd.env("PATH", "/usr/local/bin:/usr/bin:/bin");
    }
    cmd.envs(
        env.iter()
            .filter(|(k, _)| !EXCLUDED_ENV.contains(&k.as_str()))
            .map(|(k, v)| (k, v)),
    );
    cmd.env("PWD", &cwd).current_dir(exec_root);
    cmd.stdin(Stdio::null());
    // the caller kills everything the action started; a killed worker leaves nothing running
    crate::procs::own_group_dying_with_parent(&mut cmd);
    Ok(cmd)
}
