//! Restore time of a 100 MB artifact from BuildGrid on loopback vs a plain `cp` of the same
//! file, measured in the same run: `cargo bench -p forge_reapi --bench restore_bench`.
//! Other restore paths (the executor's local cache) are added as rows in `main`.

use forge_testkit as common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use forge_reapi::{ActionDescription, LocalOutput, RemoteCache};

const SIZE: u64 = 100_000_000;
const RUNS: usize = 5;

struct Row {
    name: &'static str,
    times: Vec<Duration>,
}

impl Row {
    fn median(&self) -> Duration {
        let mut t = self.times.clone();
        t.sort();
        t[t.len() / 2]
    }
}

fn measure(name: &'static str, mut restore: impl FnMut(&Path), scratch: &Path) -> Row {
    let mut times = Vec::new();
    for i in 0..RUNS {
        let dest = scratch.join(format!("{name}-{i}/top.xclbin").replace(' ', "_"));
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        let t = Instant::now();
        restore(&dest);
        times.push(t.elapsed());
        assert_eq!(std::fs::metadata(&dest).unwrap().len(), SIZE);
        std::fs::remove_file(&dest).unwrap();
    }
    Row { name, times }
}

fn main() {
    let Some(server) = common::BuildGrid::start() else {
        eprintln!("restore_bench: BuildGrid unavailable, nothing measured");
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let artifact = work.path().join("top.xclbin");
    common::write_random_file(&artifact, SIZE, 7);
    let act = ActionDescription {
        argv: vec!["v++".into(), "-l".into(), "bench".into()],
        env: vec![],
        output_files: vec!["out/top.xclbin".into()],
        output_dirs: vec![],
        inputs: vec![],
        platform: vec![],
    };
    let t = Instant::now();
    server
        .client()
        .upload(
            &act,
            &[LocalOutput {
                path: "out/top.xclbin".into(),
                on_disk: artifact.clone(),
                is_dir: false,
            }],
            b"",
            b"",
        )
        .unwrap();
    let upload = t.elapsed();

    let scratch = work.path().join("restore");
    let cp = measure(
        "cp",
        |dest| {
            let ok = Command::new("cp")
                .arg(&artifact)
                .arg(dest)
                .status()
                .unwrap()
                .success();
            assert!(ok);
        },
        &scratch,
    );
    let client = server.client();
    let remote = measure(
        "BuildGrid (loopback)",
        |dest| restore(client.as_ref(), &act, dest),
        &scratch,
    );
    let rows = [cp, remote];

    println!(
        "restore of a {} MB artifact, median of {RUNS} runs (warm page cache); upload took {:.2} s",
        SIZE / 1_000_000,
        upload.as_secs_f64()
    );
    println!(
        "{:<24} {:>10} {:>10} {:>10} {:>8}",
        "method", "median", "min", "MB/s", "x cp"
    );
    let base = rows[0].median().as_secs_f64();
    for row in &rows {
        let med = row.median().as_secs_f64();
        let min = row.times.iter().min().unwrap().as_secs_f64();
        println!(
            "{:<24} {:>9.3}s {:>9.3}s {:>10.0} {:>8.2}",
            row.name,
            med,
            min,
            SIZE as f64 / 1e6 / med,
            med / base
        );
    }
}

/// What a clean machine does on a hit: look the action up, then stream the blob to disk.
fn restore(client: &dyn RemoteCache, act: &ActionDescription, dest: &Path) {
    let hit = client.lookup(act).unwrap().expect("the artifact is cached");
    client.fetch(&hit.files[0].digest, dest).unwrap();
}
