//! Conformance: runs the engine over every workspace in `conformance/` and compares the
//! results with `expected.json`, whose expectations come from upstream buck2's observed
//! behaviour (not from forge's output).
//!
//! Each case runs in a fresh copy of its workspace (or, with `"same_tree": true`, in the
//! copy left by the previous case). The engine defaults to the forge binary built by cargo;
//! `CONFORMANCE_ENGINE=/path/to/buck2` (kind inferred from the name, or set with
//! `CONFORMANCE_ENGINE_KIND=buck2|forge`) runs the same set under upstream buck2
//! (see `conformance/run-under-buck2.sh`). `CONFORMANCE_ONLY=ws[,ws/case...]` narrows the
//! run; `CONFORMANCE_DIR` points at another set of workspaces. All mismatches are collected and reported together, each with its workspace and case.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

const COMMAND_TIMEOUT: Duration = Duration::from_secs(300);

/// Case keys that describe the case rather than check its result.
const META_KEYS: &[&str] = &[
    "name",
    "ref",
    "args",
    "cwd",
    "same_tree",
    "before_write",
    "engines",
    "undocumented",
    "forge",
    "buck2",
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum EngineKind {
    Forge,
    Buck2,
}

struct Engine {
    kind: EngineKind,
    binary: PathBuf,
    /// buck2's `--isolation-dir`: each daemon sharing a machine needs its own
    /// (`CONFORMANCE_BUCK2_ISOLATION_DIR`, default `v2`, buck2's own default).
    isolation: String,
}

impl Engine {
    fn from_env() -> Engine {
        match std::env::var_os("CONFORMANCE_ENGINE") {
            Some(binary) => {
                let binary = PathBuf::from(binary);
                let name = binary
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let kind = match std::env::var("CONFORMANCE_ENGINE_KIND").as_deref() {
                    Ok("buck2") => EngineKind::Buck2,
                    Ok("forge") => EngineKind::Forge,
                    _ if name.contains("buck2") => EngineKind::Buck2,
                    _ => EngineKind::Forge,
                };
                let isolation = match kind {
                    EngineKind::Buck2 => std::env::var("CONFORMANCE_BUCK2_ISOLATION_DIR")
                        .unwrap_or_else(|_| "v2".to_owned()),
                    EngineKind::Forge => "forge".to_owned(),
                };
                Engine {
                    kind,
                    binary,
                    isolation,
                }
            }
            None => Engine {
                kind: EngineKind::Forge,
                binary: PathBuf::from(env!("CARGO_BIN_EXE_forge")),
                isolation: "forge".to_owned(),
            },
        }
    }

    /// The isolation directory under `buck-out/` that `<BUCK_OUT>` stands for.
    fn isolation_dir(&self) -> String {
        format!("buck-out/{}", self.isolation)
    }

    /// Global flags that go before the subcommand.
    fn global_args(&self) -> Vec<String> {
        match self.kind {
            EngineKind::Buck2 => vec!["--isolation-dir".to_owned(), self.isolation.clone()],
            EngineKind::Forge => Vec::new(),
        }
    }

    fn extra_key(&self) -> &'static str {
        match self.kind {
            EngineKind::Forge => "forge",
            EngineKind::Buck2 => "buck2",
        }
    }
}

/// Expected exit status: a number, or `"nonzero"` where buck2's exact code is not observed.
#[derive(Deserialize, Clone, Debug)]
#[serde(untagged)]
enum ExitSpec {
    Code(i32),
    Word(String),
}

impl ExitSpec {
    fn accepts(&self, code: Option<i32>) -> Result<bool, String> {
        match self {
            ExitSpec::Code(c) => Ok(code == Some(*c)),
            ExitSpec::Word(w) if w == "nonzero" => Ok(matches!(code, Some(c) if c != 0)),
            ExitSpec::Word(w) => Err(format!("unknown exit spec {w:?}")),
        }
    }
}

