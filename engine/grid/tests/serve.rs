//! `forge-re-grid serve` as a user runs it: it prints and records an address at which
//! BuildGrid answers GetCapabilities with execution enabled, and SIGTERM — or the command's
//! own death by SIGKILL — leaves none of the processes it started running.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bazel_remote_apis::build::bazel::remote::execution::v2::capabilities_client::CapabilitiesClient;
use bazel_remote_apis::build::bazel::remote::execution::v2::{
    digest_function, GetCapabilitiesRequest,
};

/// Starts `serve` in the crate directory (so it finds the workspace's .venv/buildgrid) and
/// returns it with the address it printed.
fn serve(dir: &Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_forge-re-grid"))
        .args(["serve", "--keepalive-timeout", "5", "--dir"])
        .arg(dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(!line.is_empty(), "serve exited without printing an address");
    (child, line.trim().to_string())
}

fn capabilities(address: &str) -> bool {
    let uri = address.replacen("grpc://", "http://", 1);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        // The port accepts connections a moment before every service answers (a fresh
        // server may close the first connection): retry a transient failure for a while.
        let mut tries = 0;
        let caps = loop {
            let answer = match CapabilitiesClient::connect(uri.clone()).await {
                Ok(mut client) => client
                    .get_capabilities(GetCapabilitiesRequest {
                        instance_name: String::new(),
                    })
                    .await
                    .map(|r| r.into_inner())
                    .map_err(|s| format!("{s:?}")),
                Err(e) => Err(format!("{e:?}")),
            };
            match answer {
                Ok(caps) => break caps,
                Err(e) if tries < 40 => {
                    tries += 1;
                    eprintln!("GetCapabilities not answered yet: {e}");
                    std::thread::sleep(std::time::Duration::from_millis(250));
                }
                Err(e) => panic!("GetCapabilities: {e}"),
            }
        };
        let exec = caps.execution_capabilities.expect("execution capabilities");
        assert_eq!(exec.digest_function, digest_function::Value::Sha256 as i32);
        assert!(caps.cache_capabilities.is_some(), "no cache capabilities");
        exec.exec_enabled
    })
}

/// Every live process descending from `pid` (parent links in /proc/<pid>/stat).
fn descendants(pid: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let p: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
            let ppid = stat[stat.rfind(')')? + 2..]
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            Some((p, ppid))
        })
        .collect();
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// Not a zombie waiting for its parent: really running.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s[s.rfind(')')? + 2..].chars().next())
        .is_some_and(|state| state != 'Z')
}

fn assert_all_gone(pids: &[u32], within: Duration) {
    let start = Instant::now();
    while pids.iter().any(|p| alive(*p)) && start.elapsed() < within {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left: Vec<_> = pids.iter().filter(|p| alive(**p)).collect();
    assert!(left.is_empty(), "still running: {left:?}");
}

#[test]
fn serves_execution_and_stops_everything_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, address) = serve(dir.path());
    assert!(address.starts_with("grpc://127.0.0.1:"), "{address}");
    let recorded = std::fs::read_to_string(dir.path().join("address")).unwrap();
    assert_eq!(recorded.trim(), address);
    assert!(capabilities(&address), "execution is not enabled");
    let started = descendants(child.id());
    // postgres (with its own children) and bgd at least.
    assert!(started.len() >= 3, "{started:?}");
    // SAFETY: signals the child this test spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert!(status.success(), "serve after SIGTERM: {status}");
    assert_all_gone(&started, Duration::from_secs(10));
    assert!(
        !dir.path().join("address").exists(),
        "the address outlived the server"
    );
}

#[test]
fn dies_with_everything_it_started_and_restarts_on_the_same_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, _) = serve(dir.path());
    let started = descendants(child.id());
    assert!(started.len() >= 3, "{started:?}");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_all_gone(&started, Duration::from_secs(15));
    // The PostgreSQL data directory left by a killed server is reused.
    let (mut again, address) = serve(dir.path());
    assert!(
        capabilities(&address),
        "execution is not enabled after a restart"
    );
    let started = descendants(again.id());
    // SAFETY: signals the child this test spawned.
    unsafe { libc::kill(again.id() as i32, libc::SIGINT) };
    assert!(again.wait().unwrap().success());
    assert_all_gone(&started, Duration::from_secs(10));
}

#[test]
fn a_missing_bgd_is_an_error_saying_what_to_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_forge-re-grid"))
        .args(["serve", "--bgd", "/nonexistent/bgd", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bgd is not at /nonexistent/bgd"), "{err}");
    // Nothing was started: no PostgreSQL data directory.
    assert!(!dir.path().join("pg").exists());
}
