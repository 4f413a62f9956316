//! The remote-cache glue, against fake `RemoteCache` implementations: a server that fails
//! every call (the build must degrade to local execution) and an in-memory one.

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::common::*;
use anyhow::{anyhow, Result};
use forge_core::ArtifactRef;
use forge_exec::RemoteMode;
use forge_reapi::{ActionDescription, Digest, LocalOutput, OutputEntry, RemoteCache, RemoteHit};
use sha2::Digest as _;

#[derive(Default)]
struct DownRemote {
    calls: AtomicUsize,
}

impl RemoteCache for DownRemote {
    fn lookup(&self, _: &ActionDescription) -> Result<Option<RemoteHit>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Err(anyhow!("connection refused (127.0.0.1:1)"))
    }
    fn fetch(&self, _: &Digest, _: &Path) -> Result<()> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Err(anyhow!("connection refused"))
    }
    fn upload(&self, _: &ActionDescription, _: &[LocalOutput], _: &[u8], _: &[u8]) -> Result<()> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Err(anyhow!("connection refused"))
    }
}

type Entry = (Vec<OutputEntry>, Vec<String>, Vec<u8>, Vec<u8>);

#[derive(Default)]
struct MemoryRemote {
    results: Mutex<HashMap<String, Entry>>,
    blobs: Mutex<HashMap<String, Vec<u8>>>,
    uploads: AtomicUsize,
}

fn key(d: &ActionDescription) -> String {
    let inputs: Vec<_> = d
        .inputs
        .iter()
        .map(|i| (&i.path, &i.digest.hash, i.is_executable))
        .collect();
    format!(
        "{:?}",
        (
            &d.argv,
            &d.env,
            &d.output_files,
            &d.output_dirs,
            inputs,
            &d.platform
        )
    )
}

impl MemoryRemote {
    fn add_file(&self, path: String, on_disk: &Path, files: &mut Vec<OutputEntry>) {
        use std::os::unix::fs::PermissionsExt;
        let bytes = fs::read(on_disk).unwrap();
        let hash = hex::encode(sha2::Sha256::digest(&bytes));
        let exec = fs::metadata(on_disk).unwrap().permissions().mode() & 0o111 != 0;
        files.push(OutputEntry {
            path,
            digest: Digest {
                hash: hash.clone(),
                size_bytes: bytes.len() as i64,
            },
            is_executable: exec,
        });
        self.blobs.lock().unwrap().insert(hash, bytes);
    }
}

impl RemoteCache for MemoryRemote {
    fn lookup(&self, d: &ActionDescription) -> Result<Option<RemoteHit>> {
        Ok(self
            .results
            .lock()
            .unwrap()
            .get(&key(d))
            .map(|(files, dirs, o, e)| RemoteHit {
                files: files.clone(),
                dirs: dirs.clone(),
                stdout: o.clone(),
                stderr: e.clone(),
            }))
    }
    fn fetch(&self, digest: &Digest, dest: &Path) -> Result<()> {
        let bytes = self
            .blobs
            .lock()
            .unwrap()
            .get(&digest.hash)
            .cloned()
            .ok_or_else(|| anyhow!("missing blob"))?;
        fs::create_dir_all(dest.parent().unwrap())?;
        let tmp = dest.with_extension("part");
        fs::write(&tmp, bytes)?;
        fs::rename(tmp, dest)?;
        Ok(())
    }
    fn upload(
        &self,
        d: &ActionDescription,
        outputs: &[LocalOutput],
        stdout: &[u8],
        stderr: &[u8],
    ) -> Result<()> {
        self.uploads.fetch_add(1, Ordering::SeqCst);
        let mut files = Vec::new();
        let mut dirs = Vec::new();
        for o in outputs {
            if o.is_dir {
                dirs.push(o.path.clone());
                for e in walkdir::WalkDir::new(&o.on_disk).sort_by_file_name() {
                    let e = e?;
                    if e.file_type().is_file() {
                        let rel = e
                            .path()
                            .strip_prefix(&o.on_disk)?
                            .to_string_lossy()
                            .into_owned();
                        self.add_file(format!("{}/{rel}", o.path), e.path(), &mut files);
                    }
                }
            } else {
                self.add_file(o.path.clone(), &o.on_disk, &mut files);
            }
        }
        self.results
            .lock()
            .unwrap()
            .insert(key(d), (files, dirs, stdout.to_vec(), stderr.to_vec()));
        Ok(())
    }
}