/// What a case checks. Also the shape of the engine-specific `forge` / `buck2` extras.
#[derive(Deserialize, Default, Clone, Debug)]
#[serde(deny_unknown_fields)]
struct Checks {
    exit: Option<ExitSpec>,
    /// Exact stdout after normalisation.
    stdout: Option<String>,
    #[serde(default)]
    stdout_contains: Vec<String>,
    #[serde(default)]
    stdout_not_contains: Vec<String>,
    #[serde(default)]
    stderr_contains: Vec<String>,
    #[serde(default)]
    stderr_not_contains: Vec<String>,
    /// Substrings that must occur in stderr in this order.
    #[serde(default)]
    stderr_in_order: Vec<String>,
    /// Path pattern -> expected content (after normalisation of the actual content).
    #[serde(default)]
    files: BTreeMap<String, String>,
    /// Path pattern -> octal permission bits (symlinks followed).
    #[serde(default)]
    modes: BTreeMap<String, String>,
    #[serde(default)]
    files_absent: Vec<String>,
}

impl Checks {
    fn merge(&mut self, extra: Checks) {
        if extra.exit.is_some() {
            self.exit = extra.exit;
        }
        if extra.stdout.is_some() {
            self.stdout = extra.stdout;
        }
        self.stdout_contains.extend(extra.stdout_contains);
        self.stdout_not_contains.extend(extra.stdout_not_contains);
        self.stderr_contains.extend(extra.stderr_contains);
        self.stderr_not_contains.extend(extra.stderr_not_contains);
        self.stderr_in_order.extend(extra.stderr_in_order);
        self.files.extend(extra.files);
        self.modes.extend(extra.modes);
        self.files_absent.extend(extra.files_absent);
    }
}

struct Case {
    name: String,
    args: Vec<String>,
    cwd: Option<String>,
    same_tree: bool,
    /// Files (project-relative) rewritten before the command runs, e.g. an edited source.
    before_write: BTreeMap<String, String>,
    /// Engines the case applies to (a forge-only command such as `log what-ran`).
    engines: Option<Vec<String>>,
    checks: Checks,
}

fn parse_case(raw: &Value, engine: &Engine) -> Result<Case, String> {
    let obj = raw.as_object().ok_or("a case must be an object")?;
    let name = obj
        .get("name")
        .and_then(Value::as_str)
        .ok_or("a case needs a string `name`")?
        .to_owned();
    let ctx = |e: serde_json::Error| format!("case {name}: {e}");
    let args: Vec<String> =
        serde_json::from_value(obj.get("args").cloned().ok_or("missing `args`")?).map_err(ctx)?;
    let cwd = obj.get("cwd").and_then(Value::as_str).map(str::to_owned);
    let same_tree = obj
        .get("same_tree")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let before_write: BTreeMap<String, String> = match obj.get("before_write") {
        Some(v) => serde_json::from_value(v.clone()).map_err(ctx)?,
        None => BTreeMap::new(),
    };
    let engines: Option<Vec<String>> = match obj.get("engines") {
        Some(v) => Some(serde_json::from_value(v.clone()).map_err(ctx)?),
        None => None,
    };
    let rest: serde_json::Map<String, Value> = obj
        .iter()
        .filter(|(k, _)| !META_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut checks: Checks = serde_json::from_value(Value::Object(rest)).map_err(ctx)?;
    if checks.exit.is_none() {
        return Err(format!("case {name}: `exit` is required"));
    }
    if let Some(extra) = obj.get(engine.extra_key()) {
        checks.merge(serde_json::from_value(extra.clone()).map_err(ctx)?);
    }
    Ok(Case {
        name,
        args,
        cwd,
        same_tree,
        before_write,
        engines,
        checks,
    })
}

fn conformance_root() -> PathBuf {
    match std::env::var_os("CONFORMANCE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance"),
    }
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry?;
        let rel = entry.path().strip_prefix(from).expect("walk stays inside");
        if rel.starts_with("buck-out") {
            continue;
        }
        let dest = to.join(rel);
        let ty = entry.file_type();
        if ty.is_dir() {
            fs::create_dir_all(&dest)?;
        } else if ty.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(entry.path())?, &dest)?;
        } else {
            // fs::copy keeps the permission bits (executable scripts stay executable).
            fs::copy(entry.path(), &dest)?;
        }
    }
    Ok(())
}

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run_engine(engine: &Engine, root: &Path, case: &Case) -> Result<Outcome, String> {
    let cwd = match &case.cwd {
        Some(sub) => root.join(sub),
        None => root.to_path_buf(),
    };
    let mut child = Command::new(&engine.binary)
        .args(engine.global_args())
        .args(&case.args)
        .current_dir(&cwd)
        // A test must never see these (O10); build actions may (O3).
        .env("CONFORMANCE_LEAK", "leaked")
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", engine.binary.display()))?;
    // Drain both pipes on threads so a chatty engine cannot block on a full pipe.
    let mut out_pipe = child.stdout.take().expect("piped");
    let mut err_pipe = child.stderr.take().expect("piped");
    let out_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out_pipe.read_to_end(&mut buf);
        buf
    });
    let err_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err_pipe.read_to_end(&mut buf);
        buf
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > COMMAND_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "timed out after {}s: {}",
                COMMAND_TIMEOUT.as_secs(),
                case.args.join(" ")
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = out_thread.join().unwrap_or_default();
    let stderr = err_thread.join().unwrap_or_default();
    Ok(Outcome {
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    })
}

