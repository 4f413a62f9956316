//! Executor behaviour against buck2's observed behaviour (conformance/README.md O1, O3, O11:
//! workspaces `run_action`, `err_action_fails`, `err_missing_output`)
//! and the cache/sandbox guarantees forge adds.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::*;
use forge_core::ArtifactRef;
use forge_exec::{what_ran, BuildFailed, SandboxMode};

fn failure_text(err: &anyhow::Error) -> String {
    err.downcast_ref::<BuildFailed>()
        .unwrap_or_else(|| panic!("expected BuildFailed, got: {err:#}"))
        .to_string()
}

#[test]
fn runs_only_needed_actions_in_parallel() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let mut g = GraphBuilder::default();
    let a = out("p", "a", "a.txt");
    let b = out("p", "b", "b.txt");
    let unused = out("p", "unused", "u.txt");
    for (name, path) in [("a", &a), ("b", &b), ("unused", &unused)] {
        g.run(
            RunSpec::new(
                label("p", name),
                "slow",
                &[
                    "/bin/sh",
                    "-c",
                    "date +%s%N > $1; sleep 0.6; date +%s%N >> $1",
                    "--",
                    path,
                ],
            )
            .output(path),
        );
    }
    let exec = executor(root, SandboxMode::Bubblewrap);
    let t = Instant::now();
    let report = exec
        .build(
            &g.graph,
            &[ArtifactRef::Build(a.clone()), ArtifactRef::Build(b.clone())],
        )
        .unwrap();
    let took = t.elapsed().as_secs_f64();
    assert_eq!(
        report.local, 2,
        "only the two wanted actions run (lazy, O3)"
    );
    assert_eq!(
        report.summary_lines(),
        [
            "Cache hits: 0%",
            "Commands: 2 (cached: 0, remote: 0, local: 2)"
        ],
        "buck2's summary lines (O1)"
    );
    assert!(
        !root.join(&unused).exists(),
        "an unwanted action must not run"
    );
    let span = |p: &str| -> (u128, u128) {
        let s = read(root, p);
        let v: Vec<u128> = s.lines().map(|l| l.trim().parse().unwrap()).collect();
        (v[0], v[1])
    };
    let (a0, a1) = span(&a);
    let (b0, b1) = span(&b);
    assert!(
        a0 < b1 && b0 < a1,
        "the two actions overlapped in time (jobs = 2)"
    );
    // Sequential would take >= 1.2 s; only the overlap is asserted (machine load cannot
    // fake it, while it can slow any run down).
    eprintln!("two 0.6 s actions took {took:.2}s");
}

#[test]
fn weight_limits_concurrency() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let mut g = GraphBuilder::default();
    let paths: Vec<String> = (0..2)
        .map(|i| out("p", &format!("w{i}"), "t.txt"))
        .collect();
    for (i, path) in paths.iter().enumerate() {
        g.run(
            RunSpec::new(
                label("p", &format!("w{i}")),
                "heavy",
                &[
                    "/bin/sh",
                    "-c",
                    "date +%s%N > $1; sleep 0.3; date +%s%N >> $1",
                    "--",
                    path,
                ],
            )
            .output(path)
            .weight(2),
        );
    }
    let exec = executor(root, SandboxMode::Bubblewrap);
    let wanted: Vec<ArtifactRef> = paths.iter().cloned().map(ArtifactRef::Build).collect();
    exec.build(&g.graph, &wanted).unwrap();
    let spans: Vec<Vec<u128>> = paths
        .iter()
        .map(|p| read(root, p).lines().map(|l| l.parse().unwrap()).collect())
        .collect();
    let disjoint = spans[0][1] <= spans[1][0] || spans[1][1] <= spans[0][0];
    assert!(
        disjoint,
        "two weight-2 actions with 2 jobs must not overlap: {spans:?}"
    );
}

