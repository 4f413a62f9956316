//! Remote execution end to end: forge's REAPI execution client → a real BuildGrid 0.4.4 →
//! forge-re-worker processes. References are independent of the code under test: the
//! same command run locally by `sh`, the workers' own logs, and BuildGrid's CAS.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{server, Server, Worker};
use forge_reapi::{
    ActionDescription, ClientOptions, Digest, InputFile, RemoteCommand, RemoteOutcome,
};

/// An action with one input file, run by `sh -c script`, asking for this test's workers.
fn action(
    dir: &Path,
    test: &str,
    script: &str,
    outputs: &[&str],
) -> (ActionDescription, HashMap<String, PathBuf>) {
    let input = dir.join("in.txt");
    std::fs::write(&input, format!("input of {test}\n")).unwrap();
    let desc = ActionDescription {
        argv: vec!["sh".into(), "-c".into(), script.into()],
        env: vec![("LC_ALL".into(), "C".into())],
        output_files: outputs.iter().map(|s| s.to_string()).collect(),
        output_dirs: vec![],
        inputs: vec![InputFile {
            path: "src/in.txt".into(),
            digest: Digest::of_file(&input).unwrap(),
            is_executable: false,
        }],
        platform: vec![
            ("OSFamily".into(), "linux".into()),
            ("test".into(), test.into()),
        ],
    };
    let sources = HashMap::from([("src/in.txt".to_string(), input)]);
    (desc, sources)
}