/// Rewrites machine- and engine-specific parts of a text: the project root becomes
/// `<PROJECT>`, the isolation dir `<BUCK_OUT>`, configuration hashes in output paths
/// `<CFG>`, scratch hashes `<HASH>`, forge's forest sandbox dirs `<ID>` (conformance/README.md, Normalisation), a test's `(1.2s)` `(<DURATION>)`; colours and buck2's
/// line timestamps are dropped.
fn normalise(text: &str, project_roots: &[String], engine: &Engine) -> String {
    // Presentation, not behaviour: buck2 colours the test summary even into a pipe, and
    // prefixes each line with a timestamp when stderr is not a terminal.
    static ANSI: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"\x1b\[[0-9;]*m").unwrap());
    static STAMP: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?m)^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+[+-]\d\d:\d\d\] ?").unwrap()
    });
    static DURATION: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"\(\d+\.\ds\)").unwrap());
    let s = ANSI.replace_all(text, "");
    let s = STAMP.replace_all(&s, "");
    let mut s = DURATION.replace_all(&s, "(<DURATION>)").into_owned();
    for root in project_roots {
        s = s.replace(root.as_str(), "<PROJECT>");
    }
    s = s.replace(&engine.isolation_dir(), "<BUCK_OUT>");
    for (prefix, placeholder) in [("<BUCK_OUT>/art/", "<CFG>"), ("<BUCK_OUT>/tmp/", "<HASH>")] {
        s = replace_hash_after_cell(&s, prefix, placeholder);
    }
    // forge's symlink-forest sandbox: `sandbox/<8 hex of the build id>-<n>`
    static SANDBOX: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"<BUCK_OUT>/sandbox/[0-9a-f]{8}-[0-9]+").unwrap()
    });
    SANDBOX
        .replace_all(&s, "<BUCK_OUT>/sandbox/<ID>")
        .into_owned()
}

/// In `<prefix><cell>/<16 hex>`, replaces the hex with `placeholder`.
fn replace_hash_after_cell(s: &str, prefix: &str, placeholder: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(pos) = rest.find(prefix) {
        let after_prefix = pos + prefix.len();
        out.push_str(&rest[..after_prefix]);
        rest = &rest[after_prefix..];
        let Some(slash) = rest.find('/') else {
            continue;
        };
        let cell = &rest[..slash];
        if cell.is_empty() || !cell.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let candidate = &rest[slash + 1..];
        let is_hash = candidate.len() >= 16
            && candidate.as_bytes()[..16].iter().all(u8::is_ascii_hexdigit)
            && !candidate
                .as_bytes()
                .get(16)
                .is_some_and(|b| b.is_ascii_alphanumeric());
        if is_hash {
            out.push_str(cell);
            out.push('/');
            out.push_str(placeholder);
            rest = &candidate[16..];
        }
    }
    out.push_str(rest);
    out
}

