//! The sandbox choice (`[forge] sandbox`) and the reuse of emptied sandbox directories (the
//! forest's and the persistent bubblewrap's): an action in a reused sandbox must see exactly
//! the tree a fresh sandbox would give it.

use crate::common::*;
use forge_core::ArtifactRef;
use forge_exec::{ExecOptions, Executor, SandboxMode, STRICT_ENV};

fn one_worker(root: &std::path::Path, mode: SandboxMode) -> Executor {
    let mut o: ExecOptions = options(root, mode);
    // One worker runs the chain in order, each action after the one it depends on.
    o.jobs = 1;
    Executor::new(o).unwrap()
}

/// What `find .` prints inside a sandbox holding `paths` (and every parent of them).
fn expected_listing(paths: &[&str]) -> String {
    let mut all = std::collections::BTreeSet::from([".".to_string()]);
    for p in paths {
        let mut prefix = String::from(".");
        for part in p.split('/') {
            prefix = format!("{prefix}/{part}");
            all.insert(prefix.clone());
        }
    }
    let mut lines: Vec<String> = all.into_iter().collect();
    lines.sort();
    lines.join("\n") + "\n"
}

#[test]
fn a_reused_sandbox_holds_nothing_of_the_previous_action() {
    for mode in sandbox_modes() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path();
        write_file(root, "pkg/a.txt", "a\n");
        let a = out("pkg", "a", "a.txt");
        let b = out("pkg", "b", "b.txt");
        let c = out("pkg", "c", "c.txt");
        let mut g = GraphBuilder::default();
        g.run(
            RunSpec::new(
                label("pkg", "a"),
                "ca",
                &[
                    "/bin/sh",
                    "-c",
                    "cat pkg/a.txt > $1; echo junk > \"$BUCK_SCRATCH_PATH/junk\"",
                    "--",
                    &a,
                ],
            )
            .source("pkg/a.txt")
            .output(&a),
        );
        g.run(
            RunSpec::new(
                label("pkg", "b"),
                "cb",
                &["/bin/sh", "-c", "cat $2 > $1", "--", &b, &a],
            )
            .input(&a)
            .output(&b),
        );
        g.run(
            RunSpec::new(
                label("pkg", "c"),
                "cc",
                &[
                    "/bin/sh",
                    "-c",
                    "listing=$(find . | LC_ALL=C sort); echo \"$listing\" > $1",
                    "--",
                    &c,
                ],
            )
            .input(&b)
            .output(&c),
        );
        one_worker(root, mode)
            .build(&g.graph, &[ArtifactRef::Build(c.clone())])
            .unwrap();
        // Only c's own input, output dir and scratch dir: not a's source, a's output dir or
        // the scratch dirs of a and b.
        let c_dir = c.rsplit_once('/').unwrap().0;
        let want = expected_listing(&[&b, c_dir, "buck-out/forge/tmp/root/0123456789abcdef/cc"]);
        assert_eq!(read(root, &c), want, "{mode:?}");
    }
}

/// The persistent bubblewrap's sandbox keeps earlier actions' empty directories that no
/// later action can see; one that would appear inside the next action's output directory
/// is removed first.
#[test]
fn a_kept_directory_never_shows_in_an_output_directory() {
    for mode in sandbox_modes() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path();
        let deep = out("pkg", "t", "d/x.txt");
        let other = out("elsewhere", "u", "u.txt");
        let top = out("pkg", "t", "y.txt");
        let mut g = GraphBuilder::default();
        g.run(
            RunSpec::new(
                label("pkg", "t"),
                "deep",
                &["/bin/sh", "-c", "echo x > $1", "--", &deep],
            )
            .output(&deep),
        );
        g.run(
            RunSpec::new(
                label("elsewhere", "u"),
                "other",
                &["/bin/sh", "-c", "cat $2 > $1", "--", &other, &deep],
            )
            .input(&deep)
            .output(&other),
        );
        g.run(
            RunSpec::new(
                label("pkg", "t"),
                "top",
                &[
                    "/bin/sh",
                    "-c",
                    "ls -A \"$(dirname $1)\" > $1.tmp; mv $1.tmp $1",
                    "--",
                    &top,
                    &other,
                ],
            )
            .input(&other)
            .output(&top),
        );
        one_worker(root, mode)
            .build(&g.graph, &[ArtifactRef::Build(top.clone())])
            .unwrap();
        // Only what the action itself wrote there; `d` (the first action's) is not there.
        assert_eq!(read(root, &top), "y.txt.tmp\n", "{mode:?}");
    }
}

