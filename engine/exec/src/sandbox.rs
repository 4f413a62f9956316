//! The per-action sandbox: a directory that mirrors the project root but holds ONLY the
//! action's declared inputs, the parent directories of its declared outputs, and its empty
//! scratch directory. The action runs with that directory as its working directory.
//!
//! Two strengths:
//! - **bubblewrap** (`bwrap`, Debian `bubblewrap`; the DEFAULT for every action): the
//!   sandbox is mounted AT the project root path, read-only, with the output parents and the
//!   scratch dir writable; each input is bind-mounted read-only (inputs that make up a whole
//!   directory as that directory, see [`whole_dirs`]); the host's system directories are
//!   visible read-only as [`system_view`] lists them (locally `/usr`, `/etc`, `/opt` and
//!   `$HOME`, where user-installed toolchains such as rustup or pyenv live; on a remote
//!   worker `/usr` and a few `/etc` files only); `/tmp` is private; every namespace is unshared, so there is no
//!   network, no other process is visible and every process of the action dies with it.
//!   Nothing else of the host exists inside: not `buck-out/` (other targets' outputs and the
//!   cache), not `/work`, `/var`, `/home/<others>` or `/run`.
//! - **symlink forest** (opt-out, `[forge] sandbox = forest`): inputs are symlinks to the
//!   real files. Undeclared project files are invisible by relative path (the paths rules and
//!   toolchains use), but NOT by absolute path; the network, `$HOME`, `/tmp` and every path the
//!   user can write are reachable, including other targets' outputs (read-only files, see
//!   `cas`, which an action could still `chmod`) and the source tree. A write through an input
//!   link cannot be prevented; forge notices it (the input's size, mtime or inode changed
//!   while the action ran) and fails the action. A process that leaves its process group
//!   (`setsid`) can outlive the action. Use it only where bubblewrap cannot run (no user
//!   namespaces) or to measure the sandbox's cost.
//!
//! Which one runs (`[forge] sandbox` in `.buckconfig`, see [`SandboxMode::parse`]):
//! - `bwrap` (default; `auto` means the same): every action under bubblewrap, in one
//!   persistent bubblewrap per executor worker that gives each action fresh namespaces
//!   (`worker_sandbox`); an error naming the Debian package when it is not available.
//! - `bwrap-per-action`: the same view, from a fresh bubblewrap per action (slower; kept to
//!   measure the difference and for machines where bubblewrap cannot pass capabilities).
//! - `forest`: every action in the symlink forest, except actions that set [`STRICT_ENV`]`
//!   = "1"` in their `env`; those still run under bubblewrap when it works here.
//!
//! The cost: starting bubblewrap (new namespaces, a fresh root) costs 10–25 ms per action;
//! the persistent sandbox pays it once per worker and about as much as the forest per
//! action (`cargo bench -p forge_exec --bench sandbox_overhead` measures all three; the
//! README has the figures).
//!
//! Network: an action whose `env` sets [`NETWORK_ENV`]` = "1"` keeps the host network under
//! bubblewrap (for toolchains that need a license server). Rules set it only for such
//! toolchains; the key is part of the action's env like any other, so it is visible in the
//! action key.
//!
//! `[forge] sandbox_passthrough` (`.buckconfig`, space separated): project-relative paths are
//! made visible read-WRITE at their project path (a shared cargo target dir, `.venv`);
//! absolute paths (or `~/...`) are made visible read-only under bubblewrap.
//!
//! In both modes a write anywhere but a declared output or the scratch dir is an error: after
//! the run the sandbox is scanned for undeclared paths.

pub(crate) mod isolated;
pub(crate) mod passthrough;
pub(crate) mod pid_namespace;
pub(crate) mod system_view;
pub(crate) mod worker_sandbox;

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::symlink;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use anyhow::{bail, Context, Result};

use forge_core::OutputDecl;

use crate::action_key::find_on_path;
use crate::janitor::Janitor;
use crate::layout::parent_of;
use passthrough::Passthrough;
use pid_namespace::StatusPipe;
use worker_sandbox::{Bind, Program, Request};

/// Env key an action sets to `"1"` to keep network access under bubblewrap.
pub const NETWORK_ENV: &str = "FORGE_SANDBOX_NETWORK";

/// Env key an action sets to `"1"` to run under bubblewrap in the `auto` mode.
pub const STRICT_ENV: &str = "FORGE_SANDBOX_STRICT";

/// Environment variables removed from the inherited environment (as buck2 does).
pub const EXCLUDED_ENV: &[&str] = &[
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
];

