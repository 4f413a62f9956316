//! How an action starts inside its sandbox: the persistent worker's request, or the
//! command line of a fresh bubblewrap / the symlink forest.

use super::*;

impl Sandbox<'_> {
    /// The request that runs `argv` in the persistent sandbox with `env` added to the
    /// inherited env (what [`Sandbox::command`] does for the other kinds).
    pub fn worker_request(&self, argv: &[String], env: &[(String, String)]) -> Request {
        use std::ffi::OsString;
        use std::os::unix::ffi::OsStrExt;
        let mut vars: std::collections::BTreeMap<OsString, OsString> = std::env::vars_os()
            .filter(|(k, _)| !EXCLUDED_ENV.iter().any(|x| k == x))
            .collect();
        vars.insert("PWD".into(), self.root.into());
        vars.insert("TMPDIR".into(), self.tmpdir().into());
        vars.extend(env.iter().map(|(k, v)| (k.into(), v.into())));
        let env = vars
            .into_iter()
            .map(|(k, v)| [k.as_bytes(), b"=", v.as_bytes()].concat())
            .collect();
        let bytes = |s: &str| s.as_bytes().to_vec();
        let dir_rel = self
            .dir
            .strip_prefix(self.root)
            .expect("sandboxes live under the project root")
            .to_string_lossy()
            .into_owned();
        let mut binds: Vec<Bind> = self
            .writable_dirs()
            .into_iter()
            .map(|w| {
                let on_disk = if w == self.scratch {
                    self.scratch_on_disk()
                } else {
                    &w
                };
                Bind {
                    src: bytes(&format!("{dir_rel}/{on_disk}")),
                    dst: bytes(&w),
                    dir: true,
                    writable: true,
                }
            })
            .collect();
        // A passthrough's source is the absolute path its symlinks resolve to (the worker
        // opens it before the action's fresh /tmp and project root could hide a link's target).
        for p in self.resolved() {
            let dir = p.real.is_dir();
            for dst in std::iter::once(&p.rel).chain(&p.real_in_project) {
                binds.push(Bind {
                    src: p.real.as_os_str().as_bytes().to_vec(),
                    dst: bytes(dst),
                    dir,
                    writable: true,
                });
            }
        }
        for p in self.inputs.iter().chain(&self.extra_mounts) {
            binds.push(Bind {
                src: bytes(p),
                dst: bytes(p),
                dir: self.root.join(p).is_dir(),
                writable: false,
            });
        }
        let mut keep_under_tmp: Vec<PathBuf> = std::env::var_os("HOME")
            .map(PathBuf::from)
            .into_iter()
            .collect();
        keep_under_tmp.extend(self.passthrough.iter().filter_map(|p| expand_home(p)));
        // A passthrough's real directory stays visible at its own path (a venv's `#!` lines).
        keep_under_tmp.extend(
            self.resolved()
                .iter()
                .filter_map(|p| p.real_outside(self.root))
                .map(Path::to_path_buf),
        );
        Request {
            root: self.root.as_os_str().as_bytes().to_vec(),
            keep_under_tmp: keep_under_tmp
                .into_iter()
                .filter(|p| p.starts_with("/tmp") && p != Path::new("/tmp"))
                .map(|p| p.as_os_str().as_bytes().to_vec())
                .collect(),
            binds,
            argv: argv.iter().map(|a| bytes(a)).collect(),
            env,
        }
    }

    /// The command that runs `argv` inside the sandbox with `env` added to the inherited env,
    /// and, for a fresh bubblewrap, the pipe that tells when its PID namespace is gone.
    pub fn command(
        &self,
        argv: &[String],
        env: &[(String, String)],
    ) -> std::io::Result<(Command, Option<StatusPipe>)> {
        let mut status = None;
        let mut cmd = match self.kind {
            SandboxKind::SymlinkForest => {
                let program = &argv[0];
                let mut cmd = if program.contains('/') && !program.starts_with('/') {
                    let mut c = Command::new(self.dir.join(program.trim_start_matches("./")));
                    c.arg0(program);
                    c
                } else {
                    Command::new(program)
                };
                cmd.args(&argv[1..]).current_dir(&self.dir);
                cmd.env("PWD", &self.dir);
                cmd
            }
            SandboxKind::Worker { .. } => {
                unreachable!("the persistent sandbox runs requests, not commands")
            }
            SandboxKind::Bubblewrap(bwrap) => {
                let mut pipe = StatusPipe::new()?;
                let mut cmd = Command::new(bwrap);
                cmd.args(self.bwrap_args())
                    .arg("--json-status-fd")
                    .arg(pipe.child_fd().to_string())
                    .arg("--")
                    .args(argv);
                cmd.current_dir(&self.dir);
                cmd.env("PWD", self.root);
                pipe.pass_to(&mut cmd);
                status = Some(pipe);
                cmd
            }
        };
        for k in EXCLUDED_ENV {
            cmd.env_remove(k);
        }
        cmd.env("TMPDIR", self.tmpdir());
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
        cmd.stdin(Stdio::null());
        // forge kills the group when the command exits (see `procs`), and a killed forge
        // leaves no action running
        crate::procs::own_group_dying_with_parent(&mut cmd);
        Ok((cmd, status))
    }

    fn bwrap_args(&self) -> Vec<String> {
        let mut a: Vec<String> = Vec::new();
        let mut push = |xs: &[&str]| a.extend(xs.iter().map(|s| s.to_string()));
        push(&["--die-with-parent", "--unshare-all"]);
        if self.network {
            push(&["--share-net"]);
        }
        a.extend(system_view::local_system_binds(self.passthrough));
        let mut push = |xs: &[&str]| a.extend(xs.iter().map(|s| s.to_string()));
        let root = self.root.to_string_lossy().into_owned();
        let dir = self.dir.to_string_lossy().into_owned();
        push(&["--ro-bind", &dir, &root]);
        for w in self.writable_dirs() {
            let src = format!("{dir}/{w}");
            let dst = format!("{root}/{w}");
            push(&["--bind", &src, &dst]);
        }
        for p in self.resolved() {
            let real = p.real.to_string_lossy().into_owned();
            for at in std::iter::once(&p.rel).chain(&p.real_in_project) {
                push(&["--bind", &real, &format!("{root}/{at}")]);
            }
            // Also at its own path (a venv's `#!` lines name it), which lies outside the
            // sandbox's read-only root, so bubblewrap can make the mount point.
            if let Some(outside) = p.real_outside(self.root) {
                let outside = outside.to_string_lossy().into_owned();
                push(&["--bind", &outside, &outside]);
            }
        }
        for i in self.inputs.iter().chain(&self.extra_mounts) {
            let real = format!("{root}/{i}");
            push(&["--ro-bind", &real, &real]);
        }
        push(&["--chdir", &root]);
        a
    }
}
