//! The `forge` binary against a real BuildGrid (cache only, on 127.0.0.1): a clean machine
//! is served entirely from the remote cache, `--remote-cache=read|off` keep their promises,
//! a dead server or a corrupted blob never fails a build nor yields a wrong output, and a
//! malformed `[buck2_re_client]` address is a user error naming the key.
//!
//! Expected outputs are known by construction of the workspace's shell commands (and, for the
//! server side, read straight from BuildGrid's disk storage), not taken from forge.

use forge_testkit as bgd;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use bgd::BuildGrid;

const ART: &str = "buck-out/forge/art/root/1ef78538d8598cb2/pkg/__g__";
const EXIT_USER_ERROR: i32 = 3;

/// Bytes of `big.bin`: large enough that BuildGrid's batch limits send it through ByteStream.
const BIG_SIZE: usize = 6_000_000;

const RULES: &str = r#"def _gen_impl(ctx: AnalysisContext) -> list[Provider]:
    a = ctx.actions.declare_output("a.txt")
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "echo \"$1\" > \"$0\"", a.as_output(), ctx.attrs.word),
        category = "gen_a",
        local_only = True,
        allow_cache_upload = True,
    )
    tree = ctx.actions.declare_output("tree", dir = True)
    ctx.actions.run(
        cmd_args(
            "/bin/sh",
            "-c",
            "sleep \"$2\" && mkdir -p \"$0/sub\" && cp \"$1\" \"$0/sub/copy.txt\" && echo leaf > \"$0/leaf.txt\"",
            tree.as_output(),
            a,
            ctx.attrs.delay,
        ),
        category = "gen_tree",
        local_only = True,
        allow_cache_upload = True,
    )
    b = ctx.actions.declare_output("b.txt")
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "cat \"$1/sub/copy.txt\" \"$1/leaf.txt\" > \"$0\"", b.as_output(), tree),
        category = "gen_b",
        local_only = True,
        allow_cache_upload = True,
    )
    big = ctx.actions.declare_output("big.bin")
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "yes forge | head -c {big} > \"$0\"", big.as_output()),
        category = "gen_big",
        local_only = True,
        allow_cache_upload = True,
    )
    return [DefaultInfo(default_output = b, other_outputs = [tree, big])]

gen = rule(
    impl = _gen_impl,
    attrs = {
        "delay": attrs.string(default = "0"),
        "word": attrs.string(),
    },
)
"#;

/// A throwaway project: `//pkg:g` runs four commands (one with a directory output, one with
/// a 6 MB output), all `local_only` with `allow_cache_upload`.
struct Workspace {
    dir: tempfile::TempDir,
}

/// The project's own execution platform (`platforms/BUCK`, `platforms/defs.bzl`): the
/// cache settings under test are the ones the project ships.
fn copy_project_platforms(root: &Path) {
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::create_dir_all(root.join("platforms")).unwrap();
    for f in ["BUCK", "defs.bzl"] {
        std::fs::copy(
            project.join("platforms").join(f),
            root.join("platforms").join(f),
        )
        .unwrap();
    }
}

/// `.buckconfig` of a test project: the cells, the project's execution platform, `[ci]`
/// as the project's own `.buckconfig` sets it, then `extra`.
fn buckconfig(ci_remote_cache: bool, extra: &str) -> String {
    format!(
        "[cells]\n  root = .\n\n[buildfile]\n  name = BUCK\n\n[build]\n  execution_platforms = root//platforms:platforms\n\n[ci]\n  remote_cache = {ci_remote_cache}\n\n{extra}"
    )
}

impl Workspace {
    /// A project whose platform has the remote cache on (`[ci] remote_cache = true`).
    fn new(re_client: &str, delay: &str) -> Workspace {
        Workspace::with_config(
            &buckconfig(true, &format!("[buck2_re_client]\n{re_client}")),
            delay,
        )
    }