fn execute(
    server: &Server,
    desc: &ActionDescription,
    sources: &HashMap<String, PathBuf>,
) -> RemoteOutcome {
    let client = forge_reapi::from_buckconfig(&server.section(), ClientOptions::default())
        .expect("connecting")
        .expect("configured");
    let exec = client.execution().expect("an execution client");
    exec.execute(&RemoteCommand {
        action: desc,
        input_sources: sources,
        skip_cache_lookup: false,
    })
    .unwrap_or_else(|e| {
        panic!(
            "remote execution failed: {e:#}\nbgd log tail:\n{}",
            tail(&server.log())
        )
    })
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// The same command run locally in a directory laid out like the input root.
fn run_locally(script: &str, input: &Path, output: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::copy(input, dir.path().join("src/in.txt")).unwrap();
    if let Some(p) = Path::new(output).parent() {
        std::fs::create_dir_all(dir.path().join(p)).unwrap();
    }
    let st = Command::new("sh")
        .args(["-c", script])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::read(dir.path().join(output)).unwrap()
}

fn fetch(server: &Server, d: &Digest, dest: &Path) -> Vec<u8> {
    let client = forge_reapi::from_buckconfig(&server.section(), ClientOptions::default())
        .unwrap()
        .unwrap();
    client.fetch(d, dest).unwrap();
    std::fs::read(dest).unwrap()
}

#[test]
fn remote_outputs_match_local_and_the_second_build_is_a_cache_hit() {
    let server = server();
    let _w = Worker::start(server, "same", 0);
    let dir = tempfile::tempdir().unwrap();
    let script = "mkdir -p out && { tr a-z A-Z < src/in.txt; seq 1 500 | sha256sum; } > out/result.bin && echo built";
    let (desc, sources) = action(dir.path(), "same", script, &["out/result.bin"]);
    let first = execute(server, &desc, &sources);
    assert_eq!(
        first.exit_code,
        0,
        "stderr: {}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(!first.cached);
    assert_eq!(first.stdout, b"built\n");
    let outputs = first.outputs.expect("outputs");
    assert_eq!(outputs.files.len(), 1);
    assert_eq!(outputs.files[0].path, "out/result.bin");
    let remote = fetch(server, &outputs.files[0].digest, &dir.path().join("got"));
    let local = run_locally(script, &sources["src/in.txt"], "out/result.bin");
    assert_eq!(remote, local, "remote and local outputs differ");
    assert_eq!(_w.leases_run(), 1);

    // A fresh client (a second clone's build): served from BuildGrid's action cache.
    let second = execute(server, &desc, &sources);
    assert!(second.cached, "the second build executed again");
    assert_eq!(
        second.outputs.unwrap().files[0].digest,
        outputs.files[0].digest
    );
    assert_eq!(_w.leases_run(), 1, "the worker ran the action twice");
}

#[test]
fn a_failing_remote_action_reports_exit_code_and_stderr() {
    let server = server();
    let _w = Worker::start(server, "fail", 0);
    let dir = tempfile::tempdir().unwrap();
    let (desc, sources) = action(
        dir.path(),
        "fail",
        "echo 'no such netlist' >&2; exit 3",
        &["out.bin"],
    );
    let got = execute(server, &desc, &sources);
    assert_eq!(got.exit_code, 3);
    assert_eq!(got.stderr, b"no such netlist\n");
    assert!(got.outputs.is_none());
}

#[test]
fn a_remote_action_sees_only_its_inputs_and_no_network() {
    let server = server();
    let _w = Worker::start(server, "sandbox", 0);
    let dir = tempfile::tempdir().unwrap();
    // A host file the worker can read, but which is not an input.
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "host secret").unwrap();
    assert!(std::fs::read(&secret).is_ok());
    let script = format!(
        "cat {} > out.txt 2>&1 && echo READ >> out.txt; \
         cat src/in.txt >> out.txt; \
         (exec 3<>/dev/tcp/127.0.0.1/{}) 2>/dev/null && echo NET >> out.txt; \
         echo done >> out.txt",
        secret.display(),
        server.port
    );
    let (mut desc, sources) = action(dir.path(), "sandbox", &script, &["out.txt"]);
    desc.argv[0] = "bash".into();
    let got = execute(server, &desc, &sources);
    assert_eq!(
        got.exit_code,
        0,
        "stderr: {}",
        String::from_utf8_lossy(&got.stderr)
    );
    let out = fetch(
        server,
        &got.outputs.unwrap().files[0].digest,
        &dir.path().join("got"),
    );
    let out = String::from_utf8(out).unwrap();
    assert!(
        !out.contains("host secret") && !out.contains("READ"),
        "read a host file: {out}"
    );
    assert!(!out.contains("NET"), "reached the network: {out}");
    assert!(
        out.contains("input of sandbox") && out.ends_with("done\n"),
        "{out}"
    );
    // The same probe outside the sandbox does reach the server (the check can fail).
    let outside = Command::new("bash")
        .args(["-c", &format!("exec 3<>/dev/tcp/127.0.0.1/{}", server.port)])
        .status()
        .unwrap();
    assert!(outside.success());
}

#[test]
fn two_workers_run_four_actions_in_parallel() {
    let server = server();
    let _w: Vec<Worker> = (0..2).map(|n| Worker::start(server, "scale", n)).collect();
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let sub = dir.path().join(i.to_string());
            std::fs::create_dir_all(&sub).unwrap();
            let (desc, sources) = action(
                &sub,
                "scale",
                &format!("sleep 2; echo par{i} > out.bin"),
                &["out.bin"],
            );
            std::thread::spawn(move || execute(server, &desc, &sources))
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap().exit_code, 0);
    }
    let took = start.elapsed();
    eprintln!("4 actions of 2 s on 2 workers: {took:?}");
    assert!(
        took < Duration::from_secs(7),
        "no parallelism: {took:?} for 4×2 s on 2 workers"
    );
    assert!(
        _w.iter().all(|w| w.leases_run() >= 1),
        "one worker did all the work"
    );
}

#[test]
fn a_killed_workers_lease_is_requeued_and_the_build_succeeds() {
    let server = server();
    let mut first = Worker::start(server, "kill", 0);
    let dir = tempfile::tempdir().unwrap();
    let (desc, sources) = action(
        dir.path(),
        "kill",
        "sleep 3; echo survived > out.bin",
        &["out.bin"],
    );
    let run = std::thread::spawn(move || execute(server, &desc, &sources));
    let start = Instant::now();
    while first.leases_run() == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the lease never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    first.kill();
    let second = Worker::start(server, "kill", 1);
    let got = run.join().unwrap();
    assert_eq!(got.exit_code, 0);
    assert_eq!(
        second.leases_run(),
        1,
        "the requeued lease did not run on the second worker"
    );
    eprintln!("requeued and finished {:?} after the kill", start.elapsed());
}