#[test]
fn failing_action_is_reported_like_buck2_and_stops_scheduling() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let mut g = GraphBuilder::default();
    let never = out("", "broken", "never.txt");
    let later = out("", "later", "later.txt");
    g.run(
        RunSpec::new(
            label("", "broken"),
            "failing_step",
            &[
                "/bin/sh",
                "-c",
                "echo to-stdout; echo 'it broke' >&2; exit 3",
                "--",
                &never,
            ],
        )
        .id("the_identifier")
        .output(&never),
    );
    g.run(
        RunSpec::new(
            label("", "later"),
            "step",
            &["/bin/sh", "-c", "touch $1", "--", &later],
        )
        .output(&later),
    );
    let mut opts = options(root, SandboxMode::Bubblewrap);
    opts.jobs = 1;
    let exec = forge_exec::Executor::new(opts).unwrap();
    let err = exec
        .build(
            &g.graph,
            &[
                ArtifactRef::Build(never.clone()),
                ArtifactRef::Build(later.clone()),
            ],
        )
        .unwrap_err();
    let text = failure_text(&err);
    // Lines as buck2 prints them (conformance/err_action_fails, O3 and O11).
    assert!(
        text.starts_with(
            "Action failed: root//:broken (<unspecified>) (failing_step the_identifier)\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("\nLocal command returned non-zero exit code 3\n"),
        "{text}"
    );
    let canonical = root.canonicalize().unwrap();
    assert!(
        text.contains(&format!(
            "Local command: env -C {} -- 'BUCK_SCRATCH_PATH=buck-out/forge/tmp/root/0123456789abcdef/failing_step/the_identifier' /bin/sh -c 'echo to-stdout; echo '\\''it broke'\\'' >&2; exit 3' -- {never}",
            canonical.display()
        )),
        "{text}"
    );
    assert!(
        text.contains("Stdout:\nto-stdout\nStderr:\nit broke"),
        "{text}"
    );
    assert!(
        text.contains("Full log: buck-out/forge/log/actions/"),
        "{text}"
    );
    let log = what_ran(root).unwrap();
    assert!(
        log.contains("failed") && log.contains("root//:broken"),
        "{log}"
    );
    let failed = err.downcast_ref::<BuildFailed>().unwrap();
    assert_eq!(failed.failures[0].owner, label("", "broken"));
    assert!(
        !root.join(&later).exists(),
        "no new action starts after a failure"
    );
}

#[test]
fn missing_declared_output_is_an_error() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let mut g = GraphBuilder::default();
    let made = out("", "lazy", "made.txt");
    let missing = out("", "lazy", "missing.txt");
    g.run(
        RunSpec::new(
            label("", "lazy"),
            "lazy_step",
            &["/bin/sh", "-c", "echo x > $1", "--", &made, &missing],
        )
        .output(&made)
        .output(&missing),
    );
    for mode in sandbox_modes() {
        let err = executor(root, mode)
            .build(&g.graph, &[ArtifactRef::Build(made.clone())])
            .unwrap_err();
        let text = failure_text(&err);
        assert!(
            text.starts_with("Action failed: root//:lazy (<unspecified>) (lazy_step)\n"),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "Required outputs are missing: Action failed to produce outputs: `{missing}`"
            )),
            "{text}"
        );
        assert!(
            !root.join(&made).exists(),
            "a failed action publishes no output ({mode:?})"
        );
    }
}

#[test]
fn missing_source_names_action_and_path() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let mut g = GraphBuilder::default();
    let o = out("pkg", "t", "o.txt");
    g.run(
        RunSpec::new(label("pkg", "t"), "cat", &["cat", "pkg/nope.txt"])
            .source("pkg/nope.txt")
            .output(&o),
    );
    let err = executor(root, SandboxMode::Bubblewrap)
        .build(&g.graph, &[ArtifactRef::Build(o)])
        .unwrap_err();
    let text = failure_text(&err);
    assert!(
        text.contains("Action failed: root//pkg:t (<unspecified>) (cat)"),
        "{text}"
    );
    assert!(text.contains("`pkg/nope.txt` does not exist"), "{text}");
}

