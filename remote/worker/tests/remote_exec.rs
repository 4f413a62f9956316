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
        queue_timeout: None,
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

/// A worker of a shared pool runs any client's action, so the action sees the system's
/// `/usr` and a minimal `/etc`, never the worker user's home, `/root`, `/opt`, `/etc/shadow`
/// or another `/etc` file. Each probe is made to succeed outside the sandbox first (as the
/// worker's user can read every file), so a probe that finds nothing inside can fail.
#[test]
fn a_remote_action_cannot_read_the_workers_home_or_credentials() {
    let server = server();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let key = home.join(".ssh/id_ed25519");
    std::fs::write(&key, "worker key").unwrap();
    let _w = Worker::start_env(server, "home", 0, &[], &[], &[("HOME", &home)]);
    let hidden = [
        key.to_string_lossy().into_owned(),
        "/etc/shadow".into(),
        "/etc/machine-id".into(),
        "/root".into(),
        "/opt".into(),
    ];
    for path in &hidden {
        let outside = Command::new("bash")
            .args(["-c", &format!("ls -A {path}")])
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(
            outside.success(),
            "the probe of {path} fails outside the sandbox"
        );
    }
    let probes: String = hidden
        .iter()
        .map(|p| format!("ls -A {p} >/dev/null 2>&1 && echo \"SEEN {p}\" >> out.txt; "))
        .collect();
    let script = format!(
        "{probes}head -1 /etc/passwd | cut -d: -f1 >> out.txt; \
         /usr/bin/env true && echo usr >> out.txt; echo done >> out.txt"
    );
    let (mut desc, sources) = action(dir.path(), "home", &script, &["out.txt"]);
    desc.argv[0] = "bash".into();
    let got = execute(server, &desc, &sources);
    assert_eq!(got.exit_code, 0, "{}", String::from_utf8_lossy(&got.stderr));
    let out = fetch(
        server,
        &got.outputs.unwrap().files[0].digest,
        &dir.path().join("got"),
    );
    assert_eq!(String::from_utf8(out).unwrap(), "root\nusr\ndone\n");
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

/// A worker killed (SIGKILL) mid-action: its lease runs again on another worker, and that
/// worker, started in the same work dir, removes the execution root the dead one left.
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
    let roots = || -> Vec<String> {
        std::fs::read_dir(server.work_dir("kill"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("forge-re-"))
            .collect()
    };
    // Killed once the action runs in its execution root (the worker logs `running` before
    // it fetches the action and makes the root).
    let start = Instant::now();
    while first.leases_run() == 0 || roots().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the lease never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    first.kill();
    assert_eq!(roots().len(), 1, "the killed worker's execution root");
    let second = Worker::start(server, "kill", 1);
    let got = run.join().unwrap();
    assert_eq!(got.exit_code, 0);
    assert_eq!(
        second.leases_run(),
        1,
        "the requeued lease did not run on the second worker"
    );
    eprintln!("requeued and finished {:?} after the kill", start.elapsed());
    // the second worker removed the dead one's root when it started, and its own after the
    // action
    assert!(
        second
            .log_text()
            .contains("removed 1 execution root(s) of dead workers"),
        "{}",
        second.log_text()
    );
    assert_eq!(
        roots(),
        Vec::<String>::new(),
        "execution roots left in the work dir"
    );
}

/// What the worker's operator opens up, and nothing else: `--read-only DIR` shows a tool
/// installation at its own path (read-only), `--share-network` the host's network (a licence
/// server); a file beside that directory stays hidden.
#[test]
fn a_worker_shows_its_tool_dirs_and_network_only_when_told() {
    let server = server();
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(tools.join("tool.txt"), "the tool\n").unwrap();
    std::fs::write(dir.path().join("beside.txt"), "beside\n").unwrap();
    let tools_arg = tools.to_string_lossy().into_owned();
    let _w = Worker::start_args(
        server,
        "hostaccess",
        0,
        &[],
        &["--read-only", &tools_arg, "--share-network"],
    );
    let script = format!(
        "cat {tools}/tool.txt > out.txt; cat {beside} >> out.txt 2>/dev/null; \
         echo junk > {tools}/tool.txt 2>/dev/null && echo WROTE >> out.txt; \
         (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo NET >> out.txt; echo done >> out.txt",
        tools = tools.display(),
        beside = dir.path().join("beside.txt").display(),
        port = server.port
    );
    let (mut desc, sources) = action(dir.path(), "hostaccess", &script, &["out.txt"]);
    desc.argv[0] = "bash".into();
    let got = execute(server, &desc, &sources);
    assert_eq!(got.exit_code, 0, "{}", String::from_utf8_lossy(&got.stderr));
    let out = fetch(
        server,
        &got.outputs.unwrap().files[0].digest,
        &dir.path().join("got"),
    );
    assert_eq!(String::from_utf8(out).unwrap(), "the tool\nNET\ndone\n");
    assert_eq!(
        std::fs::read(tools.join("tool.txt")).unwrap(),
        b"the tool\n"
    );
}

/// The processes whose command line contains `needle` (the sandbox's PID namespace hides
/// nothing from the host's /proc).
fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let line = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if line.contains(needle) && !line.contains("cargo") {
            found.push(format!("{}: {line}", e.file_name().to_string_lossy()));
        }
    }
    found
}

