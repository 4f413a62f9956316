//! Which sandbox runs an action: the configured mode, the bubblewrap (or persistent worker)
//! found on this machine, and the choice per action.

use super::*;

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
    pub(super) fn at_root(&self) -> bool {
        !matches!(self, SandboxKind::SymlinkForest)
    }
}

pub(super) fn bwrap_works(bwrap: &Path) -> bool {
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
pub(super) fn find_worker(program: Option<&Path>) -> Result<SandboxKind> {
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
