//! `forge test` runs each test as soon as the actions producing its inputs have run, as
//! buck2 does (its test runner starts a test when the test's build finishes), not after the
//! whole build: a test whose input is ready runs while an unrelated slow action is still
//! running, and a test never starts before its own input exists. A running test holds one
//! job permit, which an action asking for every permit (cargo's) does not wait for. Ready
//! actions start by critical path, and a ready test before an action only tests wait for.

use crate::common::*;
use forge_core::ArtifactRef;
use forge_exec::{run_tests, Executor, SandboxMode};

#[test]
fn a_test_starts_when_its_inputs_are_built_not_after_the_whole_build() {
    let ws = tempfile::tempdir().unwrap();
    let mut g = GraphBuilder::default();
    let fast = out("t", "fast", "fast.txt");
    let slow = out("t", "slow", "slow.txt");
    // The slow action's output appears only at its end, 4 s after it starts.
    g.run(
        RunSpec::new(
            label("t", "slow"),
            "slow",
            &["/bin/sh", "-c", "sleep 4; echo slow > $1", "--", &slow],
        )
        .output(&slow),
    );
    g.run(
        RunSpec::new(
            label("t", "fast"),
            "fast",
            &["/bin/sh", "-c", "echo fast > $1", "--", &fast],
        )
        .output(&fast),
    );
    // Each test records which outputs existed when it started, in the workspace.
    let seen = |name: &str| {
        format!(
            "cat $1 >/dev/null && {{ test -e {slow} && echo slow-done || echo slow-running; }} > {name}.seen"
        )
    };
    let tests = vec![
        test_spec(
            "needs_fast",
            &seen("needs_fast"),
            &[],
            vec![ArtifactRef::Build(fast.clone())],
        ),
        test_spec(
            "needs_slow",
            &seen("needs_slow"),
            &[],
            vec![ArtifactRef::Build(slow.clone())],
        ),
    ];
    let exec = executor(ws.path(), SandboxMode::SymlinkForest);
    let summary = run_tests(&exec, &g.graph, tests).unwrap();
    assert_eq!((summary.passed, summary.failed_total()), (2, 0));
    let read = |name: &str| std::fs::read_to_string(ws.path().join(name)).unwrap();
    assert_eq!(
        read("needs_fast.seen").trim(),
        "slow-running",
        "the test of the fast output waited for the unrelated slow action"
    );
    assert_eq!(read("needs_slow.seen").trim(), "slow-done");
}

#[test]
fn an_action_needing_every_permit_does_not_wait_for_a_running_test() {
    let ws = tempfile::tempdir().unwrap();
    let mut g = GraphBuilder::default();
    let first = out("t", "first", "first.txt");
    let heavy = out("t", "heavy", "heavy.txt");
    g.run(
        RunSpec::new(
            label("t", "first"),
            "first",
            &["/bin/sh", "-c", "sleep 0.5; echo first > $1", "--", &first],
        )
        .output(&first),
    );
    // Like a cargo action: it asks for every job permit (the executor has 2).
    g.run(
        RunSpec::new(
            label("t", "heavy"),
            "heavy",
            &["/bin/sh", "-c", "cat $1 > $2", "--", &first, &heavy],
        )
        .input(&first)
        .output(&heavy)
        .weight(1000),
    );
    let tests = vec![
        // Starts at once (it needs nothing built), beside `first`, and is still running
        // when `heavy` becomes ready.
        test_spec(
            "long",
            &format!("sleep 4; test -e {heavy} && echo heavy-done > long.seen || echo heavy-waited > long.seen"),
            &[],
            Vec::new(),
        ),
        test_spec("needs_heavy", "cat $1", &[], vec![ArtifactRef::Build(heavy.clone())]),
    ];
    let exec = executor(ws.path(), SandboxMode::SymlinkForest);
    let summary = run_tests(&exec, &g.graph, tests).unwrap();
    assert_eq!((summary.passed, summary.failed_total()), (2, 0));
    let seen = std::fs::read_to_string(ws.path().join("long.seen")).unwrap();
    assert_eq!(
        seen.trim(),
        "heavy-done",
        "the action needing every permit waited for the test holding one"
    );
}

/// With one job permit the order is observable: the action heading a chain goes before
/// leaves that became ready first, a test whose input is built goes before the remaining
/// leaves, and the chain's last action (a leaf itself) waits its turn among them.
#[test]
fn the_longest_chain_starts_first_and_a_ready_test_goes_before_leaves() {
    let ws = tempfile::tempdir().unwrap();
    let mut g = GraphBuilder::default();
    // Each action appends its name to `order` in the workspace (one permit: one at a time)
    // after reading its input, if any, and writes its output.
    let log = ws.path().join("order");
    let mut action = |name: &str, input: Option<&str>| {
        let dst = out("t", name, &format!("{name}.txt"));
        let script = format!(
            "{}echo {name} >> {} && echo {name} > $1",
            input.map_or(String::new(), |i| format!("cat {i} >/dev/null && ")),
            log.display()
        );
        let mut spec = RunSpec::new(
            label("t", name),
            name,
            &["/bin/sh", "-c", &script, "--", &dst],
        )
        .output(&dst);
        if let Some(i) = input {
            spec = spec.input(i);
        }
        g.run(spec);
        dst
    };
    let leaves: Vec<String> = (1..=3).map(|i| action(&format!("leaf{i}"), None)).collect();
    let head = action("head", None);
    let tail = action("tail", Some(&head));
    let mut tests = vec![test_spec(
        "needs_head",
        &format!("cat $1 >/dev/null && echo test >> {}", log.display()),
        &[],
        vec![ArtifactRef::Build(head.clone())],
    )];
    for (i, leaf) in leaves.iter().chain([&tail]).enumerate() {
        tests.push(test_spec(
            &format!("needs_{i}"),
            "cat $1 >/dev/null",
            &[],
            vec![ArtifactRef::Build(leaf.clone())],
        ));
    }
    let mut o = options(ws.path(), SandboxMode::SymlinkForest);
    o.jobs = 1;
    let exec = Executor::new(o).unwrap();
    let summary = run_tests(&exec, &g.graph, tests).unwrap();
    assert_eq!((summary.passed, summary.failed_total()), (5, 0));
    let order = std::fs::read_to_string(&log).unwrap();
    let order: Vec<&str> = order.lines().collect();
    assert_eq!(
        order,
        vec!["head", "test", "leaf1", "leaf2", "leaf3", "tail"],
        "the chain's head did not go first, or the ready test waited for the leaves"
    );
}