#[test]
fn sandbox_sees_only_declared_inputs() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    write_file(root, "pkg/declared.txt", "declared\n");
    write_file(root, "pkg/secret.txt", "secret\n");
    for mode in sandbox_modes() {
        let mut g = GraphBuilder::default();
        let ok = out("pkg", "ok", "ok.txt");
        let peek = out("pkg", "peek", "peek.txt");
        let stray = out("pkg", "stray", "stray.txt");
        g.run(RunSpec::new(label("pkg", "ok"), "c", &["/bin/sh", "-c", "cat pkg/declared.txt > $1 && test -d $BUCK_SCRATCH_PATH && test -z \"$(ls -A $BUCK_SCRATCH_PATH)\" && test \"$TMPDIR\" = \"$PWD/$BUCK_SCRATCH_PATH\"", "--", &ok]).source("pkg/declared.txt").output(&ok));
        g.run(
            RunSpec::new(
                label("pkg", "peek"),
                "c",
                &["/bin/sh", "-c", "cat pkg/secret.txt > $1", "--", &peek],
            )
            .source("pkg/declared.txt")
            .output(&peek),
        );
        let beside = out("pkg", "beside", "o.txt");
        g.run(
            RunSpec::new(
                label("pkg", "stray"),
                "c",
                &[
                    "/bin/sh",
                    "-c",
                    "echo x > $1; echo y > stray-undeclared.txt",
                    "--",
                    &stray,
                ],
            )
            .output(&stray),
        );
        g.run(
            RunSpec::new(
                label("pkg", "beside"),
                "c",
                &[
                    "/bin/sh",
                    "-c",
                    "echo x > $1; echo y > \"$(dirname $1)/extra.txt\"",
                    "--",
                    &beside,
                ],
            )
            .output(&beside),
        );
        let exec = executor(root, mode);
        exec.build(&g.graph, &[ArtifactRef::Build(ok.clone())])
            .unwrap();
        assert_eq!(read(root, &ok), "declared\n");
        let err = exec
            .build(&g.graph, &[ArtifactRef::Build(peek.clone())])
            .unwrap_err();
        assert!(
            failure_text(&err).contains("secret.txt"),
            "{mode:?}: an undeclared file must be invisible"
        );
        let err = exec
            .build(&g.graph, &[ArtifactRef::Build(stray.clone())])
            .unwrap_err();
        assert!(!root.join("stray-undeclared.txt").exists());
        assert!(!root.join(&stray).exists(), "{mode:?}");
        let text = failure_text(&err);
        match mode {
            SandboxMode::Bubblewrap => assert!(text.contains("Read-only file system"), "{text}"),
            _ => assert!(
                text.contains("Action wrote undeclared paths: `stray-undeclared.txt`"),
                "{text}"
            ),
        }
        let err = exec
            .build(&g.graph, &[ArtifactRef::Build(beside.clone())])
            .unwrap_err();
        let text = failure_text(&err);
        let extra = out("pkg", "beside", "extra.txt");
        assert!(
            text.contains(&format!("Action wrote undeclared paths: `{extra}`")),
            "{mode:?}: {text}"
        );
        assert!(!root.join(&extra).exists() && !root.join(&beside).exists());
    }
}

