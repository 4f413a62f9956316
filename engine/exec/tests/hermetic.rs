//! The sandbox's promises against an action that tries to escape it: symlinks in outputs,
//! writes outside its outputs under the default sandbox, processes left running, and the
//! size of a failure's report.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::common::*;
use forge_core::ArtifactRef;
use forge_exec::{BuildFailed, ExecOptions, Executor, SandboxMode};

fn failure_text(err: &anyhow::Error) -> String {
    err.downcast_ref::<BuildFailed>()
        .map(|f| f.to_string())
        .unwrap_or_else(|| format!("{err:#}"))
}

/// Every symlink route out of an action's output, under each sandbox mode: an absolute link
/// (to a host file) and a relative one climbing to an undeclared project file both fail,
/// naming the action and the link; a relative link inside the output is kept and works for
/// the action that reads it.
#[test]
fn symlinks_in_outputs_cannot_leak_under_any_sandbox() {
    for mode in sandbox_modes() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        write_file(&root, "secret.txt", "undeclared\n");
        let host = root.join("host-file");
        fs::write(&host, "host\n").unwrap();
        let abs_out = out("", "abs", "link");
        let rel_dir = out("", "rel", "d");
        let ok_dir = out("", "ok", "d");
        let reader = out("", "reader", "o.txt");
        let mut g = GraphBuilder::default();
        let host_s = host.to_string_lossy().into_owned();
        g.run(
            RunSpec::new(
                label("", "abs"),
                "ln",
                &["/bin/ln", "-s", &host_s, &abs_out],
            )
            .output(&abs_out),
        );
        let climb = format!(
            "{}secret.txt",
            "../".repeat(rel_dir.matches('/').count() + 1)
        );
        let script = format!("mkdir -p $1 && ln -s {climb} $1/s");
        g.run(
            RunSpec::new(
                label("", "rel"),
                "ln",
                &["/bin/sh", "-c", &script, "--", &rel_dir],
            )
            .dir_output(&rel_dir),
        );
        g.run(
            RunSpec::new(
                label("", "ok"),
                "ln",
                &[
                    "/bin/sh",
                    "-c",
                    "mkdir -p $1 && echo in > $1/f && ln -s f $1/s",
                    "--",
                    &ok_dir,
                ],
            )
            .dir_output(&ok_dir),
        );
        g.run(
            RunSpec::new(
                label("", "reader"),
                "cat",
                &["/bin/sh", "-c", "cat $2/s > $1", "--", &reader, &ok_dir],
            )
            .input(&ok_dir)
            .output(&reader),
        );
        let exec = executor(&root, mode);
        for (name, path, link) in [
            ("abs", &abs_out, abs_out.clone()),
            ("rel", &rel_dir, format!("{rel_dir}/s")),
        ] {
            let err = exec
                .build(&g.graph, &[ArtifactRef::Build(path.clone())])
                .unwrap_err();
            let text = failure_text(&err);
            assert!(
                text.contains(&format!(
                    "Action failed: root//:{name} (<unspecified>) (ln)"
                )),
                "{mode:?}: {text}"
            );
            assert!(
                text.contains(&format!("`{link}` -> `")) && text.contains("points outside"),
                "{mode:?}: {text}"
            );
            assert!(
                fs::symlink_metadata(root.join(path)).is_err(),
                "{mode:?}: the rejected output must not be left in place"
            );
        }
        exec.build(&g.graph, &[ArtifactRef::Build(reader.clone())])
            .unwrap();
        assert_eq!(read(&root, &reader), "in\n", "{mode:?}");
        assert_eq!(
            fs::read_link(root.join(&ok_dir).join("s"))
                .unwrap()
                .to_string_lossy(),
            "f"
        );
    }
}

/// The default sandbox (no `[forge] sandbox` set) is the hermetic one: an action cannot write
/// into another target's output (a hard link into the cache), the source tree or the host's
/// `/tmp`, nor reach them by absolute path.
#[test]
fn default_sandbox_keeps_writes_away_from_other_targets_sources_and_host() {
    assert!(bwrap_available(), "{BWRAP_MISSING}");
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    write_file(&root, "src.txt", "source\n");
    let victim = out("", "victim", "o.txt");
    let attacker = out("", "attacker", "o.txt");
    let host_tmp = tempfile::Builder::new()
        .prefix("forge-hermetic-")
        .tempdir_in("/tmp")
        .unwrap();
    let host_file = host_tmp.path().join("planted");
    let mut g = GraphBuilder::default();
    g.run(
        RunSpec::new(
            label("", "victim"),
            "w",
            &["/bin/sh", "-c", "echo good > $1", "--", &victim],
        )
        .output(&victim),
    );
    let script = format!(
        "echo evil > {r}/{victim} 2>/dev/null; echo evil > {r}/src.txt 2>/dev/null; \
         echo evil > {h} 2>/dev/null; \
         cat {r}/{victim} > $1 2>/dev/null; echo done >> $1",
        r = root.display(),
        h = host_file.display()
    );
    g.run(
        RunSpec::new(
            label("", "attacker"),
            "w",
            &["/bin/sh", "-c", &script, "--", &attacker],
        )
        .output(&attacker),
    );
    let mut opts = ExecOptions::new(&root);
    opts.sandbox_worker = Some(WORKER.into());
    opts.console = forge_exec::ConsoleMode::Quiet;
    let exec = Executor::new(opts).unwrap();
    assert_eq!(exec.sandbox_name(), "bubblewrap");
    exec.build(&g.graph, &[ArtifactRef::Build(victim.clone())])
        .unwrap();
    exec.build(&g.graph, &[ArtifactRef::Build(attacker.clone())])
        .unwrap();
    assert_eq!(read(&root, &victim), "good\n");
    assert_eq!(read(&root, "src.txt"), "source\n");
    assert!(!host_file.exists(), "the action wrote the host's /tmp");
    assert_eq!(
        read(&root, &attacker),
        "done\n",
        "another target's output must not even be readable"
    );
    // The cache entry is intact: a clean restore gives the right content.
    fs::remove_file(root.join(&victim)).unwrap();
    let r = exec
        .build(&g.graph, &[ArtifactRef::Build(victim.clone())])
        .unwrap();
    assert_eq!(r.cached, 1);
    assert_eq!(read(&root, &victim), "good\n");
}

