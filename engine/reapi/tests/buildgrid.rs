//! The REAPI cache client against a real BuildGrid server (started per test on 127.0.0.1).

use forge_testkit as common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::BuildGrid;
use forge_reapi::{
    is_corrupt, is_unavailable, ActionDescription, ClientOptions, Digest, InputFile, LocalOutput,
};

fn action(tag: &str) -> ActionDescription {
    ActionDescription {
        argv: vec![
            "tools/pnr".into(),
            "--part".into(),
            "xcu280".into(),
            tag.into(),
        ],
        env: vec![("SEED".into(), "7".into()), ("LANG".into(), "C".into())],
        output_files: vec!["buck-out/forge/art/root/1ef78538d8598cb2/hw/__x__/top.bit".into()],
        output_dirs: vec!["buck-out/forge/art/root/1ef78538d8598cb2/hw/__x__/reports".into()],
        inputs: vec![
            InputFile {
                path: "hw/top.sv".into(),
                digest: Digest::of_bytes(b"module top; endmodule\n"),
                is_executable: false,
            },
            InputFile {
                path: "tools/pnr".into(),
                digest: Digest::of_bytes(b"#!/bin/sh\n"),
                is_executable: true,
            },
            InputFile {
                path: "hw/sub/a.sv".into(),
                digest: Digest::of_bytes(b"module a; endmodule\n"),
                is_executable: false,
            },
        ],
        platform: vec![
            ("toolchain".into(), "sim-1".into()),
            ("OSFamily".into(), "linux".into()),
        ],
    }
}

/// Writes the action's outputs under `root` (one file, a nested directory) and returns them.
fn make_outputs(root: &Path, act: &ActionDescription) -> Vec<LocalOutput> {
    let bit = root.join(&act.output_files[0]);
    std::fs::create_dir_all(bit.parent().unwrap()).unwrap();
    std::fs::write(&bit, b"bitstream bytes \x00\x01\x02").unwrap();
    let reports = root.join(&act.output_dirs[0]);
    std::fs::create_dir_all(reports.join("timing")).unwrap();
    std::fs::write(reports.join("util.rpt"), b"LUT 12%\n").unwrap();
    std::fs::write(reports.join("timing/summary.rpt"), b"WNS 0.12\n").unwrap();
    let script = reports.join("timing/rerun.sh");
    std::fs::write(&script, b"#!/bin/sh\necho hi\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    vec![
        LocalOutput {
            path: act.output_files[0].clone(),
            on_disk: bit,
            is_dir: false,
        },
        LocalOutput {
            path: act.output_dirs[0].clone(),
            on_disk: reports,
            is_dir: true,
        },
    ]
}

#[test]
fn upload_then_a_fresh_client_restores_everything() {
    let Some(server) = BuildGrid::start() else {
        return;
    };
    let built = tempfile::tempdir().unwrap();
    let act = action("round-trip");
    let outputs = make_outputs(built.path(), &act);
    {
        let writer = server.client();
        assert!(
            writer.lookup(&act).unwrap().is_none(),
            "empty cache must miss"
        );
        writer
            .upload(&act, &outputs, b"placed and routed\n", b"1 warning\n")
            .unwrap();
    }
    // A second client with its own connection and an empty output tree = a clean machine.
    let reader = server.client();
    let hit = reader
        .lookup(&act)
        .unwrap()
        .expect("the uploaded action must hit");
    assert_eq!(hit.stdout, b"placed and routed\n");
    assert_eq!(hit.stderr, b"1 warning\n");
    assert_eq!(hit.dirs, act.output_dirs);
    let mut paths: Vec<&str> = hit.files.iter().map(|f| f.path.as_str()).collect();
    paths.sort();
    let dir = &act.output_dirs[0];
    let mut expected = vec![
        act.output_files[0].clone(),
        format!("{dir}/timing/rerun.sh"),
        format!("{dir}/timing/summary.rpt"),
        format!("{dir}/util.rpt"),
    ];
    expected.sort();
    assert_eq!(paths, expected);
    let clean = tempfile::tempdir().unwrap();
    for f in &hit.files {
        let dest = clean.path().join(&f.path);
        reader.fetch(&f.digest, &dest).unwrap();
        let original = std::fs::read(built.path().join(&f.path)).unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), original, "{}", f.path);
        assert_eq!(f.is_executable, f.path.ends_with("rerun.sh"), "{}", f.path);
    }
    // A third-party REAPI client (BuildGrid's own `bgd` CLI) reads the same entry.
    let bgd = common::bgd().unwrap();
    let remote = format!("http://127.0.0.1:{}", server.port);
    let out = Command::new(&bgd)
        .args(["actioncache", "--remote", &remote, "get", "--json"])
        .arg(act.action_digest().unwrap().to_string())
        .output()
        .unwrap();
    let json = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{json}");
    let bit = hit
        .files
        .iter()
        .find(|f| f.path == act.output_files[0])
        .unwrap();
    assert!(json.contains(&act.output_files[0]), "{json}");
    assert!(json.contains(&bit.digest.hash), "{json}");
    let via_bgd = clean.path().join("via-bgd.bit");
    let st = Command::new(&bgd)
        .args(["cas", "--remote", &remote, "download-file"])
        .arg(bit.digest.to_string())
        .arg(&via_bgd)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    assert_eq!(
        std::fs::read(&via_bgd).unwrap(),
        std::fs::read(built.path().join(&bit.path)).unwrap()
    );
    std::fs::remove_file(&via_bgd).unwrap();
    // Anything that changes the key misses: another input's content.
    let mut changed = act.clone();
    changed.inputs[0].digest = Digest::of_bytes(b"module top; wire w; endmodule\n");
    assert!(reader.lookup(&changed).unwrap().is_none());
    // No leftover temporary files beside the restored outputs.
    let leftovers = walk(clean.path())
        .into_iter()
        .filter(|p| p.contains(".forge-fetch-"))
        .count();
    assert_eq!(leftovers, 0);
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p.display().to_string());
        }
    }
    out
}