#[test]
fn bubblewrap_hides_absolute_paths_and_network() {
    if !bwrap_available() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    write_file(&root, "secret.txt", "secret\n");
    let abs = root.join("secret.txt").to_string_lossy().into_owned();
    let mut g = GraphBuilder::default();
    let peek = out("", "abs", "o.txt");
    let outside = out("", "outside", "o.txt");
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    g.run(
        RunSpec::new(
            label("", "abs"),
            "c",
            &["/bin/sh", "-c", "cat \"$2\" > $1", "--", &peek, &abs],
        )
        .output(&peek),
    );
    g.run(
        RunSpec::new(
            label("", "outside"),
            "c",
            &[
                "/bin/sh",
                "-c",
                "touch $1; touch \"$2/forge-sandbox-escape\"",
                "--",
                &outside,
                &home,
            ],
        )
        .output(&outside),
    );
    let exec = executor(&root, SandboxMode::Bubblewrap);
    assert!(
        exec.build(&g.graph, &[ArtifactRef::Build(peek)]).is_err(),
        "absolute path to an undeclared file"
    );
    assert!(
        exec.build(&g.graph, &[ArtifactRef::Build(outside)])
            .is_err(),
        "write outside the sandbox"
    );
    assert!(!std::path::Path::new(&home)
        .join("forge-sandbox-escape")
        .exists());
}

/// Network interfaces the action sees (`/proc/net/dev` lists one per line after 2 headers).
fn interfaces_seen(env: Option<(&str, &str)>) -> usize {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let o = out("", "net", "o.txt");
    let mut g = GraphBuilder::default();
    let mut spec = RunSpec::new(
        label("", "net"),
        "c",
        &["/bin/sh", "-c", "tail -n +3 /proc/net/dev > $1", "--", &o],
    )
    .output(&o);
    if let Some((k, v)) = env {
        spec = spec.env(k, v);
    }
    g.run(spec);
    executor(root, SandboxMode::Bubblewrap)
        .build(&g.graph, &[ArtifactRef::Build(o.clone())])
        .unwrap();
    read(root, &o).lines().count()
}

#[test]
fn bubblewrap_network_only_when_the_action_asks() {
    let host = fs::read_to_string("/proc/net/dev").unwrap().lines().count() - 2;
    if !bwrap_available() {
        return;
    }
    if host < 2 {
        forge_allow_missing::missing(
            "host-network",
            "/proc/net/dev lists no interface besides loopback",
        );
        return;
    }
    assert_eq!(interfaces_seen(None), 1, "only loopback without network");
    assert_eq!(interfaces_seen(Some((forge_exec::NETWORK_ENV, "1"))), host);
}

/// A graph with a run action over a source, a dir output, a symlinked_dir, a copy, a write.
fn mixed_graph() -> (GraphBuilder, Vec<String>) {
    let mut g = GraphBuilder::default();
    let upper = out("pkg", "t", "upper.txt");
    let tree = out("pkg", "t", "tree");
    let links = out("pkg", "t", "links");
    let copy = out("pkg", "t", "copy.txt");
    let note = out("pkg", "t", "note.sh");
    g.run(
        RunSpec::new(
            label("pkg", "t"),
            "upper",
            &[
                "/bin/sh",
                "-c",
                "tr a-z A-Z < pkg/in.txt > $1",
                "--",
                &upper,
            ],
        )
        .source("pkg/in.txt")
        .output(&upper),
    );
    g.run(
        RunSpec::new(
            label("pkg", "t"),
            "tree",
            &[
                "/bin/sh",
                "-c",
                "mkdir -p $1/sub && cp $2 $1/sub/u.txt && echo b > $1/b.txt",
                "--",
                &tree,
                &upper,
            ],
        )
        .input(&upper)
        .dir_output(&tree),
    );
    g.symlinked_dir(
        label("pkg", "t"),
        &links,
        vec![
            ("x/u.txt", ArtifactRef::Build(upper.clone())),
            ("t", ArtifactRef::Build(tree.clone())),
        ],
    );
    g.copy(
        label("pkg", "t"),
        &copy,
        ArtifactRef::Build(format!("{tree}/sub/u.txt")),
    );
    g.write(label("pkg", "t"), &note, "#!/bin/sh\necho hi\n", true);
    (g, vec![upper, tree, links, copy, note])
}

