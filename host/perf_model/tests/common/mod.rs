//! What the tests share: the hand-worked pipeline's stages (hand.rs, whole.rs) and the
//! deployments' files from the env (deployments.rs, replicas.rs).

#![allow(dead_code)] // each test file uses a part

use std::path::PathBuf;

use perf_model::{Stage, StageKind};

pub const US: f64 = 1e-6;

pub fn stage(
    name: &str,
    kind: StageKind,
    rows: (u32, u32),
    frame_us: f64,
    need: Vec<u32>,
    delay_us: f64,
) -> Stage {
    Stage {
        name: name.into(),
        kind,
        device: "d".into(),
        in_rows: rows.0,
        out_rows: rows.1,
        frame_s: frame_us * US,
        need,
        delay_s: delay_us * US,
    }
}

/// Source: 4 rows in 4 µs (rows out at 1, 2, 3, 4 µs).
/// A: 4 -> 4 rows, 8 µs (2 µs a row): row 1 starts at 1, done 3; then back to back: 5, 7, 9.
/// B: a 3-row window with stride 1, 4 -> 2 rows, 2 µs (1 µs a row): row 1 needs A's row 3
/// (at 7), done 8; row 2 needs A's row 4 (at 9), done 10.  Latency 10 µs; 1 frame / 8 µs.
pub fn three_stages() -> Vec<Stage> {
    vec![
        stage("src", StageKind::Source, (4, 4), 4.0, vec![1, 2, 3, 4], 0.0),
        stage("A", StageKind::Layer, (4, 4), 8.0, vec![1, 2, 3, 4], 0.0),
        stage("B", StageKind::Layer, (4, 2), 2.0, vec![3, 4], 0.0),
    ]
}

/// A file the BUCK target passes in the env; forge gives project-relative paths, the test runs
/// in the crate directory.
pub fn path(var: &str) -> PathBuf {
    let v = std::env::var(var).unwrap_or_else(|_| {
        panic!("{var} is not set: run these tests with `./forge test //host/perf_model:tests`, which builds the deployments and sets it")
    });
    let p = PathBuf::from(&v);
    if p.is_absolute() {
        return p;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(p)
}