/// Which sandbox to use (`ExecOptions::sandbox`, `[forge] sandbox`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// Every action under bubblewrap, in a persistent bubblewrap per executor worker that
    /// gives each action fresh namespaces of its own (`worker_sandbox`).
    #[default]
    Bubblewrap,
    /// Every action under a bubblewrap of its own (slower; for comparison).
    BubblewrapPerAction,
    /// The symlink forest (opt-out), bubblewrap for actions that set [`STRICT_ENV`].
    SymlinkForest,
}

impl SandboxMode {
    /// The value of `[forge] sandbox`: `bwrap` (or `bubblewrap`, or `auto`: the default),
    /// `forest` (or `symlink-forest`).
    pub fn parse(value: &str) -> Result<SandboxMode> {
        match value.trim() {
            "auto" | "" | "bwrap" | "bubblewrap" => Ok(SandboxMode::Bubblewrap),
            "bwrap-per-action" => Ok(SandboxMode::BubblewrapPerAction),
            "forest" | "symlink-forest" => Ok(SandboxMode::SymlinkForest),
            other => bail!(
                "`[forge] sandbox = {other}` is not a sandbox mode: use `bwrap` (the default: every action under bubblewrap), `bwrap-per-action` (the same isolation with a fresh bubblewrap per action, slower) or `forest` (the weaker symlink forest, see the README's \"Sandbox and crash safety\")"
            ),
        }
    }
}

#[derive(Clone, Debug)]
pub enum SandboxKind {
    /// A persistent bubblewrap per executor worker (`worker_sandbox`).
    Worker {
        bwrap: PathBuf,
        program: Program,
    },
    /// A fresh bubblewrap per action.
    Bubblewrap(PathBuf),
    SymlinkForest,
}

impl SandboxKind {
    pub fn name(&self) -> &'static str {
        match self {
            SandboxKind::Worker { .. } => "bubblewrap",
            SandboxKind::Bubblewrap(_) => "bubblewrap-per-action",
            SandboxKind::SymlinkForest => "symlink-forest",
        }
    }

    /// Whether the action sees the project root's path (bubblewrap of either kind).
    fn at_root(&self) -> bool {
        !matches!(self, SandboxKind::SymlinkForest)
    }
}