    fn with_config(config: &str, delay: &str) -> Workspace {
        let dir = tempfile::Builder::new()
            .prefix("forge-remote-cache-")
            .tempdir()
            .unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("rules")).unwrap();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::write(root.join(".buckroot"), "").unwrap();
        std::fs::write(root.join(".buckconfig"), config).unwrap();
        copy_project_platforms(root);
        std::fs::write(
            root.join("rules/defs.bzl"),
            RULES.replace("{big}", &BIG_SIZE.to_string()),
        )
        .unwrap();
        std::fs::write(
            root.join("pkg/BUCK"),
            format!(
                "load(\"//rules:defs.bzl\", \"gen\")\n\ngen(\n    name = \"g\",\n    delay = \"{delay}\",\n    word = \"hello\",\n)\n"
            ),
        )
        .unwrap();
        Workspace { dir }
    }

    fn for_server(server: &BuildGrid, delay: &str) -> Workspace {
        let mut section = String::new();
        for (k, v) in server.section() {
            section.push_str(&format!("  {k} = {v}\n"));
        }
        Workspace::new(&section, delay)
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn forge(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_forge"));
        cmd.args(args).current_dir(self.root()).stdin(Stdio::null());
        cmd
    }

    fn build(&self, extra: &[&str]) -> Run {
        let mut args = vec!["build", "//pkg:g"];
        args.extend_from_slice(extra);
        Run::from(self.forge(&args).output().unwrap())
    }

    /// A clean machine state: no outputs, no local cache, no logs.
    fn wipe_buck_out(&self) {
        std::fs::remove_dir_all(self.root().join("buck-out")).unwrap();
    }

    fn art(&self, rel: &str) -> PathBuf {
        self.root().join(ART).join(rel)
    }

    /// Every output file (relative path, bytes, executable bit), in path order.
    fn outputs(&self) -> Vec<(String, Vec<u8>, bool)> {
        use std::os::unix::fs::PermissionsExt;
        let base = self.root().join(ART);
        let mut files = Vec::new();
        for rel in [
            "a.txt",
            "b.txt",
            "big.bin",
            "tree/leaf.txt",
            "tree/sub/copy.txt",
        ] {
            let p = base.join(rel);
            let mode = std::fs::metadata(&p)
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
                .permissions()
                .mode();
            files.push((
                rel.to_string(),
                std::fs::read(&p).unwrap(),
                mode & 0o111 != 0,
            ));
        }
        files
    }

    /// The outputs are what the shell commands produce.
    fn assert_outputs_correct(&self) {
        let read = |rel: &str| std::fs::read_to_string(self.art(rel)).unwrap();
        assert_eq!(read("a.txt"), "hello\n");
        assert_eq!(read("tree/sub/copy.txt"), "hello\n");
        assert_eq!(read("tree/leaf.txt"), "leaf\n");
        assert_eq!(read("b.txt"), "hello\nleaf\n");
        let big = std::fs::read(self.art("big.bin")).unwrap();
        assert_eq!(big.len(), BIG_SIZE);
        assert!(
            big.chunks(6).all(|c| b"forge\n".starts_with(c)),
            "big.bin is not `yes forge` output"
        );
    }

    fn what_ran(&self) -> String {
        let out = self.forge(&["log", "what-ran"]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

struct Run {
    code: i32,
    stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
struct Counts {
    commands: usize,
    cached: usize,
    remote: usize,
    local: usize,
}

impl Run {
    fn ok(self) -> Run {
        assert_eq!(self.code, 0, "forge build failed:\n{}", self.stderr);
        self
    }

    /// buck2's `Commands: N (cached: X, remote: Y, local: Z)` summary line.
    fn counts(&self) -> Counts {
        let line = self
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix("Commands: "))
            .unwrap_or_else(|| panic!("no `Commands:` line in:\n{}", self.stderr));
        let nums: Vec<usize> = line
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().unwrap())
            .collect();
        assert_eq!(nums.len(), 4, "unexpected summary line `{line}`");
        Counts {
            commands: nums[0],
            cached: nums[1],
            remote: nums[2],
            local: nums[3],
        }
    }

    /// The remote cache error count of the build summary (a line after `Commands:`).
    fn remote_errors_in_summary(&self) -> Option<usize> {
        self.stderr
            .lines()
            .skip_while(|l| !l.starts_with("Commands: "))
            .find(|l| l.to_ascii_lowercase().contains("remote cache error"))
            .and_then(|l| {
                l.split(|c: char| !c.is_ascii_digit())
                    .find(|n| !n.is_empty())
                    .map(|n| n.parse().unwrap())
            })
    }

    /// Remote cache warnings (each may have continuation lines of its own).
    fn warnings(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with("warning: remote cache"))
            .collect()
    }
}

fn counts(cached: usize, remote: usize, local: usize) -> Counts {
    Counts {
        commands: cached + remote + local,
        cached,
        remote,
        local,
    }
}

/// Files in BuildGrid's disk CAS.
fn server_blobs(server: &BuildGrid) -> usize {
    let objects = server.dir.path().join("storage");
    walk_files(&objects).len()
}

fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk_files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn clean_machine_is_served_entirely_from_the_remote_cache() {
    let Some(server) = BuildGrid::start() else {
        return;
    };
    let ws = Workspace::for_server(&server, "0");
    let first = ws.build(&[]).ok();
    assert_eq!(first.counts(), counts(0, 0, 4), "{}", first.stderr);
    assert!(first.warnings().is_empty(), "{}", first.stderr);
    ws.assert_outputs_correct();
    let built = ws.outputs();

    ws.wipe_buck_out();
    let second = ws.build(&[]).ok();
    assert_eq!(
        second.counts(),
        counts(4, 0, 0),
        "every command must come from the remote cache:\n{}",
        second.stderr
    );
    assert!(second.warnings().is_empty(), "{}", second.stderr);
    assert_eq!(
        ws.outputs(),
        built,
        "restored outputs differ from built ones"
    );
    let ran = ws.what_ran();
    let kinds: Vec<&str> = ran
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(kinds, ["remote"; 4], "forge log what-ran:\n{ran}");
}

#[test]
fn read_mode_never_uploads() {
    let Some(server) = BuildGrid::start() else {
        return;
    };
    let ws = Workspace::for_server(&server, "0");
    let first = ws.build(&["--remote-cache=read"]).ok();
    assert_eq!(first.counts(), counts(0, 0, 4), "{}", first.stderr);
    assert_eq!(
        server_blobs(&server),
        0,
        "read mode wrote to the server's CAS"
    );

    // Nothing was uploaded, so a clean machine finds nothing either.
    ws.wipe_buck_out();
    let second = ws.build(&["--remote-cache=read"]).ok();
    assert_eq!(second.counts(), counts(0, 0, 4), "{}", second.stderr);
    assert!(second.warnings().is_empty(), "{}", second.stderr);
    assert_eq!(
        server_blobs(&server),
        0,
        "read mode wrote to the server's CAS"
    );
    ws.assert_outputs_correct();
}

#[test]
fn off_mode_never_contacts_the_server() {
    // A listener that records whether anything connects; no real server is needed.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let ws = Workspace::new(
        &format!("  address = grpc://127.0.0.1:{port}\n  tls = false\n"),
        "0",
    );
    let run = ws.build(&["--remote-cache=off"]).ok();
    assert_eq!(run.counts(), counts(0, 0, 4), "{}", run.stderr);
    assert!(run.warnings().is_empty(), "{}", run.stderr);
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        Ok((_, peer)) => panic!("--remote-cache=off connected to the server (from {peer})"),
        Err(e) => panic!("accept: {e}"),
    }
    ws.assert_outputs_correct();
}

