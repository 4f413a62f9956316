//! Per-action overhead of forge's executor (sandbox + cache bookkeeping) for trivial
//! actions, with the symlink forest, with the persistent bubblewrap sandbox (the default)
//! and with a fresh bubblewrap per action, against the same commands spawned directly (what
//! GNU make does). Run: `cargo bench -p forge_exec --bench sandbox_overhead`.

use std::process::Command;
use std::time::Instant;

use forge_core::{Action, ActionGraph, ActionId, ActionKind, ArtifactRef, OutputDecl, TargetLabel};
use forge_exec::{ConsoleMode, ExecOptions, Executor, SandboxMode};

const N: usize = 200;

fn graph() -> (ActionGraph, Vec<ArtifactRef>) {
    let mut g = ActionGraph::default();
    let mut wanted = Vec::new();
    for i in 0..N {
        let path = format!("buck-out/forge/art/root/1ef78538d8598cb2/b/__t{i}__/o.txt");
        let id = ActionId(i);
        g.producers.insert(path.clone(), id);
        g.actions.push(Action {
            id,
            owner: TargetLabel {
                cell: "root".into(),
                package: "b".into(),
                name: format!("t{i}"),
            },
            category: "echo".into(),
            identifier: None,
            kind: ActionKind::Run {
                argv: vec![
                    "/bin/sh".into(),
                    "-c".into(),
                    "echo $0 > $1".into(),
                    i.to_string(),
                    path.clone(),
                ],
                env: Vec::new(),
                local_only: false,
                prefer_local: false,
                allow_cache_upload: None,
                weight: 1,
                scratch: format!("buck-out/forge/tmp/root/0123456789abcdef/echo{i}"),
            },
            inputs: Vec::new(),
            outputs: vec![OutputDecl {
                path: path.clone(),
                is_dir: false,
            }],
        });
        wanted.push(ArtifactRef::Build(path));
    }
    (g, wanted)
}

/// Workspaces are deleted only when every variant has run: deleting thousands of inodes just
/// before a timed build slows that build's creates (ext4 without a journal scans past every
/// inode deleted in the last ~30 s), which would time the previous variant's cleanup.
static KEPT: std::sync::Mutex<Vec<tempfile::TempDir>> = std::sync::Mutex::new(Vec::new());

fn workspace() -> std::path::PathBuf {
    let ws = tempfile::tempdir().unwrap();
    let path = ws.path().to_path_buf();
    KEPT.lock().unwrap().push(ws);
    path
}

/// (full build seconds, no-op rebuild seconds)
fn forge(mode: SandboxMode) -> Option<(f64, f64)> {
    let ws = workspace();
    let mut o = ExecOptions::new(&ws);
    o.sandbox = mode;
    o.sandbox_worker = Some(env!("CARGO_BIN_EXE_forge-sandbox").into());
    o.console = ConsoleMode::Quiet;
    o.jobs = 1;
    let exec = Executor::new(o).ok()?;
    let (g, wanted) = graph();
    let t = Instant::now();
    let r = exec.build(&g, &wanted).unwrap();
    assert_eq!(r.local, N);
    let full = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let r = exec.build(&g, &wanted).unwrap();
    assert_eq!(r.up_to_date, N);
    Some((full, t.elapsed().as_secs_f64()))
}

fn direct() -> f64 {
    let ws = workspace();
    let t = Instant::now();
    for i in 0..N {
        let out = ws.join(format!("o{i}.txt"));
        let s = Command::new("/bin/sh")
            .args(["-c", "echo $0 > $1", &i.to_string(), &out.to_string_lossy()])
            .status()
            .unwrap();
        assert!(s.success());
    }
    t.elapsed().as_secs_f64()
}

fn main() {
    let ms = |s: f64| s * 1000.0 / N as f64;
    // For profiling one variant alone: FORGE_BENCH_ONLY=forest|bubblewrap|bwrap-per-action.
    if let Ok(only) = std::env::var("FORGE_BENCH_ONLY") {
        let mode = SandboxMode::parse(&only).expect("a sandbox mode");
        let (full, noop) = forge(mode).expect("sandbox available");
        println!(
            "{only}: {:.2} ms/action, no-op {:.2} ms/action",
            ms(full),
            ms(noop)
        );
        KEPT.lock().unwrap().clear();
        return;
    }
    let peer = direct();
    println!("{N} trivial actions, one at a time (jobs = 1); per action:");
    println!(
        "  {:<39} {:7.2} ms",
        "direct spawn (peer, as make does)",
        ms(peer)
    );
    let forest = forge(SandboxMode::SymlinkForest).unwrap();
    println!(
        "  forge, {:<32} {:7.2} ms  ({:.2}x peer); no-op rebuild {:.2} ms/action",
        "symlink forest",
        ms(forest.0),
        forest.0 / peer,
        ms(forest.1)
    );
    let fresh = forge(SandboxMode::BubblewrapPerAction);
    let persistent = forge(SandboxMode::Bubblewrap);
    for (name, m) in [
        ("bubblewrap per action", fresh),
        ("bubblewrap, persistent (default)", persistent),
    ] {
        match m {
            Some(m) => println!(
                "  forge, {name:<32} {:7.2} ms  ({:.2}x peer, {:.2}x forest); no-op rebuild {:.2} ms/action",
                ms(m.0),
                m.0 / peer,
                m.0 / forest.0,
                ms(m.1)
            ),
            None => println!("  forge, {name}: unavailable on this machine"),
        }
    }
    if let (Some(f), Some(p)) = (fresh, persistent) {
        println!("  persistent / per action: {:.2}x", p.0 / f.0);
    }
    // (Statics are never dropped: the workspaces go here.)
    KEPT.lock().unwrap().clear();
}
