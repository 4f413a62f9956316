//! `forge test` timeouts (`--timeout`, `[test] timeout`) and buck2's target-name rule, run
//! through the `forge` binary on scratch workspaces.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn workspace(buck: &str, extra_config: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    fs::write(
        root.join(".buckconfig"),
        format!(
            "[cells]\n  root = .\n  prelude = prelude\n\n[buildfile]\n  name = BUCK\n\n[forge]\n  sandbox = bwrap\n{extra_config}"
        ),
    )
    .unwrap();
    fs::create_dir_all(root.join("prelude")).unwrap();
    fs::write(root.join("prelude/prelude.bzl"), "").unwrap();
    fs::write(
        root.join("defs.bzl"),
        r#"def _script_test_impl(ctx):
    return [
        DefaultInfo(),
        ExternalRunnerTestInfo(type = "custom", command = ["/bin/sh", ctx.attrs.script]),
    ]

script_test = rule(impl = _script_test_impl, attrs = {"script": attrs.source()})

def _lib_impl(ctx):
    out = ctx.actions.declare_output("lib.txt")
    ctx.actions.write(out, "lib")
    return [DefaultInfo(default_output = out)]

lib = rule(impl = _lib_impl, attrs = {})
"#,
    )
    .unwrap();
    fs::write(root.join("BUCK"), buck).unwrap();
    ws
}

fn forge(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_forge"))
        .args(args)
        .current_dir(root)
        .env_remove("BUCK2_RE_HTTP_HEADERS")
        .output()
        .unwrap()
}

fn hanging_test_ws(tag: &str, extra_config: &str) -> tempfile::TempDir {
    let ws = workspace(
        "load(\"//:defs.bzl\", \"script_test\")\n\nscript_test(\n    name = \"hangs\",\n    script = \"hang.sh\",\n)\n",
        extra_config,
    );
    let marker = format!("hang-{tag}-{}", std::process::id());
    fs::write(
        ws.path().join("hang.sh"),
        format!(
            "echo before-the-hang\nexport FORGE_TEST_MARKER={marker}\nsleep 300 &\nsleep 300\n"
        ),
    )
    .unwrap();
    ws
}

fn assert_timed_out(tag: &str, out: &Output, started: Instant, limit: Duration) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        started.elapsed() < limit,
        "took {:?}: {stderr}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(32), "{stderr}");
    assert!(stderr.contains("✗ Timeout: root//:hangs ("), "{stderr}");
    assert!(stderr.contains("its process group was killed"), "{stderr}");
    assert!(
        stderr.contains("before-the-hang"),
        "the output tail: {stderr}"
    );
    assert!(stderr.contains("Timeout 1."), "{stderr}");
    let marker = format!("FORGE_TEST_MARKER=hang-{tag}-{}", std::process::id());
    let survivors = || -> Vec<String> {
        fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                fs::read(e.path().join("environ"))
                    .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == marker.as_bytes()))
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    };
    // SIGKILL is delivered asynchronously: on a loaded machine a killed `sleep 300` can still
    // be listed for a moment after forge returns. Dead within 5 s, not the 300 s it sleeps.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut left = survivors();
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left = survivors();
    }
    assert!(
        left.is_empty(),
        "processes {left:?} of the timed-out test survived"
    );
}

#[test]
fn timeout_flag_stops_a_hanging_test() {
    let ws = hanging_test_ws("flag", "");
    let t = Instant::now();
    let out = forge(ws.path(), &["test", "//:hangs", "--timeout", "2s"]);
    assert_timed_out("flag", &out, t, Duration::from_secs(60));
}

#[test]
fn test_timeout_config_stops_a_hanging_test() {
    let ws = hanging_test_ws("config", "\n[test]\n  timeout = 2\n");
    let t = Instant::now();
    let out = forge(ws.path(), &["test", "//:hangs"]);
    assert_timed_out("config", &out, t, Duration::from_secs(60));
}

#[test]
fn bad_timeout_value_is_an_error_naming_it() {
    let ws = hanging_test_ws("bad", "");
    let out = forge(ws.path(), &["test", "//:hangs", "--timeout", "soon"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("--timeout") && stderr.contains("soon"),
        "{stderr}"
    );
}

/// buck2's error for each kind of odd name (checked against upstream buck2 0676d75903 on
/// the same BUCK file: it prints this sentence and rejects the package).
#[test]
fn target_names_follow_buck2s_character_rule() {
    for bad in ["a b", "a\\nb", "caf\u{e9}", "x*"] {
        let ws = workspace(
            &format!(
                "load(\"//:defs.bzl\", \"lib\")\n\nlib(name = \"ok\")\n\nlib(name = \"{bad}\")\n"
            ),
            "",
        );
        let out = forge(ws.path(), &["targets", "//..."]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // A newline in the name breaks the report's line (indented like every other line).
        let shown = bad.split("\\n").next().unwrap();
        let end = if bad.contains("\\n") { "" } else { "`." };
        assert_eq!(out.status.code(), Some(3), "{bad:?}: {stderr}");
        assert!(
            stderr.contains(&format!("Invalid target name `{shown}{end}")),
            "{bad:?}: {stderr}"
        );
        assert!(
            stderr.contains("Target names are non-empty strings and can only contain alpha numeric characters, and symbols `,`, `.`, `=`, `-`, `/`, `~`, `@`, `!`, `+`, `$`, and `_`. No other characters are allowed."),
            "{bad:?}: {stderr}"
        );
        assert!(
            stderr.contains("BUCK:5"),
            "names the file and line: {stderr}"
        );
    }
    let ws = workspace(
        "load(\"//:defs.bzl\", \"lib\")\n\nlib(name = \"ok,.=-~@!+$_Z9\")\n",
        "",
    );
    let out = forge(ws.path(), &["targets", "//..."]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "root//:ok,.=-~@!+$_Z9\n"
    );
}