/// Outputs restored from (or stored in) the cache share their inode with the cache blob;
/// they are read-only (no write bit), so a plain write to one by a non-root user fails
/// instead of corrupting the cache. (Modes do not stop root: there only the hermetic
/// sandbox, which does not show other outputs at all, protects them.)
#[test]
fn cached_outputs_are_read_only() {
    for mode in sandbox_modes() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path();
        let o = out("", "w", "o.txt");
        let mut g = GraphBuilder::default();
        g.run(
            RunSpec::new(
                label("", "w"),
                "w",
                &["/bin/sh", "-c", "echo good > $1", "--", &o],
            )
            .output(&o),
        );
        let exec = executor(root, mode);
        let wanted = [ArtifactRef::Build(o.clone())];
        exec.build(&g.graph, &wanted).unwrap();
        let mode_of = |p: &str| fs::metadata(root.join(p)).unwrap().permissions().mode();
        assert_eq!(
            mode_of(&o) & 0o222,
            0,
            "{mode:?}: a stored output must be read-only"
        );
        fs::remove_file(root.join(&o)).unwrap();
        assert_eq!(exec.build(&g.graph, &wanted).unwrap().cached, 1);
        assert_eq!(
            mode_of(&o) & 0o222,
            0,
            "{mode:?}: a restored output must be read-only"
        );
    }
}

/// A daemon an action leaves running is killed when the action ends, in every mode.
#[test]
fn background_processes_of_an_action_die_with_it() {
    for mode in sandbox_modes() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path();
        let marker = format!("bg-{}-{mode:?}", std::process::id());
        let o = out("", "bg", "o.txt");
        let mut g = GraphBuilder::default();
        g.run(
            RunSpec::new(
                label("", "bg"),
                "bg",
                &[
                    "/bin/sh",
                    "-c",
                    "sleep 60 >/dev/null 2>&1 & echo started > $1",
                    "--",
                    &o,
                ],
            )
            .env("FORGE_TEST_MARKER", &marker)
            .output(&o),
        );
        executor(root, mode)
            .build(&g.graph, &[ArtifactRef::Build(o)])
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !processes_with_env(&marker).is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(processes_with_env(&marker), Vec::<i32>::new(), "{mode:?}");
    }
}

/// A command line far beyond the kernel's limit fails to start (E2BIG); the report stays
/// small and names the log that has the whole line.
#[test]
fn failure_report_of_a_huge_command_line_is_bounded() {
    for mode in sandbox_modes() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path();
        let o = out("", "big", "o.txt");
        let huge = "x".repeat(10 << 20);
        let mut g = GraphBuilder::default();
        g.run(RunSpec::new(label("", "big"), "big", &["/bin/echo", &huge, &o]).output(&o));
        let err = executor(root, mode)
            .build(&g.graph, &[ArtifactRef::Build(o)])
            .unwrap_err();
        let text = failure_text(&err);
        assert!(text.len() < 64 << 10, "{mode:?}: {} bytes", text.len());
        assert!(
            text.contains("could not be started"),
            "{mode:?}: {}",
            &text[..2000.min(text.len())]
        );
        let log = text
            .lines()
            .find_map(|l| l.strip_prefix("Full log: "))
            .unwrap_or_else(|| panic!("{mode:?}: no log path in {}", &text[..2000]));
        assert!(fs::read(root.join(log)).unwrap().len() > 10 << 20);
        let _ = Path::new(log);
    }
}

/// An action printing megabytes to stderr before failing: the report shows its tail only.
#[test]
fn failure_report_of_a_huge_stderr_is_bounded() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let o = out("", "loud", "o.txt");
    let mut g = GraphBuilder::default();
    g.run(
        RunSpec::new(
            label("", "loud"),
            "loud",
            &[
                "/bin/sh",
                "-c",
                "head -c 5000000 /dev/zero | tr '\\0' y >&2; echo; echo LAST >&2; exit 1",
            ],
        )
        .output(&o),
    );
    let err = executor(root, SandboxMode::Bubblewrap)
        .build(&g.graph, &[ArtifactRef::Build(o)])
        .unwrap_err();
    let text = failure_text(&err);
    assert!(text.len() < 64 << 10, "{} bytes", text.len());
    assert!(
        text.contains("LAST") && text.contains("Full log: "),
        "{}",
        &text[text.len() - 500..]
    );
}