#[test]
fn second_build_runs_zero_actions_and_restores_from_cache() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    write_file(root, "pkg/in.txt", "abc\n");
    let (g, paths) = mixed_graph();
    let wanted: Vec<ArtifactRef> = paths.iter().cloned().map(ArtifactRef::Build).collect();
    let exec = executor(root, SandboxMode::Bubblewrap);
    let first = exec.build(&g.graph, &wanted).unwrap();
    assert_eq!((first.local, first.in_process), (2, 3));
    assert_eq!(
        read(root, &format!("{}/x/u.txt", paths[2])),
        "ABC\n",
        "symlinked_dir resolves"
    );
    assert_eq!(read(root, &paths[3]), "ABC\n");
    assert_eq!(read(root, &format!("{}/t/b.txt", paths[2])), "b\n");
    let second = exec.build(&g.graph, &wanted).unwrap();
    assert_eq!(
        second.commands() + second.in_process,
        0,
        "no-op rebuild runs zero actions: {second:?}"
    );
    assert_eq!(second.up_to_date, 5);
    assert!(
        second.summary_lines().is_empty(),
        "no Commands line when nothing ran (O1)"
    );
    // Outputs deleted by hand come back from the local cache, not by running again.
    fs::remove_dir_all(root.join(&paths[1])).unwrap();
    fs::remove_file(root.join(&paths[0])).unwrap();
    let third = exec.build(&g.graph, &wanted).unwrap();
    assert_eq!((third.cached, third.local), (2, 0), "{third:?}");
    assert_eq!(read(root, &format!("{}/sub/u.txt", paths[1])), "ABC\n");
    let log = what_ran(root).unwrap();
    assert!(log.contains("cache"), "{log}");
}

#[test]
fn what_ran_names_the_changed_input() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    write_file(root, "pkg/in.txt", "abc\n");
    let (g, paths) = mixed_graph();
    let wanted: Vec<ArtifactRef> = paths.iter().cloned().map(ArtifactRef::Build).collect();
    let exec = executor(root, SandboxMode::Bubblewrap);
    exec.build(&g.graph, &wanted).unwrap();
    let first = what_ran(root).unwrap();
    assert!(first.contains("no previous record"), "{first}");
    write_file(root, "pkg/in.txt", "xyz\n");
    let report = exec.build(&g.graph, &wanted).unwrap();
    assert_eq!(
        report.local, 2,
        "the edit re-runs its dependents: {report:?}"
    );
    assert_eq!(read(root, &paths[3]), "XYZ\n");
    let log = what_ran(root).unwrap();
    let upper_line = log
        .lines()
        .position(|l| l.contains("(upper)"))
        .expect("upper ran");
    let lines: Vec<&str> = log.lines().collect();
    assert!(
        lines[upper_line + 1].contains("input changed: pkg/in.txt"),
        "{log}"
    );
    let tree_line = log
        .lines()
        .position(|l| l.contains("(tree)"))
        .expect("tree ran");
    assert!(
        lines[tree_line + 1].contains(&format!("input changed: {}", paths[0])),
        "{log}"
    );
    assert!(
        !log.contains("upper.txt (sha") || log.contains("tree"),
        "{log}"
    );
}

#[test]
fn corrupt_cas_file_is_detected_and_rebuilt() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let o = out("", "c", "c.txt");
    let mut g = GraphBuilder::default();
    g.run(
        RunSpec::new(
            label("", "c"),
            "mk",
            &["/bin/sh", "-c", "echo precious > $1", "--", &o],
        )
        .output(&o),
    );
    let exec = executor(root, SandboxMode::Bubblewrap);
    exec.build(&g.graph, &[ArtifactRef::Build(o.clone())])
        .unwrap();
    let hash = forge_exec_test_sha(b"precious\n");
    let blob = root.join(format!("buck-out/forge/cache/cas/{}/{hash}", &hash[..2]));
    assert!(blob.exists(), "the output is in the CAS under its sha256");
    // Break the hardlink first so only the CAS copy is damaged.
    fs::remove_file(root.join(&o)).unwrap();
    fs::write(&blob, "garbage!!\n").unwrap();
    let report = exec
        .build(&g.graph, &[ArtifactRef::Build(o.clone())])
        .unwrap();
    assert_eq!(
        (report.cached, report.local),
        (0, 1),
        "corrupt blob => rebuilt: {report:?}"
    );
    assert_eq!(read(root, &o), "precious\n");
    assert_eq!(
        fs::read(&blob).unwrap(),
        b"precious\n",
        "the CAS holds the good blob again"
    );
}