/// All existing paths under `root` that match `pattern`: `<BUCK_OUT>` is the engine's
/// isolation dir, `<CFG>`/`<HASH>` any 16-hex directory.
fn resolve(root: &Path, pattern: &str, engine: &Engine) -> Vec<PathBuf> {
    let expanded = pattern.replace("<BUCK_OUT>", &engine.isolation_dir());
    let mut candidates = vec![root.to_path_buf()];
    for component in expanded.split('/').filter(|c| !c.is_empty()) {
        let mut next = Vec::new();
        for dir in &candidates {
            if component == "<CFG>" || component == "<HASH>" {
                let Ok(entries) = fs::read_dir(dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if name.len() == 16 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
                        next.push(entry.path());
                    }
                }
            } else {
                let path = dir.join(component);
                // symlink_metadata: a dangling symlink still counts as present.
                if fs::symlink_metadata(&path).is_ok() {
                    next.push(path);
                }
            }
        }
        candidates = next;
    }
    candidates
}

fn show_block(text: &str) -> String {
    if text.is_empty() {
        return "    <empty>\n".to_owned();
    }
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        out.push_str("    |");
        out.push_str(&line.replace('\n', "⏎\n"));
    }
    if !text.ends_with('\n') {
        out.push_str("  <no trailing newline>\n");
    }
    out
}

fn check_case(
    engine: &Engine,
    root: &Path,
    case: &Case,
    outcome: &Outcome,
    roots: &[String],
) -> Vec<String> {
    let mut problems = Vec::new();
    let c = &case.checks;
    let stdout = normalise(&outcome.stdout, roots, engine);
    let stderr = normalise(&outcome.stderr, roots, engine);
    let exit = c.exit.as_ref().expect("validated at parse");
    match exit.accepts(outcome.code) {
        Ok(true) => {}
        Ok(false) => problems.push(format!(
            "exit code: expected {exit:?}, got {:?}",
            outcome.code
        )),
        Err(e) => problems.push(e),
    }
    if let Some(expected) = &c.stdout {
        if &stdout != expected {
            problems.push(format!(
                "stdout differs\n  expected:\n{}  got:\n{}",
                show_block(expected),
                show_block(&stdout)
            ));
        }
    }
    for needle in &c.stdout_contains {
        if !stdout.contains(needle.as_str()) {
            problems.push(format!("stdout lacks {needle:?}"));
        }
    }
    for needle in &c.stdout_not_contains {
        if stdout.contains(needle.as_str()) {
            problems.push(format!("stdout must not contain {needle:?}"));
        }
    }
    for needle in &c.stderr_contains {
        if !stderr.contains(needle.as_str()) {
            problems.push(format!("stderr lacks {needle:?}"));
        }
    }
    for needle in &c.stderr_not_contains {
        if stderr.contains(needle.as_str()) {
            problems.push(format!("stderr must not contain {needle:?}"));
        }
    }
    let mut rest = stderr.as_str();
    for needle in &c.stderr_in_order {
        match rest.find(needle.as_str()) {
            Some(pos) => rest = &rest[pos + needle.len()..],
            None => {
                problems.push(format!(
                    "stderr lacks, in order, {:?} (missing from {needle:?} on)",
                    c.stderr_in_order
                ));
                break;
            }
        }
    }
    for (pattern, expected) in &c.files {
        let found = resolve(root, pattern, engine);
        let Some(path) = found.iter().find(|p| p.is_file()) else {
            problems.push(format!("missing output file {pattern}"));
            continue;
        };
        match fs::read(path) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let got = normalise(&text, roots, engine);
                if &got != expected {
                    problems.push(format!(
                        "content of {pattern} differs\n  expected:\n{}  got:\n{}",
                        show_block(expected),
                        show_block(&got)
                    ));
                }
            }
            Err(e) => problems.push(format!("cannot read {pattern}: {e}")),
        }
    }
    for (pattern, mode) in &c.modes {
        let found = resolve(root, pattern, engine);
        let Some(path) = found.first() else {
            problems.push(format!("missing output {pattern} (mode check)"));
            continue;
        };
        match fs::metadata(path) {
            Ok(meta) => {
                let got = format!("{:o}", meta.permissions().mode() & 0o777);
                if &got != mode {
                    problems.push(format!("mode of {pattern}: expected {mode}, got {got}"));
                }
            }
            Err(e) => problems.push(format!("cannot stat {pattern}: {e}")),
        }
    }
    for pattern in &c.files_absent {
        if let Some(path) = resolve(root, pattern, engine).first() {
            problems.push(format!(
                "{pattern} must not exist, found {}",
                path.strip_prefix(root).unwrap_or(path).display()
            ));
        }
    }
    if !problems.is_empty() {
        problems.push(format!(
            "full stderr (normalised):\n{}",
            show_block(&stderr)
        ));
    }
    problems
}

