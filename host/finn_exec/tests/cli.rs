//! The `finn-exec` CLI: batches in and out through .npy and raw files, clear errors.

use std::fs;
use std::process::Command;

use finn_exec::npy;
use serde_json::json;

fn label_select_model(dir: &std::path::Path) {
    let g = json!({
        "format": "auroraforge-finn-exec/1", "inputs": ["x"], "outputs": ["y"],
        "tensors": {"x": {"shape": [1, 4], "dtype": "UINT8"}, "y": {"shape": [1, 2], "dtype": "UINT8"}},
        "initializers": {},
        "nodes": [{"name": "ls", "op_type": "LabelSelect", "inputs": ["x"], "outputs": ["y"], "attrs": {"K": 2}}]
    });
    fs::write(dir.join("graph.json"), g.to_string()).unwrap();
}

#[test]
fn runs_a_batch_from_npy_and_raw() {
    let d = tempfile::tempdir().unwrap();
    label_select_model(d.path());
    let x = d.path().join("x.npy");
    npy::write_i64(&x, &[2, 4], &[1, 7, 3, 9, 200, 0, 0, 100]).unwrap();
    let y = d.path().join("y.npy");
    let st = Command::new(env!("CARGO_BIN_EXE_finn-exec"))
        .args([
            "--model",
            d.path().to_str().unwrap(),
            "--input",
            x.to_str().unwrap(),
            "--output",
            y.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(st.success());
    let out = npy::read(&y).unwrap();
    assert_eq!(out.shape, vec![2, 2]);
    assert_eq!(out.integers("y").unwrap(), vec![3, 1, 0, 3]);

    let raw = d.path().join("x.bin");
    fs::write(&raw, [5u8, 4, 3, 2]).unwrap();
    let yr = d.path().join("y.bin");
    let st = Command::new(env!("CARGO_BIN_EXE_finn-exec"))
        .args([
            "--model",
            d.path().to_str().unwrap(),
            "--input",
            raw.to_str().unwrap(),
            "--output",
            yr.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(st.success());
    let b = fs::read(&yr).unwrap();
    assert_eq!(b.len(), 16);
    assert_eq!(i64::from_le_bytes(b[..8].try_into().unwrap()), 0);
    assert_eq!(i64::from_le_bytes(b[8..].try_into().unwrap()), 1);
}

#[test]
fn wrong_shape_names_the_file_and_input() {
    let d = tempfile::tempdir().unwrap();
    label_select_model(d.path());
    let x = d.path().join("x.npy");
    npy::write_i64(&x, &[3, 5], &[0; 15]).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_finn-exec"))
        .args([
            "--model",
            d.path().to_str().unwrap(),
            "--input",
            x.to_str().unwrap(),
            "--output",
            "/dev/null",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("x.npy") && e.contains("input x: shape [3, 5]"),
        "{e}"
    );
}