#[test]
fn server_down_before_the_build_does_not_fail_it() {
    // A port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let ws = Workspace::new(
        &format!("  address = grpc://127.0.0.1:{port}\n  tls = false\n"),
        "0",
    );
    let run = ws.build(&[]).ok();
    assert_eq!(run.counts(), counts(0, 0, 4), "{}", run.stderr);
    assert_eq!(run.warnings().len(), 1, "one warning:\n{}", run.stderr);
    assert_eq!(
        run.remote_errors_in_summary(),
        Some(1),
        "the build summary counts the unreachable server:\n{}",
        run.stderr
    );
    ws.assert_outputs_correct();
}

#[test]
fn server_killed_mid_build_does_not_fail_it() {
    let Some(mut server) = BuildGrid::start() else {
        return;
    };
    // The server dies as soon as `gen_a` is done; `gen_tree` (which needs `a.txt`) then sleeps,
    // so its upload and the lookup of `gen_b` meet a dead server.
    let ws = Workspace::for_server(&server, "1");
    let mut child = ws
        .forge(&["build", "//pkg:g"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = String::new();
    let mut killed = false;
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        if !killed && line.contains("(gen_a)") {
            server.kill();
            killed = true;
        }
        stderr.push_str(&line);
        stderr.push('\n');
    }
    let status = child.wait().unwrap();
    let run = Run {
        code: status.code().unwrap_or(-1),
        stderr,
    };
    assert!(killed, "no action finished:\n{}", run.stderr);
    let run = run.ok();
    let c = run.counts();
    assert_eq!((c.commands, c.local), (4, 4), "{}", run.stderr);
    assert_eq!(run.warnings().len(), 1, "one warning:\n{}", run.stderr);
    assert!(
        run.remote_errors_in_summary().is_some_and(|n| n >= 1),
        "the build summary counts the remote cache errors:\n{}",
        run.stderr
    );
    ws.assert_outputs_correct();
}

#[test]
fn corrupted_blob_on_the_server_is_detected() {
    let Some(server) = BuildGrid::start() else {
        return;
    };
    let ws = Workspace::for_server(&server, "0");
    let first = ws.build(&[]).ok();
    assert_eq!(first.counts(), counts(0, 0, 4), "{}", first.stderr);

    // Flip one byte of `a.txt` in BuildGrid's disk storage (same size, wrong content).
    let hash = bgd::sha256sum(&ws.art("a.txt"));
    let blob = server.blob_path(&forge_reapi::Digest {
        hash,
        size_bytes: 6,
    });
    let mut bytes = std::fs::read(&blob)
        .unwrap_or_else(|e| panic!("BuildGrid stores no {}: {e}", blob.display()));
    assert_eq!(bytes, b"hello\n");
    bytes[0] ^= 0x20;
    std::fs::write(&blob, &bytes).unwrap();

    ws.wipe_buck_out();
    let second = ws.build(&[]).ok();
    let c = second.counts();
    assert_eq!(
        (c.commands, c.local),
        (4, 1),
        "only the action with the corrupted output runs again:\n{}",
        second.stderr
    );
    let warnings = second.warnings();
    assert_eq!(warnings.len(), 1, "one warning:\n{}", second.stderr);
    assert!(
        warnings[0].contains("gen_a"),
        "the warning names the action:\n{}",
        second.stderr
    );
    assert_eq!(
        second.remote_errors_in_summary(),
        Some(1),
        "{}",
        second.stderr
    );
    ws.assert_outputs_correct();
}

#[test]
fn malformed_address_is_a_user_error_naming_the_key() {
    let ws = Workspace::new("  address = grpc//127.0.0.1 8980\n  tls = false\n", "0");
    let run = ws.build(&[]);
    assert_eq!(run.code, EXIT_USER_ERROR, "{}", run.stderr);
    assert!(
        run.stderr.contains("[buck2_re_client] address"),
        "the error names the key:\n{}",
        run.stderr
    );
    assert!(
        !ws.root().join(ART).join("a.txt").exists(),
        "nothing was built"
    );
}

#[test]
fn result_referencing_a_missing_blob_is_a_miss() {
    let Some(server) = BuildGrid::start() else {
        return;
    };
    let ws = Workspace::for_server(&server, "0");
    let first = ws.build(&[]).ok();
    assert_eq!(first.counts(), counts(0, 0, 4), "{}", first.stderr);

    // The action cache still names `b.txt`, but the CAS lost it (evicted, say).
    let blob = server.blob_path(&forge_reapi::Digest {
        hash: bgd::sha256sum(&ws.art("b.txt")),
        size_bytes: 11,
    });
    std::fs::remove_file(&blob)
        .unwrap_or_else(|e| panic!("BuildGrid stores no {}: {e}", blob.display()));

    ws.wipe_buck_out();
    let second = ws.build(&[]).ok();
    assert_eq!(
        second.counts(),
        counts(3, 0, 1),
        "only `gen_b` runs again:\n{}",
        second.stderr
    );
    assert!(
        second.warnings().is_empty(),
        "a missing blob is an ordinary miss:\n{}",
        second.stderr
    );
    ws.assert_outputs_correct();
    assert!(blob.exists(), "the rebuilt output was uploaded again");
}

/// The guide's "Remote cache" section (docs/guide.md): its `.buckconfig.local` block and its
/// command block, exactly as printed there (only the server address is this test's).
fn readme_remote_cache_instructions() -> (String, Vec<Vec<String>>) {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/guide.md"))
            .unwrap();
    let section = readme
        .split("\n## Remote cache\n")
        .nth(1)
        .expect("docs/guide.md has a `## Remote cache` section");
    let section = section.split("\n## ").next().unwrap();
    let block = |fence: &str| -> String {
        let start = section
            .find(fence)
            .unwrap_or_else(|| panic!("the guide's remote cache section lacks a {fence} block"));
        let body = &section[start + fence.len()..];
        body[..body.find("\n```").unwrap()]
            .trim_start_matches('\n')
            .to_owned()
    };
    let ini = block("```ini\n");
    assert!(
        ini.contains("address = grpc://127.0.0.1:50051"),
        "the guide's block names the server it tells users to start:\n{ini}"
    );
    let commands = block("```sh\n")
        .lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
        .map(|l| {
            let words: Vec<String> = l.split_whitespace().map(str::to_owned).collect();
            assert_eq!(
                words[0], "./forge",
                "guide command `{l}` is not a forge command"
            );
            words[1..].to_vec()
        })
        .collect();
    (ini, commands)
}

/// A project with the guide's `.buckconfig.local` for `server` and `[ci] remote_cache =
/// false` in `.buckconfig`, as the project ships it.
fn readme_workspace(server: &BuildGrid) -> Workspace {
    let (ini, _) = readme_remote_cache_instructions();
    let ws = Workspace::with_config(&buckconfig(false, ""), "0");
    let local = ini
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .map(|l| l.replace("grpc://127.0.0.1:50051", &server.address()))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(ws.root().join(".buckconfig.local"), local + "\n").unwrap();
    ws
}

#[test]
fn readme_remote_cache_instructions_upload_then_serve_a_clean_build() {
    let Some(server) = BuildGrid::start() else {
        return;
    };
    let ws = readme_workspace(&server);
    let (_, commands) = readme_remote_cache_instructions();
    assert!(
        commands.iter().filter(|c| c[0] == "build").count() >= 2
            && commands.iter().any(|c| c[0] == "clean"),
        "the guide's commands build, clean, and build again: {commands:?}"
    );
    let mut builds = Vec::new();
    for c in &commands {
        let args: Vec<&str> = c.iter().map(String::as_str).collect();
        let run = Run::from(ws.forge(&args).output().unwrap());
        assert_eq!(
            run.code,
            0,
            "`./forge {}` failed:\n{}",
            c.join(" "),
            run.stderr
        );
        if c[0] == "build" {
            builds.push(run);
        }
    }
    let (first, last) = (&builds[0], builds.last().unwrap());
    assert_eq!(first.counts(), counts(0, 0, 4), "{}", first.stderr);
    assert!(server_blobs(&server) > 0, "nothing was uploaded");
    assert_eq!(
        last.counts(),
        counts(4, 0, 0),
        "after `forge clean` every command must come from the remote cache:\n{}",
        last.stderr
    );
    ws.assert_outputs_correct();
}

#[test]
fn platform_without_remote_cache_neither_reads_nor_uploads() {
    let Some(server) = BuildGrid::start() else {
        return;
    };
    let ws = readme_workspace(&server);
    // `[buck2_re_client]` is configured but the platform says remote_cache_enabled = False.
    let run = ws.build(&[]).ok();
    assert_eq!(run.counts(), counts(0, 0, 4), "{}", run.stderr);
    assert_eq!(
        server_blobs(&server),
        0,
        "uploaded although the platform forbids it"
    );
    // Fill the cache through the platform that allows it, then build again without it.
    ws.wipe_buck_out();
    ws.build(&["-c", "ci.remote_cache=true"]).ok();
    assert!(server_blobs(&server) > 0);
    ws.wipe_buck_out();
    let run = ws.build(&[]).ok();
    assert_eq!(
        run.counts(),
        counts(0, 0, 4),
        "read the remote cache although the platform disables it:\n{}",
        run.stderr
    );
}

#[test]
fn upload_cap_and_per_action_opt_out_are_honoured() {
    let Some(server) = BuildGrid::start() else {
        return;
    };
    let ws = Workspace::for_server(&server, "0");
    // A 1 MiB cap keeps the 6 MB `big.bin` out; `gen_a` opts out of uploads itself, which
    // the project-wide default cannot override.
    std::fs::write(
        ws.root().join("platforms/BUCK"),
        "load(\":defs.bzl\", \"platforms\")\n\nplatforms(\n    name = \"platforms\",\n    max_cache_upload_mebibytes = 1,\n    remote_cache = True,\n    visibility = [\"PUBLIC\"],\n)\n",
    )
    .unwrap();
    let rules = std::fs::read_to_string(ws.root().join("rules/defs.bzl")).unwrap();
    let rules = rules.replacen(
        "category = \"gen_a\",\n        local_only = True,\n        allow_cache_upload = True,",
        "category = \"gen_a\",\n        local_only = True,\n        allow_cache_upload = False,",
        1,
    );
    std::fs::write(ws.root().join("rules/defs.bzl"), rules).unwrap();
    let flags = ["-c", "buck2.default_allow_cache_upload=true"];
    let first = ws.build(&flags).ok();
    assert_eq!(first.counts(), counts(0, 0, 4), "{}", first.stderr);
    ws.wipe_buck_out();
    let second = ws.build(&flags).ok();
    // gen_a and gen_big run again; gen_tree and gen_b (small, allowed) come from the server.
    assert_eq!(second.counts(), counts(2, 0, 2), "{}", second.stderr);
    ws.assert_outputs_correct();
}