/// The Action digest computed by python protobuf (BuildGrid's own generated REAPI classes,
/// deterministic serialisation) must equal ours: other REAPI clients find the same entries.
#[test]
fn action_digest_matches_python_protobuf() {
    let Some(bgd) = common::bgd() else {
        return;
    };
    let python = bgd.parent().unwrap().join("python");
    let act = action("digest");
    let inputs: Vec<String> = act
        .inputs
        .iter()
        .map(|i| {
            format!(
                r#"["{}", "{}", {}, {}]"#,
                i.path,
                i.digest.hash,
                i.digest.size_bytes,
                if i.is_executable { "true" } else { "false" }
            )
        })
        .collect();
    let pairs = |v: &[(String, String)]| {
        v.iter()
            .map(|(k, v)| format!(r#"["{k}", "{v}"]"#))
            .collect::<Vec<_>>()
            .join(",")
    };
    let strings = |v: &[String]| {
        v.iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(",")
    };
    let json = format!(
        r#"{{"argv":[{}],"env":[{}],"files":[{}],"dirs":[{}],"platform":[{}],"inputs":[{}]}}"#,
        strings(&act.argv),
        pairs(&act.env),
        strings(&act.output_files),
        strings(&act.output_dirs),
        pairs(&act.platform),
        inputs.join(",")
    );
    let script = r#"
import hashlib, json, sys
from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2 as re
d = json.load(sys.stdin)
def digest(msg):
    b = msg.SerializeToString(deterministic=True)
    return re.Digest(hash=hashlib.sha256(b).hexdigest(), size_bytes=len(b))
cmd = re.Command(arguments=d["argv"])
for k, v in sorted(d["env"]):
    cmd.environment_variables.add(name=k, value=v)
cmd.output_files.extend(sorted(d["files"]))
cmd.output_directories.extend(sorted(d["dirs"]))
cmd.output_paths.extend(sorted(d["files"] + d["dirs"]))
if d["platform"]:
    for k, v in sorted(d["platform"]):
        cmd.platform.properties.add(name=k, value=v)
tree = {}
for path, h, size, ex in d["inputs"]:
    node = tree
    parts = path.split("/")
    for p in parts[:-1]:
        node = node.setdefault(p, {})
    node[parts[-1]] = (h, size, ex)
def encode(node):
    dm = re.Directory()
    for name in sorted(node):
        v = node[name]
        if isinstance(v, dict):
            dm.directories.add(name=name, digest=encode(v))
        else:
            dm.files.add(name=name, digest=re.Digest(hash=v[0], size_bytes=v[1]), is_executable=v[2])
    return digest(dm)
action = re.Action(command_digest=digest(cmd), input_root_digest=encode(tree))
a = digest(action)
print(a.hash, a.size_bytes)
"#;
    let mut child = Command::new(&python)
        .arg("-c")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(json.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut it = text.split_whitespace();
    let expected = Digest {
        hash: it.next().unwrap().to_string(),
        size_bytes: it.next().unwrap().parse().unwrap(),
    };
    assert_eq!(act.action_digest().unwrap(), expected);
}

#[test]
fn result_whose_blob_vanished_is_a_miss() {
    let Some(server) = BuildGrid::start() else {
        return;
    };
    let built = tempfile::tempdir().unwrap();
    let act = action("vanished");
    let outputs = make_outputs(built.path(), &act);
    let client = server.client();
    client.upload(&act, &outputs, b"", b"").unwrap();
    assert!(client.lookup(&act).unwrap().is_some());
    let bit = Digest::of_file(&outputs[0].on_disk).unwrap();
    std::fs::remove_file(server.blob_path(&bit)).unwrap();
    assert!(
        client.lookup(&act).unwrap().is_none(),
        "a result referencing a blob the CAS lost must be a miss"
    );
}

#[test]
fn blob_corrupted_on_the_server_is_detected() {
    let Some(server) = BuildGrid::start() else {
        return;
    };
    let built = tempfile::tempdir().unwrap();
    let act = ActionDescription {
        output_dirs: vec![],
        output_files: vec!["out/small.bin".into(), "out/large.bin".into()],
        ..action("corrupt")
    };
    std::fs::create_dir_all(built.path().join("out")).unwrap();
    let small = built.path().join("out/small.bin");
    std::fs::write(&small, b"good small content").unwrap();
    // Larger than BuildGrid's batch limit: travels through ByteStream.
    let large = built.path().join("out/large.bin");
    common::write_random_file(&large, 6 << 20, 3);
    let outputs: Vec<LocalOutput> = [("out/small.bin", &small), ("out/large.bin", &large)]
        .iter()
        .map(|(p, d)| LocalOutput {
            path: p.to_string(),
            on_disk: d.to_path_buf(),
            is_dir: false,
        })
        .collect();
    let client = server.client();
    client.upload(&act, &outputs, b"", b"").unwrap();
    let hit = client.lookup(&act).unwrap().unwrap();
    let restore = tempfile::tempdir().unwrap();
    for f in &hit.files {
        // Same size, different bytes: only hashing can notice.
        let stored = server.blob_path(&f.digest);
        let mut bytes = std::fs::read(&stored).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0xff;
        std::fs::write(&stored, &bytes).unwrap();
        let dest = restore.path().join(&f.path);
        let err = client.fetch(&f.digest, &dest).unwrap_err();
        assert!(is_corrupt(&err), "{}: {err:#}", f.path);
        assert!(
            format!("{err:#}").contains(&f.digest.hash),
            "the error names the blob: {err:#}"
        );
        assert!(!dest.exists(), "nothing half-written is left at {}", f.path);
    }
    assert!(
        walk(restore.path()).is_empty(),
        "{:?}",
        walk(restore.path())
    );
    // The client stays usable after a corrupt blob: it is the data, not the server.
    assert!(client.is_available());
}

#[test]
fn killed_server_fails_fast_and_the_client_gives_up() {
    let Some(mut server) = BuildGrid::start() else {
        return;
    };
    let built = tempfile::tempdir().unwrap();
    let big = built.path().join("big.bin");
    common::write_random_file(&big, 64 << 20, 9);
    let act = ActionDescription {
        output_dirs: vec![],
        output_files: vec!["big.bin".into()],
        ..action("killed")
    };
    let client = server.client();
    // The upload hashes the file before it streams it: time that, so the kill lands while
    // ByteStream.Write is running.
    let t = Instant::now();
    Digest::of_file(&big).unwrap();
    let hashing = t.elapsed();
    // Kill the server while a 64 MiB upload is streaming.
    let uploader = {
        let client = client.clone();
        let act = act.clone();
        std::thread::spawn(move || {
            let t = Instant::now();
            let r = client.upload(
                &act,
                &[LocalOutput {
                    path: "big.bin".into(),
                    on_disk: big,
                    is_dir: false,
                }],
                b"",
                b"",
            );
            (r, t.elapsed())
        })
    };
    std::thread::sleep(hashing + Duration::from_millis(150));
    server.kill();
    let (result, took) = uploader.join().unwrap();
    eprintln!(
        "upload interrupted by the kill: {:?} after {took:?}",
        result.as_ref().err().map(|e| format!("{e:#}"))
    );
    // Either the upload finished before the kill, or it failed with a clear error quickly.
    if let Err(e) = &result {
        assert!(is_unavailable(e), "{e:#}");
        assert!(took < Duration::from_secs(15), "upload hung for {took:?}");
    }
    let t = Instant::now();
    let mut errors = Vec::new();
    for _ in 0..3 {
        if let Err(e) = client.lookup(&act) {
            errors.push(e);
        }
    }
    assert_eq!(errors.len(), 3, "a dead server cannot answer");
    assert!(errors.iter().all(is_unavailable), "{errors:?}");
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "three failed lookups took {:?}",
        t.elapsed()
    );
    assert!(!client.is_available(), "the client gave up on the server");
    let msg = format!("{:#}", errors[0]);
    eprintln!("lookup against the killed server: {msg}");
    assert!(
        msg.contains("127.0.0.1"),
        "the error names the server: {msg}"
    );
    // From now on every call fails immediately instead of paying the retries again.
    let t = Instant::now();
    let e = client.lookup(&act).unwrap_err();
    assert!(is_unavailable(&e));
    assert!(t.elapsed() < Duration::from_millis(50), "{:?}", t.elapsed());
}

fn section(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn connect_error(section: &BTreeMap<String, String>) -> anyhow::Error {
    match forge_reapi::from_buckconfig(section, ClientOptions::default()) {
        Ok(_) => panic!("connecting with {section:?} must fail"),
        Err(e) => e,
    }
}

#[test]
fn bad_configuration_is_reported_with_its_key() {
    let Some(server) = BuildGrid::start_with_instance("main") else {
        return;
    };
    let addr = server.address();

    let e = connect_error(&section(&[("address", "https://127.0.0.1:1")]));
    let msg = format!("{e:#}");
    assert!(
        msg.contains("[buck2_re_client] address") && msg.contains("omit"),
        "{msg}"
    );

    let e = connect_error(&section(&[
        ("address", "grpc://127.0.0.1:notaport"),
        ("tls", "false"),
    ]));
    assert!(
        format!("{e:#}").contains("[buck2_re_client] address"),
        "{e:#}"
    );

    // TLS (buck2's default) against this plaintext server.
    let e = connect_error(&section(&[("address", &addr), ("instance_name", "main")]));
    let msg = format!("{e:#}");
    assert!(!is_unavailable(&e), "{msg}");
    assert!(msg.contains("[buck2_re_client] tls"), "{msg}");
    eprintln!("tls mismatch: {msg}");

    let e = connect_error(&section(&[
        ("address", &addr),
        ("tls", "false"),
        ("instance_name", "nosuch"),
    ]));
    let msg = format!("{e:#}");
    assert!(
        msg.contains("[buck2_re_client] instance_name = `nosuch`"),
        "{msg}"
    );
    eprintln!("unknown instance: {msg}");

    // The right settings work.
    let ok = forge_reapi::from_buckconfig(
        &section(&[
            ("address", &addr),
            ("tls", "false"),
            ("instance_name", "main"),
        ]),
        ClientOptions::default(),
    )
    .unwrap();
    assert!(ok.is_some());

    // A server that is simply not there is "unavailable" (build locally), not a config error.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let e = connect_error(&section(&[
        ("address", &format!("127.0.0.1:{closed}")),
        ("tls", "false"),
    ]));
    assert!(is_unavailable(&e), "{e:#}");
}

