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
mod kind;
mod launch;
pub(crate) mod passthrough;
mod paths;
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

pub(crate) use kind::find_bwrap;
pub use kind::{SandboxKind, SandboxMode, Sandboxes, FOREST_NOTICE};
pub(crate) use paths::relative_passthrough;
use paths::{add_with_ancestors, expand_home, is_under, outermost, symlink_targets, whole_dirs};

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
