//! A 100 MB artifact through ByteStream against a real BuildGrid: intact, and never held in
//! memory whole. (Own test binary, so the peak-memory reading sees only this test.)

use forge_testkit as common;

use common::BuildGrid;
use forge_reapi::{ActionDescription, Digest, LocalOutput};

const SIZE: u64 = 100_000_000;

fn reset_peak_rss() {
    // Writing 5 to clear_refs resets VmHWM to the current RSS (Linux >= 4.0).
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
}

#[test]
fn hundred_megabyte_artifact_round_trips_with_bounded_memory() {
    let Some(server) = BuildGrid::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let original = work.path().join("top.xclbin");
    common::write_random_file(&original, SIZE, 42);
    let reference = common::sha256sum(&original);
    let act = ActionDescription {
        argv: vec!["v++".into(), "-l".into()],
        env: vec![],
        output_files: vec!["out/top.xclbin".into()],
        output_dirs: vec![],
        inputs: vec![],
        platform: vec![],
    };
    reset_peak_rss();
    let before = common::peak_rss_kib();
    server
        .client()
        .upload(
            &act,
            &[LocalOutput {
                path: "out/top.xclbin".into(),
                on_disk: original.clone(),
                is_dir: false,
            }],
            b"",
            b"",
        )
        .unwrap();
    let fresh = server.client();
    let hit = fresh.lookup(&act).unwrap().expect("hit");
    assert_eq!(hit.files.len(), 1);
    let entry = &hit.files[0];
    assert_eq!(
        entry.digest.hash, reference,
        "the cached digest is the file's SHA-256"
    );
    assert_eq!(entry.digest.size_bytes as u64, SIZE);
    let restored = work.path().join("restored/out/top.xclbin");
    fresh.fetch(&entry.digest, &restored).unwrap();
    let grew_mib = (common::peak_rss_kib().saturating_sub(before)) / 1024;
    assert_eq!(common::sha256sum(&restored), reference);
    assert_eq!(Digest::of_file(&restored).unwrap(), entry.digest);
    eprintln!("peak memory growth during a 100 MB upload + restore: {grew_mib} MiB");
    assert!(
        grew_mib < 64,
        "upload + restore of 100 MB grew the peak RSS by {grew_mib} MiB: not streamed"
    );
    // The server stored exactly the bytes too (its disk storage, read independently).
    assert_eq!(
        common::sha256sum(&server.blob_path(&entry.digest)),
        reference
    );
}