fn bwrap_works(bwrap: &Path) -> bool {
    Command::new(bwrap)
        .args([
            "--ro-bind",
            "/",
            "/",
            "--unshare-all",
            "--die-with-parent",
            "true",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// The persistent bubblewrap sandbox: bubblewrap and the worker program.
fn find_worker(program: Option<&Path>) -> Result<SandboxKind> {
    let SandboxKind::Bubblewrap(bwrap) = find_bwrap()? else {
        unreachable!("find_bwrap gives bubblewrap")
    };
    let program = match program {
        Some(p) => Program {
            path: p.to_path_buf(),
            args: Vec::new(),
        },
        None => Program::find()?,
    };
    Ok(SandboxKind::Worker { bwrap, program })
}

/// bubblewrap, when it is installed and can create namespaces here.
pub(crate) fn find_bwrap() -> Result<SandboxKind> {
    let Some(bwrap) = find_on_path("bwrap") else {
        bail!("bubblewrap (`bwrap`) is not installed: `apt-get install bubblewrap`");
    };
    if !bwrap_works(&bwrap) {
        bail!(
            "`{}` is installed but cannot create namespaces here (try `bwrap --ro-bind / / --unshare-all true`)",
            bwrap.display()
        );
    }
    Ok(SandboxKind::Bubblewrap(bwrap))
}

/// The sandboxes one executor hands out: the mode's kind for every action, and in the
/// `forest` mode bubblewrap for actions that ask for it (looked for once, on first use, so builds
/// that never ask do not pay for the probe).
pub struct Sandboxes {
    mode: SandboxMode,
    default: SandboxKind,
    strict: OnceLock<SandboxKind>,
    worker: Option<PathBuf>,
}

impl Sandboxes {
    pub fn new(mode: SandboxMode, worker: Option<PathBuf>) -> Result<Sandboxes> {
        let default = match mode {
            SandboxMode::Bubblewrap => find_worker(worker.as_deref())?,
            SandboxMode::BubblewrapPerAction => find_bwrap()?,
            SandboxMode::SymlinkForest => SandboxKind::SymlinkForest,
        };
        Ok(Sandboxes {
            mode,
            default,
            strict: OnceLock::new(),
            worker,
        })
    }

    /// What most actions run in: `bubblewrap`, `bubblewrap-per-action` or `symlink-forest`.
    pub fn name(&self) -> &'static str {
        self.default.name()
    }

    /// The sandbox for an action (`strict`: it sets [`STRICT_ENV`]), and whether it asked
    /// for bubblewrap but gets the forest because bubblewrap does not work here.
    pub fn for_action(&self, strict: bool) -> (&SandboxKind, bool) {
        if self.mode != SandboxMode::SymlinkForest || !strict {
            return (&self.default, false);
        }
        let kind = self.strict.get_or_init(|| {
            find_worker(self.worker.as_deref()).unwrap_or(SandboxKind::SymlinkForest)
        });
        (kind, matches!(kind, SandboxKind::SymlinkForest))
    }
}

/// What the once-per-build notice says when an action asks for bubblewrap and cannot have it.
pub const FOREST_NOTICE: &str = "forge: an action asks for the strict sandbox (FORGE_SANDBOX_STRICT=1) but bubblewrap (`bwrap`) is not available, so it runs in the symlink-forest sandbox: undeclared project files are hidden, but absolute paths, the network and writes through input symlinks are not. Install the Debian package `bubblewrap` for the strict sandbox.";

/// One action's sandbox.
pub struct Sandbox<'a> {
    pub kind: &'a SandboxKind,
    pub root: &'a Path,
    /// The sandbox directory (mirrors the project root).
    pub dir: PathBuf,
    /// Project-relative inputs, deduplicated, without paths nested in another input.
    inputs: Vec<String>,
    /// Extra read-only mounts for bubblewrap: targets of symlinks inside inputs.
    extra_mounts: Vec<String>,
    outputs: &'a [OutputDecl],
    scratch: &'a str,
    passthrough: &'a [String],
    /// The project-relative passthrough paths that exist, resolved through their symlinks
    /// (once [`Sandbox::prepare`] made the missing ones under `buck-out/`).
    resolved: OnceLock<Vec<Passthrough>>,
    network: bool,
}

fn is_under(path: &str, dir: &str) -> bool {
    dir.is_empty() || path == dir || (path.starts_with(dir) && path.as_bytes()[dir.len()] == b'/')
}

/// Adds `rel` (project-relative) and every ancestor of it, down to `""` (the sandbox).
fn add_with_ancestors(dirs: &mut BTreeSet<String>, rel: &str) {
    let mut p = rel;
    while dirs.insert(p.to_string()) && !p.is_empty() {
        p = parent_of(p);
    }
}

/// Drops paths that sit inside another path of the set.
fn outermost(paths: impl IntoIterator<Item = String>) -> Vec<String> {
    let sorted: BTreeSet<String> = paths.into_iter().collect();
    let mut out: Vec<String> = Vec::new();
    for p in sorted {
        if !out.iter().any(|o| is_under(&p, o)) {
            out.push(p);
        }
    }
    out
}

/// Replaces inputs that together are the whole of a directory by that directory, up the
/// tree as far as that holds: bubblewrap then mounts one directory instead of each file.
/// A directory is whole when every entry the file system lists in it is an input (or a
/// whole directory); one that holds, or lies inside, an output, the scratch dir or a
/// passthrough path (`apart`) is never merged, and neither is the project root.
fn whole_dirs(root: &Path, inputs: Vec<String>, apart: &[&str]) -> Vec<String> {
    let mut set: BTreeSet<String> = inputs.into_iter().collect();
    loop {
        let mut parents: Vec<String> = set
            .iter()
            .map(|p| parent_of(p).to_string())
            .filter(|d| !d.is_empty() && !set.contains(d))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        // Deepest first, so a merged directory can make its parent whole on the next round.
        parents.sort_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
        let mut merged = false;
        for d in parents {
            if set.contains(&d) || apart.iter().any(|a| is_under(a, &d) || is_under(&d, a)) {
                continue;
            }
            let Ok(entries) = fs::read_dir(root.join(&d)) else {
                continue;
            };
            let whole = entries.into_iter().all(|e| {
                e.is_ok_and(|e| set.contains(&format!("{d}/{}", e.file_name().to_string_lossy())))
            });
            if whole {
                set.retain(|p| !is_under(p, &d));
                set.insert(d);
                merged = true;
            }
        }
        if !merged {
            return set.into_iter().collect();
        }
    }
}

/// The project-relative `[forge] sandbox_passthrough` paths (made visible read-write).
pub(crate) fn relative_passthrough(passthrough: &[String]) -> impl Iterator<Item = &str> {
    passthrough
        .iter()
        .map(|p| p.trim_end_matches('/'))
        .filter(|p| !p.starts_with('/') && !p.starts_with("~/") && !p.is_empty())
}

fn expand_home(p: &str) -> Option<PathBuf> {
    if let Some(rest) = p.strip_prefix("~/") {
        Some(PathBuf::from(std::env::var_os("HOME")?).join(rest))
    } else if p.starts_with('/') {
        Some(PathBuf::from(p))
    } else {
        None
    }
}

impl<'a> Sandbox<'a> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        kind: &'a SandboxKind,
        root: &'a Path,
        dir: PathBuf,
        inputs: &[String],
        outputs: &'a [OutputDecl],
        scratch: &'a str,
        passthrough: &'a [String],
        network: bool,
    ) -> Sandbox<'a> {
        let mut inputs = outermost(inputs.iter().cloned());
        if kind.at_root() {
            let apart: Vec<&str> = outputs
                .iter()
                .map(|o| o.path.as_str())
                .chain([scratch])
                .chain(relative_passthrough(passthrough))
                .collect();
            inputs = whole_dirs(root, inputs, &apart);
        }
        let extra_mounts = if kind.at_root() {
            symlink_targets(root, &inputs)
        } else {
            Vec::new()
        };
        Sandbox {
            kind,
            root,
            dir,
            inputs,
            extra_mounts,
            outputs,
            scratch,
            passthrough,
            resolved: OnceLock::new(),
            network,
        }
    }

    fn resolved(&self) -> &[Passthrough] {
        self.resolved
            .get_or_init(|| passthrough::resolve(self.root, self.passthrough))
    }

    /// Project paths a passthrough is shown at: each path itself and, when it resolves to
    /// another directory of the project, that directory's path too.
    fn passthrough_mount_points(&self) -> impl Iterator<Item = &str> {
        self.resolved()
            .iter()
            .flat_map(|p| std::iter::once(p.rel.as_str()).chain(p.real_in_project.as_deref()))
    }

    fn relative_passthrough(&self) -> impl Iterator<Item = &str> {
        relative_passthrough(self.passthrough)
    }

    /// Where the scratch dir lives in the on-disk sandbox. The persistent bubblewrap binds one
    /// directory of its sandbox, kept from action to action, at each action's scratch path,
    /// instead of making and deleting that path's directories every time.
    fn scratch_on_disk(&self) -> &str {
        match self.kind {
            SandboxKind::Worker { .. } => WORKER_SCRATCH,
            _ => self.scratch,
        }
    }

    /// Writable directories: output parents and the scratch dir.
    fn writable_dirs(&self) -> Vec<String> {
        outermost(
            self.outputs
                .iter()
                .map(|o| parent_of(&o.path).to_string())
                .chain(std::iter::once(self.scratch.to_string())),
        )
    }

    /// Creates the sandbox tree in `self.dir`, which either does not exist yet (`existing`
    /// empty) or holds exactly the directories `existing` (project-relative, `""` being the
    /// sandbox itself) and nothing else — a forest sandbox that [`Sandbox::release`] emptied
    /// after an earlier action. Directories this action does not need are moved out first,
    /// so the tree the action sees is the same either way. Returns the directories it holds.
    pub fn prepare(
        &self,
        existing: BTreeSet<String>,
        janitor: &Janitor,
    ) -> Result<BTreeSet<String>> {
        for o in self.outputs {
            if let Some(i) = self.inputs.iter().find(|i| is_under(&o.path, i)) {
                bail!(
                    "output `{}` lies inside input `{i}`; an action cannot write into its inputs",
                    o.path
                );
            }
        }
        for p in self.relative_passthrough() {
            // A shared cache dir under buck-out (e.g. a cargo target dir) may not exist yet;
            // without it the action would find a read-only path instead.
            if p.starts_with("buck-out/") && !self.root.join(p).exists() {
                fs::create_dir_all(self.root.join(p))?;
            }
        }
        let mut dirs = BTreeSet::new();
        for o in self.outputs {
            add_with_ancestors(&mut dirs, parent_of(&o.path));
        }
        add_with_ancestors(&mut dirs, self.scratch_on_disk());
        let passthrough: Vec<String> = self
            .passthrough_mount_points()
            .map(str::to_string)
            .collect();
        let mounted = outermost(
            self.inputs
                .iter()
                .chain(&self.extra_mounts)
                .chain(&passthrough)
                .cloned(),
        );
        // (path, real path, bubblewrap mount point is a directory)
        let mut entries = Vec::new();
        // The persistent sandbox makes its mount points in each action's own tmpfs.
        let mirrored = if matches!(self.kind, SandboxKind::Worker { .. }) {
            &[][..]
        } else {
            &mounted[..]
        };
        for rel in mirrored {
            if dirs.contains(rel.as_str()) {
                // An output parent or the scratch dir already holds this path.
                continue;
            }
            add_with_ancestors(&mut dirs, parent_of(rel));
            let real = self.root.join(rel);
            let is_dir = matches!(self.kind, SandboxKind::Bubblewrap(_)) && real.is_dir();
            entries.push((rel, real, is_dir));
        }
        for (rel, _, is_dir) in &entries {
            if *is_dir {
                dirs.insert(rel.to_string());
            }
        }
        // Directories of earlier actions this one does not need: an empty one (a leaf) is
        // renamed into a directory this action needs, so a worker's sandbox neither makes nor
        // deletes directories from one action to the next; the others go outermost first (one
        // rename each). New ones are made parents first (set order puts a parent before its
        // children). The persistent bubblewrap shows an action only its binds, so there an
        // empty stale directory outside the writable ones is invisible and is kept for a later
        // action. (At most KEPT_DIRS of them, so the walk in `release` stays short.)
        let worker = matches!(self.kind, SandboxKind::Worker { .. });
        let writable = self.writable_dirs();
        let invisible = |d: &str| worker && !writable.iter().any(|w| is_under(d, w));
        let parents: BTreeSet<&str> = existing.iter().map(|e| parent_of(e)).collect();
        let mut kept = BTreeSet::new();
        let mut spare = Vec::new();
        for stale in existing.difference(&dirs) {
            let parent = parent_of(stale);
            if !dirs.contains(parent) && !kept.contains(parent) {
                continue; // it went with its parent
            }
            if !parents.contains(stale.as_str()) {
                spare.push(stale.clone());
            } else if invisible(stale) && kept.len() < KEPT_DIRS {
                kept.insert(stale.clone());
            } else {
                janitor.discard(&self.dir.join(stale));
            }
        }
        if existing.is_empty() {
            fs::create_dir_all(&self.dir)
                .with_context(|| format!("creating sandbox `{}`", self.dir.display()))?;
        }
        for d in dirs.difference(&existing) {
            if d.is_empty() {
                continue;
            }
            let inside = self.dir.join(d);
            if let Some(old) = spare.pop() {
                // Never an ancestor of `d` (a needed directory's ancestors are needed) nor
                // under it (a new directory has nothing under it yet).
                if fs::rename(self.dir.join(&old), &inside).is_ok() {
                    continue;
                }
                janitor.discard(&self.dir.join(&old));
            }
            fs::create_dir(&inside).with_context(|| format!("creating `{}`", inside.display()))?;
        }
        for old in spare {
            if invisible(&old) && kept.len() < KEPT_DIRS {
                kept.insert(old);
            } else {
                janitor.discard(&self.dir.join(old));
            }
        }
        for (rel, real, is_dir) in &entries {
            if *is_dir {
                continue;
            }
            let inside = self.dir.join(rel);
            match self.kind {
                SandboxKind::SymlinkForest => symlink(real, &inside),
                // bubblewrap needs an existing mount point in the read-only sandbox.
                _ => fs::File::create(&inside).map(drop),
            }
            .with_context(|| format!("mirroring `{rel}` into the sandbox"))?;
        }
        dirs.extend(kept);
        Ok(dirs)
    }

    /// After a successful run whose outputs were moved out and which wrote nothing
    /// undeclared: empties a forest sandbox (or the persistent bubblewrap's, which holds only
    /// the writable directories) back to bare directories (input links and the scratch dir
    /// removed) so the next action of the same worker can reuse it instead of creating and
    /// deleting a whole tree. `None` when that is not possible; the caller then discards the
    /// sandbox.
    pub fn release(
        &self,
        mut dirs: BTreeSet<String>,
        janitor: &Janitor,
    ) -> Option<BTreeSet<String>> {
        if !matches!(
            self.kind,
            SandboxKind::SymlinkForest | SandboxKind::Worker { .. }
        ) {
            return None;
        }
        let mut walk = walkdir::WalkDir::new(&self.dir).min_depth(1).into_iter();
        let scratch = self.dir.join(self.scratch_on_disk());
        // Every known directory must still be there (the action may have removed one).
        let mut seen = 1;
        while let Some(entry) = walk.next() {
            let entry = entry.ok()?;
            if entry.path() == scratch {
                seen += 1;
                walk.skip_current_dir();
                continue;
            }
            let rel = entry.path().strip_prefix(&self.dir).ok()?.to_str()?;
            if entry.file_type().is_dir() && dirs.contains(rel) {
                seen += 1;
                continue;
            }
            // Only the input links are left besides the known directories (a symlink to a
            // directory is not descended into).
            if !entry.path_is_symlink() {
                return None;
            }
            fs::remove_file(entry.path()).ok()?;
        }
        if seen != dirs.len() {
            return None;
        }
        // A forest's scratch path is per target, so the next action needs another one anyway;
        // the persistent bubblewrap's one scratch dir stays if the action left it empty.
        let keep = matches!(self.kind, SandboxKind::Worker { .. })
            && fs::read_dir(&scratch).is_ok_and(|mut d| d.next().is_none());
        if !keep {
            if fs::remove_dir(&scratch).is_err() {
                janitor.discard(&scratch);
            }
            dirs.remove(self.scratch_on_disk());
        }
        Some(dirs)
    }

    /// TMPDIR as the action sees it.
    pub fn tmpdir(&self) -> PathBuf {
        if self.kind.at_root() {
            self.root.join(self.scratch)
        } else {
            self.dir.join(self.scratch)
        }
    }

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

    /// Paths the action created outside its declared outputs and scratch dir.
    /// (`prepared`: the directories [`Sandbox::prepare`] made or kept, which are forge's.)
    pub fn undeclared_writes(&self, prepared: &BTreeSet<String>) -> Vec<String> {
        let mut allowed: Vec<String> = self.inputs.clone();
        allowed.extend(self.extra_mounts.iter().cloned());
        allowed.extend(self.relative_passthrough().map(str::to_string));
        allowed.extend(self.passthrough_mount_points().map(str::to_string));
        allowed.extend(self.outputs.iter().map(|o| o.path.clone()));
        allowed.push(self.scratch_on_disk().to_string());
        let mut found = Vec::new();
        let mut walk = walkdir::WalkDir::new(&self.dir).min_depth(1).into_iter();
        while let Some(Ok(entry)) = walk.next() {
            let rel = entry
                .path()
                .strip_prefix(&self.dir)
                .expect("walkdir stays under its root")
                .to_string_lossy()
                .into_owned();
            if allowed.iter().any(|a| is_under(&rel, a)) {
                if entry.file_type().is_dir() {
                    walk.skip_current_dir();
                }
                continue;
            }
            let is_ancestor = entry.file_type().is_dir()
                && (prepared.contains(&rel)
                    || allowed
                        .iter()
                        .any(|a| is_under(a, &rel) || is_under(parent_of(a), &rel)));
            if !is_ancestor {
                found.push(rel);
                if entry.file_type().is_dir() {
                    walk.skip_current_dir();
                }
            }
        }
        found
    }

    pub fn remove(&self, janitor: &Janitor) {
        janitor.discard(&self.dir);
    }
}