/// `gen` (uploadable) -> `tree` (dir output, uploadable) ; `private` (upload not allowed).
fn graph() -> (GraphBuilder, Vec<String>) {
    let mut g = GraphBuilder::default();
    let gen = out("r", "t", "gen.txt");
    let tree = out("r", "t", "tree");
    let private = out("r", "p", "p.txt");
    g.run(
        RunSpec::new(
            label("r", "t"),
            "gen",
            &["/bin/sh", "-c", "cat r/src.txt r/src.txt > $1", "--", &gen],
        )
        .source("r/src.txt")
        .output(&gen)
        .upload(true),
    );
    g.run(RunSpec::new(label("r", "t"), "tree", &["/bin/sh", "-c", "mkdir -p $1/d && cp $2 $1/d/copy && printf '#!/bin/sh\\n' > $1/run.sh && chmod +x $1/run.sh", "--", &tree, &gen]).input(&gen).dir_output(&tree).upload(true));
    g.run(
        RunSpec::new(
            label("r", "p"),
            "private",
            &["/bin/sh", "-c", "echo p > $1", "--", &private],
        )
        .output(&private),
    );
    (g, vec![gen, tree, private])
}

fn wanted(paths: &[String]) -> Vec<ArtifactRef> {
    paths.iter().cloned().map(ArtifactRef::Build).collect()
}

#[test]
fn remote_errors_degrade_to_local_execution() {
    let ws = tempfile::tempdir().unwrap();
    write_file(ws.path(), "r/src.txt", "s\n");
    let (g, paths) = graph();
    let remote = Arc::new(DownRemote::default());
    let exec = with_remote(ws.path(), remote.clone(), RemoteMode::ReadWrite);
    let report = exec.build(&g.graph, &wanted(&paths)).unwrap();
    assert_eq!(report.local, 3, "{report:?}");
    assert!(report.remote_errors >= 1, "errors are counted: {report:?}");
    assert!(
        remote.calls.load(Ordering::SeqCst) <= 3,
        "a dead server is not asked for every action"
    );
    assert_eq!(read(ws.path(), &paths[0]), "s\ns\n");
}

#[test]
fn results_uploaded_by_one_workspace_are_served_to_another() {
    let remote = Arc::new(MemoryRemote::default());
    let first = tempfile::tempdir().unwrap();
    write_file(first.path(), "r/src.txt", "s\n");
    let (g, paths) = graph();
    let report = with_remote(first.path(), remote.clone(), RemoteMode::ReadWrite)
        .build(&g.graph, &wanted(&paths))
        .unwrap();
    assert_eq!(report.local, 3);
    // `private` has allow_cache_upload = None and default_allow_cache_upload = false.
    assert_eq!(remote.uploads.load(Ordering::SeqCst), 2);

    let second = tempfile::tempdir().unwrap();
    write_file(second.path(), "r/src.txt", "s\n");
    let report = with_remote(second.path(), remote.clone(), RemoteMode::Read)
        .build(&g.graph, &wanted(&paths))
        .unwrap();
    assert_eq!(
        (report.remote, report.local, report.remote_errors),
        (2, 1, 0),
        "{report:?}"
    );
    for p in [
        &paths[0],
        &format!("{}/d/copy", paths[1]),
        &format!("{}/run.sh", paths[1]),
    ] {
        assert_eq!(
            fs::read(first.path().join(p)).unwrap(),
            fs::read(second.path().join(p)).unwrap(),
            "{p}"
        );
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(second.path().join(format!("{}/run.sh", paths[1])))
        .unwrap()
        .permissions()
        .mode();
    assert!(
        mode & 0o111 != 0,
        "the executable bit survives the remote round trip"
    );
    assert_eq!(
        remote.uploads.load(Ordering::SeqCst),
        2,
        "Read mode never uploads"
    );

    // A remote hit lands in the local cache too: the next build is a no-op.
    let exec = with_remote(second.path(), remote, RemoteMode::Off);
    let report = exec.build(&g.graph, &wanted(&paths)).unwrap();
    assert_eq!(report.commands(), 0, "{report:?}");
}

#[test]
fn a_corrupt_remote_blob_is_a_miss_not_a_wrong_output() {
    let remote = Arc::new(MemoryRemote::default());
    let first = tempfile::tempdir().unwrap();
    write_file(first.path(), "r/src.txt", "s\n");
    let (g, paths) = graph();
    with_remote(first.path(), remote.clone(), RemoteMode::ReadWrite)
        .build(&g.graph, &wanted(&paths))
        .unwrap();
    // Damage every stored blob on the "server"; a careless client would hand it back as is.
    for bytes in remote.blobs.lock().unwrap().values_mut() {
        bytes.push(b'!');
    }
    let second = tempfile::tempdir().unwrap();
    write_file(second.path(), "r/src.txt", "s\n");
    let report = with_remote(second.path(), remote, RemoteMode::Read)
        .build(&g.graph, &wanted(&paths))
        .unwrap();
    assert_eq!(report.remote, 0, "{report:?}");
    assert_eq!(report.local, 3, "{report:?}");
    assert!(report.remote_errors >= 1, "{report:?}");
    assert_eq!(read(second.path(), &paths[0]), "s\ns\n");
}