#[test]
fn tls_server_with_buck2_tls_keys() {
    let certs_dir = tempfile::tempdir().unwrap();
    let Some((ca, cert, key)) = common::make_certs(certs_dir.path()) else {
        return;
    };
    let Some(server) = BuildGrid::start_with("", Some((&cert, &key)), None) else {
        return;
    };
    let addr = format!("grpc://localhost:{}", server.port);

    // Plaintext against a TLS server: a configuration error naming `tls`.
    let e = connect_error(&section(&[("address", &addr), ("tls", "false")]));
    let msg = format!("{e:#}");
    eprintln!("plaintext to TLS: {msg}");
    assert!(!is_unavailable(&e), "{msg}");
    assert!(msg.contains("[buck2_re_client] tls = false"), "{msg}");

    // TLS without the CA that signed the server: names the TLS keys.
    let e = connect_error(&section(&[("address", &addr)]));
    let msg = format!("{e:#}");
    eprintln!("unknown CA: {msg}");
    assert!(msg.contains("tls_ca_certs"), "{msg}");

    // buck2's keys with the right CA work end to end; `$VAR` substitution in the path.
    std::env::set_var("FORGE_REAPI_TEST_CA", &ca);
    let client = forge_reapi::from_buckconfig(
        &section(&[("address", &addr), ("tls_ca_certs", "$FORGE_REAPI_TEST_CA")]),
        ClientOptions::default(),
    )
    .unwrap()
    .unwrap();
    let built = tempfile::tempdir().unwrap();
    let act = action("tls");
    let outputs = make_outputs(built.path(), &act);
    client.upload(&act, &outputs, b"", b"").unwrap();
    let hit = client.lookup(&act).unwrap().expect("hit over TLS");
    assert_eq!(hit.files.len(), 4);
}