/// The persistent bubblewrap's scratch dir in its on-disk sandbox (no project path starts
/// with it: only output directories, all under `buck-out/`, are made there besides).
const WORKER_SCRATCH: &str = ".forge-scratch";

/// How many empty directories of earlier actions a persistent bubblewrap's sandbox keeps.
const KEPT_DIRS: usize = 16;

/// Project paths that symlinks inside the given inputs point at (so bubblewrap can mount
/// them too; the symlink forest resolves them through the real tree).
fn symlink_targets(root: &Path, inputs: &[String]) -> Vec<String> {
    let mut found = BTreeSet::new();
    let mut queue: Vec<PathBuf> = inputs.iter().map(|i| root.join(i)).collect();
    let mut visited = BTreeSet::new();
    while let Some(path) = queue.pop() {
        if !visited.insert(path.clone()) {
            continue;
        }
        for entry in walkdir::WalkDir::new(&path).into_iter().flatten() {
            if !entry.path_is_symlink() {
                continue;
            }
            let Ok(target) = fs::canonicalize(entry.path()) else {
                continue;
            };
            if let Ok(rel) = target.strip_prefix(root) {
                let rel = rel.to_string_lossy().into_owned();
                if !inputs.iter().any(|i| is_under(&rel, i)) && found.insert(rel) {
                    queue.push(target);
                }
            }
        }
    }
    found.into_iter().collect()
}