fn forge_exec_test_sha(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

#[test]
fn passthrough_paths_are_visible_without_being_declared() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    write_file(root, "venv/bin/tool", "tool-v1\n");
    for mode in sandbox_modes() {
        let o = out("", "pt", "o.txt");
        let mut g = GraphBuilder::default();
        g.run(
            RunSpec::new(
                label("", "pt"),
                "c",
                &[
                    "/bin/sh",
                    "-c",
                    "cat venv/bin/tool > $1 && echo built >> buck-out/forge/shared-target/stamp",
                    "--",
                    &o,
                ],
            )
            .output(&o),
        );
        let mut opts = options(root, mode);
        opts.sandbox_passthrough = vec!["venv".into(), "buck-out/forge/shared-target".into()];
        let exec = forge_exec::Executor::new(opts).unwrap();
        exec.build(&g.graph, &[ArtifactRef::Build(o.clone())])
            .unwrap();
        assert_eq!(read(root, &o), "tool-v1\n", "{mode:?}");
        assert!(
            read(root, "buck-out/forge/shared-target/stamp").contains("built"),
            "{mode:?}: writes to a passthrough dir persist"
        );
        fs::remove_file(root.join(&o)).unwrap();
        fs::remove_dir_all(root.join("buck-out/forge/cache")).unwrap();
    }
}

/// Rewrites `rel` in place (same size, same inode) and puts its old mtime back: only its
/// ctime shows the edit.
fn edit_in_place_keeping_mtime(root: &Path, rel: &str, content: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = root.join(rel);
    let mtime = fs::metadata(&p).unwrap().modified().unwrap();
    let ino = std::os::unix::fs::MetadataExt::ino(&fs::metadata(&p).unwrap());
    fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
    fs::write(&p, content).unwrap();
    fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let m = fs::metadata(&p).unwrap();
    assert_eq!(m.modified().unwrap(), mtime);
    assert_eq!(std::os::unix::fs::MetadataExt::ino(&m), ino);
}

#[test]
fn in_place_edits_with_mtime_restored_are_seen_for_sources_and_outputs() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    write_file(root, "pkg/in.txt", "aaaa\n");
    let o = out("pkg", "u", "o.txt");
    let mut g = GraphBuilder::default();
    g.run(
        RunSpec::new(
            label("pkg", "u"),
            "up",
            &["/bin/sh", "-c", "tr a-z A-Z < pkg/in.txt > $1", "--", &o],
        )
        .source("pkg/in.txt")
        .output(&o),
    );
    let exec = executor(root, SandboxMode::Bubblewrap);
    let wanted = [ArtifactRef::Build(o.clone())];
    // Old enough that the digest cache trusts (persists) what it hashes.
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(exec.build(&g.graph, &wanted).unwrap().local, 1);
    // A source: same size, inode and mtime, new content.
    edit_in_place_keeping_mtime(root, "pkg/in.txt", "bbbb\n");
    assert_eq!(exec.build(&g.graph, &wanted).unwrap().local, 1);
    assert_eq!(read(root, &o), "BBBB\n");
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(exec.build(&g.graph, &wanted).unwrap().up_to_date, 1);
    // An output edited the same way (after a chmod: outputs are read-only) is noticed; it
    // shares its inode with the cache blob, which `verify` then finds corrupt, so the action
    // runs again.
    edit_in_place_keeping_mtime(root, &o, "XXXX\n");
    let r = exec.build(&g.graph, &wanted).unwrap();
    assert_eq!((r.up_to_date, r.cached + r.local), (0, 1));
    assert_eq!(read(root, &o), "BBBB\n");
}