#[test]
fn an_action_that_removes_sandbox_dirs_does_not_break_the_next_one() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let d = out("pkg", "d", "d.txt");
    let e = out("pkg", "e", "e.txt");
    let mut g = GraphBuilder::default();
    g.run(
        RunSpec::new(
            label("pkg", "d"),
            "cd",
            &[
                "/bin/sh",
                "-c",
                "rm -rf buck-out/forge/tmp; echo d > $1",
                "--",
                &d,
            ],
        )
        .output(&d),
    );
    g.run(
        RunSpec::new(
            label("pkg", "e"),
            "ce",
            &[
                "/bin/sh",
                "-c",
                "test -d \"$BUCK_SCRATCH_PATH\" && cat $2 > $1",
                "--",
                &e,
                &d,
            ],
        )
        .input(&d)
        .output(&e),
    );
    one_worker(root, SandboxMode::SymlinkForest)
        .build(&g.graph, &[ArtifactRef::Build(e.clone())])
        .unwrap();
    assert_eq!(read(root, &e), "d\n");
}

/// In the forest mode only actions that ask for it run under bubblewrap: an absolute path
/// to an undeclared project file is readable in the forest and hidden under bubblewrap.
#[test]
fn forest_mode_uses_bubblewrap_only_for_actions_that_ask() {
    if !bwrap_available() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    write_file(&root, "secret.txt", "secret\n");
    let abs = root.join("secret.txt").to_string_lossy().into_owned();
    let relaxed = out("", "relaxed", "o.txt");
    let strict = out("", "strict", "o.txt");
    let mut g = GraphBuilder::default();
    let relaxed_argv = ["/bin/sh", "-c", "cat \"$2\" > $1", "--", &relaxed, &abs];
    let strict_argv = ["/bin/sh", "-c", "cat \"$2\" > $1", "--", &strict, &abs];
    g.run(RunSpec::new(label("", "relaxed"), "c", &relaxed_argv).output(&relaxed));
    g.run(
        RunSpec::new(label("", "strict"), "c", &strict_argv)
            .env(STRICT_ENV, "1")
            .output(&strict),
    );
    let exec = executor(&root, SandboxMode::SymlinkForest);
    assert_eq!(exec.sandbox_name(), "symlink-forest");
    exec.build(&g.graph, &[ArtifactRef::Build(relaxed.clone())])
        .unwrap();
    assert_eq!(read(&root, &relaxed), "secret\n");
    assert!(
        exec.build(&g.graph, &[ArtifactRef::Build(strict)]).is_err(),
        "an action asking for the strict sandbox must not read undeclared absolute paths"
    );
    assert_eq!(
        executor(&root, SandboxMode::Bubblewrap).sandbox_name(),
        "bubblewrap"
    );
}

#[test]
fn a_write_through_an_input_link_is_an_error() {
    for mode in sandbox_modes() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path();
        write_file(root, "pkg/in.txt", "in\n");
        let o = out("pkg", "w", "o.txt");
        let mut g = GraphBuilder::default();
        g.run(
            RunSpec::new(
                label("pkg", "w"),
                "c",
                &["/bin/sh", "-c", "echo x >> pkg/in.txt; echo > $1", "--", &o],
            )
            .source("pkg/in.txt")
            .output(&o),
        );
        let result = executor(root, mode).build(&g.graph, &[ArtifactRef::Build(o.clone())]);
        match mode {
            // The write is refused (the script goes on and succeeds) and the source is intact.
            SandboxMode::Bubblewrap => {
                result.unwrap();
                assert_eq!(read(root, "pkg/in.txt"), "in\n");
            }
            // The write reaches the source; forge notices and fails the action.
            _ => {
                let text = format!("{:#}", result.unwrap_err());
                assert!(
                    text.contains("Input `pkg/in.txt` changed while the action ran"),
                    "{text}"
                );
                assert!(!root.join(&o).exists(), "no output after a failure");
            }
        }
    }
}

#[test]
fn sandbox_config_values() {
    assert_eq!(SandboxMode::parse("auto").unwrap(), SandboxMode::Bubblewrap);
    assert_eq!(
        SandboxMode::parse("bwrap").unwrap(),
        SandboxMode::Bubblewrap
    );
    assert_eq!(
        SandboxMode::parse("bubblewrap").unwrap(),
        SandboxMode::Bubblewrap
    );
    assert_eq!(
        SandboxMode::parse("forest").unwrap(),
        SandboxMode::SymlinkForest
    );
    let err = SandboxMode::parse("strict").unwrap_err().to_string();
    assert!(
        err.contains("`[forge] sandbox = strict`") && err.contains("`bwrap`"),
        "{err}"
    );
}