fn client_at(port: u16) -> std::sync::Arc<dyn forge_reapi::RemoteCache> {
    forge_reapi::from_buckconfig(
        &section(&[
            ("address", &format!("grpc://127.0.0.1:{port}")),
            ("tls", "false"),
        ]),
        ClientOptions::default(),
    )
    .unwrap()
    .unwrap()
}

/// A connection broken in the middle of a ByteStream transfer: the upload is retried
/// (BuildGrid has no QueryWriteStatus, so it restarts) and the download resumes at the
/// offset it reached; both end with the exact bytes.
#[test]
fn broken_connections_mid_transfer_are_retried() {
    let Some(server) = BuildGrid::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("big.bin");
    common::write_random_file(&file, 40 << 20, 5);
    let reference = common::sha256sum(&file);
    let act = ActionDescription {
        output_dirs: vec![],
        output_files: vec!["big.bin".into()],
        ..action("flaky")
    };
    let outputs = [LocalOutput {
        path: "big.bin".into(),
        on_disk: file,
        is_dir: false,
    }];

    let up = common::FlakyProxy::start(server.port, common::Direction::ToServer, 16 << 20);
    client_at(up.port).upload(&act, &outputs, b"", b"").unwrap();
    assert!(up.did_cut(), "the proxy must have broken the upload");

    let down = common::FlakyProxy::start(server.port, common::Direction::ToClient, 16 << 20);
    let client = client_at(down.port);
    let hit = client
        .lookup(&act)
        .unwrap()
        .expect("hit after the retried upload");
    let dest = work.path().join("restored/big.bin");
    client.fetch(&hit.files[0].digest, &dest).unwrap();
    assert!(down.did_cut(), "the proxy must have broken the download");
    assert_eq!(common::sha256sum(&dest), reference);
    assert!(client.is_available());
}