fn selected(filter: &Option<Vec<String>>, workspace: &str, case: &str) -> bool {
    match filter {
        None => true,
        Some(items) => items
            .iter()
            .any(|f| f == workspace || *f == format!("{workspace}/{case}")),
    }
}

fn stop_daemon(engine: &Engine, root: &Path) {
    if engine.kind == EngineKind::Buck2 {
        let _ = Command::new(&engine.binary)
            .args(engine.global_args())
            .arg("kill")
            .current_dir(root)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

fn workspaces() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(conformance_root())
        .expect("conformance/ exists next to engine/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("expected.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn conformance_workspaces() {
    let engine = Engine::from_env();
    let filter = std::env::var("CONFORMANCE_ONLY")
        .ok()
        .map(|s| s.split(',').map(str::to_owned).collect::<Vec<_>>());
    let all = workspaces();
    assert!(
        all.len() >= 20,
        "expected the conformance workspaces under {}",
        conformance_root().display()
    );

    let mut failures: Vec<String> = Vec::new();
    let mut passed = 0usize;
    for ws in &all {
        let ws_name = ws.file_name().unwrap().to_string_lossy().into_owned();
        let spec: Value = serde_json::from_str(
            &fs::read_to_string(ws.join("expected.json")).expect("readable expected.json"),
        )
        .unwrap_or_else(|e| panic!("{ws_name}/expected.json: {e}"));
        let raw_cases = spec["cases"]
            .as_array()
            .unwrap_or_else(|| panic!("{ws_name}/expected.json: `cases` must be a list"));
        let mut tree: Option<tempfile::TempDir> = None;
        for raw in raw_cases {
            let case =
                parse_case(raw, &engine).unwrap_or_else(|e| panic!("{ws_name}/expected.json: {e}"));
            if !selected(&filter, &ws_name, &case.name) {
                continue;
            }
            if let Some(engines) = &case.engines {
                if !engines.iter().any(|e| e == engine.extra_key()) {
                    continue;
                }
            }
            if !case.same_tree || tree.is_none() {
                if let Some(old) = tree.take() {
                    stop_daemon(&engine, old.path());
                }
                let dir = tempfile::Builder::new()
                    .prefix(&format!("conformance-{ws_name}-"))
                    .tempdir()
                    .expect("temp dir");
                copy_tree(ws, dir.path()).expect("copy workspace");
                tree = Some(dir);
            }
            let root = tree.as_ref().unwrap().path().to_path_buf();
            for (path, content) in &case.before_write {
                fs::write(root.join(path), content)
                    .unwrap_or_else(|e| panic!("{ws_name}/{}: writing {path}: {e}", case.name));
            }
            let mut roots = vec![root.to_string_lossy().into_owned()];
            if let Ok(canon) = root.canonicalize() {
                let canon = canon.to_string_lossy().into_owned();
                if canon != roots[0] {
                    roots.insert(0, canon);
                }
            }
            let label = format!("{ws_name}/{}", case.name);
            let problems = match run_engine(&engine, &root, &case) {
                Ok(outcome) => check_case(&engine, &root, &case, &outcome, &roots),
                Err(e) => vec![e],
            };
            if problems.is_empty() {
                passed += 1;
                eprintln!("ok    {label}");
            } else {
                eprintln!("FAIL  {label}");
                failures.push(format!(
                    "== {label}: `{} {}`\n{}",
                    engine.extra_key(),
                    case.args.join(" "),
                    problems
                        .iter()
                        .map(|p| format!("  - {p}"))
                        .collect::<Vec<_>>()
                        .join("\n")
                ));
            }
        }
        if let Some(old) = tree.take() {
            stop_daemon(&engine, old.path());
        }
    }
    eprintln!("{passed} passed, {} failed", failures.len());
    assert!(
        failures.is_empty(),
        "{} conformance case(s) failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn normalisation_matches_the_conformance_notation() {
    let roots = vec!["/tmp/conformance-x".to_owned()];
    let buck2 = Engine {
        kind: EngineKind::Buck2,
        binary: PathBuf::from("buck2"),
        isolation: "v2".to_owned(),
    };
    let forge = Engine {
        kind: EngineKind::Forge,
        binary: PathBuf::from("forge"),
        isolation: "forge".to_owned(),
    };
    assert_eq!(
        normalise(
            "root//:a buck-out/v2/art/root/1ef78538d8598cb2/__a__/a.txt",
            &roots,
            &buck2
        ),
        "root//:a <BUCK_OUT>/art/root/<CFG>/__a__/a.txt"
    );
    assert_eq!(
        normalise(
            "/tmp/conformance-x/buck-out/forge/tmp/root/0123456789abcdef/probe",
            &roots,
            &forge
        ),
        "<PROJECT>/<BUCK_OUT>/tmp/root/<HASH>/probe"
    );
    assert_eq!(
        normalise(
            "getcwd=/tmp/conformance-x/buck-out/forge/sandbox/3f2a9c01-12\n",
            &roots,
            &forge
        ),
        "getcwd=<PROJECT>/<BUCK_OUT>/sandbox/<ID>\n"
    );
    assert_eq!(
        normalise(
            "[2026-12-02T01:14:26.022+00:00] \x1b[38;5;9m✗ Fail: root//t:f (0.1s)\x1b[39m\n",
            &roots,
            &buck2
        ),
        "✗ Fail: root//t:f (<DURATION>)\n"
    );
    // A 17-character name is not a hash; a package named like a hash is kept.
    assert_eq!(
        normalise("buck-out/v2/art/root/0123456789abcdef0/x", &roots, &buck2),
        "<BUCK_OUT>/art/root/0123456789abcdef0/x"
    );
}

/// The benchmark's generator must emit a workspace forge builds, and its Makefile the same
/// graph: every output of forge must equal make's byte for byte (make is the reference).
#[test]
fn bench_generator_matches_make() {
    let engine = Engine::from_env();
    let have = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    // make is the reference here: without it (tools/bootstrap/apt.txt) the test fails.
    assert!(
        have("python3") && have("make"),
        "python3 and GNU make are needed to check the benchmark generator \
         (`./forge` installs make from tools/bootstrap/apt.txt)"
    );
    let dir = tempfile::Builder::new()
        .prefix("bench-smoke-")
        .tempdir()
        .expect("temp dir");
    let root = dir.path();
    let generator = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/generate.py");
    let status = Command::new("python3")
        .arg(&generator)
        .args(["--targets", "12", "--packages", "3", "--out"])
        .arg(root)
        .status()
        .expect("run generator");
    assert!(status.success(), "bench/generate.py failed");

    let build = Command::new(&engine.binary)
        .args(["build", "//..."])
        .current_dir(root)
        .output()
        .expect("run the engine");
    assert!(
        build.status.success(),
        "building the generated workspace failed:\n{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let make = Command::new("make")
        .args(["-s", "all"])
        .current_dir(root)
        .output()
        .expect("run make");
    assert!(
        make.status.success(),
        "make failed:\n{}",
        String::from_utf8_lossy(&make.stderr)
    );

    let mut compared = 0;
    for p in 0..3 {
        for t in 0..4 {
            let reference = fs::read(root.join(format!("make-out/p{p}/t{t}.out"))).unwrap();
            let pattern = format!("<BUCK_OUT>/art/root/<CFG>/p{p}/__t{t}__/t{t}.out");
            let found = resolve(root, &pattern, &engine);
            let path = found
                .first()
                .unwrap_or_else(|| panic!("the engine did not produce {pattern}"));
            assert_eq!(
                fs::read(path).unwrap(),
                reference,
                "{pattern} differs from make's output"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 12);
}