fn wait_for(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The worker's `--action-timeout`: an action still running at the limit is killed with
/// everything it started, and the client gets DEADLINE_EXCEEDED with what the action
/// wrote to stderr until then.
#[test]
fn an_action_past_the_workers_time_limit_is_killed_and_reported() {
    let server = server();
    let _w = Worker::start_args(server, "timeout", 0, &[], &["--action-timeout", "1"]);
    let dir = tempfile::tempdir().unwrap();
    let (desc, sources) = action(
        dir.path(),
        "timeout",
        "echo begun >&2; sleep 29.75; echo late > out.txt",
        &["out.txt"],
    );
    let client = forge_reapi::from_buckconfig(&server.section(), ClientOptions::default())
        .unwrap()
        .unwrap();
    let start = Instant::now();
    let err = client
        .execution()
        .unwrap()
        .execute(&RemoteCommand {
            action: &desc,
            input_sources: &sources,
            skip_cache_lookup: false,
            queue_timeout: None,
        })
        .expect_err("an action past its time limit succeeded");
    let text = format!("{err:#}");
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    for want in ["DeadlineExceeded", "time limit of 1 s", "begun"] {
        assert!(text.contains(want), "no `{want}` in: {text}");
    }
    assert_eq!(processes_with("sleep 29.75"), Vec::<String>::new());
}

/// An operation cancelled while its action runs (google.longrunning CancelOperation, as
/// BuildGrid's own tools send it): BuildGrid drops the lease from the bot session, the
/// worker kills the action, and the client's Execute ends with the cancellation.
#[test]
fn a_cancelled_operation_stops_the_action_on_its_worker() {
    use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
    use bazel_remote_apis::google::longrunning::{
        operations_client::OperationsClient, CancelOperationRequest, ListOperationsRequest,
    };
    use prost::Message;

    let server = server();
    let worker = Worker::start(server, "cancel", 0);
    let dir = tempfile::tempdir().unwrap();
    let (desc, sources) = action(
        dir.path(),
        "cancel",
        "sleep 27.25; echo late > out.txt",
        &["out.txt"],
    );
    let digest = forge_reapi::remote_action_digest(&desc).unwrap();
    let section = server.section();
    let client = std::thread::spawn(move || {
        let client = forge_reapi::from_buckconfig(&section, ClientOptions::default())
            .unwrap()
            .unwrap();
        let exec = client.execution().unwrap();
        exec.execute(&RemoteCommand {
            action: &desc,
            input_sources: &sources,
            skip_cache_lookup: false,
            queue_timeout: None,
        })
        .map(|o| o.exit_code)
        .map_err(|e| format!("{e:#}"))
    });
    wait_for(
        Duration::from_secs(30),
        "the worker starting the action",
        || !processes_with("sleep 27.25").is_empty(),
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let uri = server.address().replacen("grpc://", "http://", 1);
        let mut ops = OperationsClient::connect(uri).await.unwrap();
        let listed = ops
            .list_operations(ListOperationsRequest {
                name: String::new(),
                page_size: 1000,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        let ours: Vec<String> = listed
            .operations
            .into_iter()
            .filter(|op| {
                op.metadata
                    .as_ref()
                    .and_then(|m| re::ExecuteOperationMetadata::decode(m.value.as_slice()).ok())
                    .and_then(|m| m.action_digest)
                    .is_some_and(|d| d.hash == digest.hash)
            })
            .map(|op| op.name)
            .collect();
        assert!(!ours.is_empty(), "the operation is not listed");
        for name in ours {
            ops.cancel_operation(CancelOperationRequest { name })
                .await
                .unwrap();
        }
    });
    wait_for(Duration::from_secs(30), "the action being killed", || {
        processes_with("sleep 27.25").is_empty()
    });
    assert!(
        worker.log_text().contains("cancelled by the server"),
        "{}",
        worker.log_text()
    );
    let ended = client.join().unwrap();
    let text = ended.expect_err("a cancelled action succeeded");
    assert!(text.to_lowercase().contains("cancel"), "{text}");
}

/// BuildGrid killed and restarted while an action runs (its PostgreSQL, and with it the
/// scheduler's jobs and operations, stays): the client's stream drops and it resumes with
/// WaitExecution on the operation's name; the worker's session ends with the server, its
/// action is killed, and once the old bot session expires the job runs again on the
/// worker's new session. The one result the client gets is the command's local output, and
/// it is what BuildGrid's action cache holds: nothing lost, nothing cached twice.
#[test]
fn a_server_restarted_mid_action_loses_nothing() {
    let mut server = common::start_server();
    let worker = Worker::start(&server, "restart", 0);
    let dir = tempfile::tempdir().unwrap();
    let script = "sleep 6.125; { tr a-z A-Z < src/in.txt; seq 1 400 | sha256sum; } > out.bin";
    let (desc, sources) = action(dir.path(), "restart", script, &["out.bin"]);
    let section = server.section();
    let (client_desc, client_sources) = (desc.clone(), sources.clone());
    let client = std::thread::spawn(move || {
        let client = forge_reapi::from_buckconfig(&section, ClientOptions::default())
            .unwrap()
            .unwrap();
        client
            .execution()
            .unwrap()
            .execute(&RemoteCommand {
                action: &client_desc,
                input_sources: &client_sources,
                skip_cache_lookup: false,
                queue_timeout: None,
            })
            .map_err(|e| format!("{e:#}"))
    });
    wait_for(
        Duration::from_secs(60),
        "the worker starting the action",
        || !processes_with("sleep 6.125").is_empty(),
    );
    let restarted = Instant::now();
    server.restart();
    eprintln!("BuildGrid listening again after {:?}", restarted.elapsed());
    let outcome = client
        .join()
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}\nbgd log:\n{}", tail(&server.log())));
    assert_eq!(outcome.exit_code, 0);
    assert!(!outcome.cached);
    assert!(
        outcome.wait_executions >= 1,
        "the client did not resume with WaitExecution"
    );
    let files = outcome.outputs.expect("outputs").files;
    let got = fetch(&server, &files[0].digest, &dir.path().join("got"));
    let local = run_locally(script, &sources["src/in.txt"], "out.bin");
    assert_eq!(
        got, local,
        "the result differs from the command's local output"
    );
    assert!(
        worker.leases_run() >= 2,
        "the interrupted lease did not run again:\n{}",
        worker.log_text()
    );
    // What the action cache holds for the action is that same result.
    use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
    let digest = forge_reapi::remote_action_digest(&desc).unwrap();
    let cached = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let uri = server.address().replacen("grpc://", "http://", 1);
            let mut ac = re::action_cache_client::ActionCacheClient::connect(uri)
                .await
                .unwrap();
            ac.get_action_result(re::GetActionResultRequest {
                action_digest: Some(re::Digest {
                    hash: digest.hash.clone(),
                    size_bytes: digest.size_bytes,
                }),
                ..Default::default()
            })
            .await
            .expect("no action cache entry")
            .into_inner()
        });
    let cached_file = cached.output_files[0].digest.clone().unwrap();
    assert_eq!(cached_file.hash, files[0].digest.hash);
}