/// `http_headers` (with `$VAR` substitution) reach the server: BuildGrid with JWT auth
/// accepts the client only with `authorization: Bearer <token>` from the environment.
#[test]
fn http_headers_carry_credentials() {
    let Some(bgd) = common::bgd() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("jwt.secret");
    std::fs::write(&secret, "forge-test-secret-0123456789abcdef").unwrap();
    let Some(server) = BuildGrid::start_with("", None, Some(&secret)) else {
        return;
    };
    // The token is minted by PyJWT (in BuildGrid's venv), not by the code under test.
    let out = Command::new(bgd.parent().unwrap().join("python"))
        .arg("-c")
        .arg(
            "import jwt, sys, time; print(jwt.encode({'sub': 'forge', 'exp': int(time.time()) \
             + 3600}, open(sys.argv[1]).read(), algorithm='HS256'))",
        )
        .arg(&secret)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let token = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let addr = server.address();

    let e = connect_error(&section(&[("address", &addr), ("tls", "false")]));
    let msg = format!("{e:#}");
    eprintln!("no credentials: {msg}");
    assert!(msg.contains("[buck2_re_client] http_headers"), "{msg}");
    assert!(!is_unavailable(&e), "{msg}");

    std::env::set_var("FORGE_REAPI_TEST_TOKEN", &token);
    let client = forge_reapi::from_buckconfig(
        &section(&[
            ("address", &addr),
            ("tls", "false"),
            (
                "http_headers",
                "Authorization: Bearer $FORGE_REAPI_TEST_TOKEN, x-extra: 1",
            ),
        ]),
        ClientOptions::default(),
    )
    .unwrap()
    .unwrap();
    let built = tempfile::tempdir().unwrap();
    let act = action("headers");
    let outputs = make_outputs(built.path(), &act);
    client.upload(&act, &outputs, b"", b"").unwrap();
    assert!(client.lookup(&act).unwrap().is_some());
}
