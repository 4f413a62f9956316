//! Every output file of a command gets one mode, 0444 or 0555 by its executable bit, whichever
//! way it arrived: run here, restored from the local cache, or downloaded from a real BuildGrid
//! (the remote cache; a remote worker's result takes the same download path). The commands
//! below leave their files with other modes on purpose (an umask of 077, `chmod 700`), and
//! the expected executable bit of each file is known by construction, not taken from forge.

use forge_testkit as bgd;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use bgd::BuildGrid;

const ART: &str = "buck-out/forge/art/root/1ef78538d8598cb2/pkg/__m__";

const RULES: &str = r#"def _modes_impl(ctx: AnalysisContext) -> list[Provider]:
    files = ctx.actions.declare_output("files", dir = True)
    ctx.actions.run(
        cmd_args(
            "/bin/sh",
            "-c",
            "mkdir -p \"$0\" && umask 077 && echo a > \"$0/private.txt\" && echo 'echo b' > \"$0/private.sh\" && chmod 700 \"$0/private.sh\" && umask 022 && echo c > \"$0/plain.txt\" && echo 'echo d' > \"$0/tool.sh\" && chmod 755 \"$0/tool.sh\"",
            files.as_output(),
        ),
        category = "modes",
        local_only = True,
        allow_cache_upload = True,
    )
    single = ctx.actions.declare_output("single.txt")
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "umask 077 && echo e > \"$0\"", single.as_output()),
        category = "single",
        local_only = True,
        allow_cache_upload = True,
    )
    return [DefaultInfo(default_output = single, other_outputs = [files])]

modes = rule(impl = _modes_impl, attrs = {})
"#;

/// Each output file and whether the command made it executable.
const EXPECTED: [(&str, bool); 5] = [
    ("files/plain.txt", false),
    ("files/private.sh", true),
    ("files/private.txt", false),
    ("files/tool.sh", true),
    ("single.txt", false),
];

/// The mode of a command's output: buck2's 0644 / 0755 (what it gives the files it writes
/// itself, by the executable flag alone) without the write bits, which forge clears because
/// an output shares its inode with its cache blob (docs/architecture.md).
fn reference_mode(executable: bool) -> u32 {
    if executable {
        0o555
    } else {
        0o444
    }
}

fn project(server: &BuildGrid) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("forge-output-modes-")
        .tempdir()
        .unwrap();
    let root = dir.path();
    let repo = bgd::workspace_root();
    for d in ["rules", "pkg", "platforms"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for f in ["BUCK", "defs.bzl"] {
        std::fs::copy(
            repo.join("platforms").join(f),
            root.join("platforms").join(f),
        )
        .unwrap();
    }
    let mut section = String::new();
    for (k, v) in server.section() {
        section.push_str(&format!("  {k} = {v}\n"));
    }
    std::fs::write(root.join(".buckroot"), "").unwrap();
    std::fs::write(
        root.join(".buckconfig"),
        format!(
            "[cells]\n  root = .\n\n[buildfile]\n  name = BUCK\n\n[build]\n  execution_platforms = root//platforms:platforms\n\n[ci]\n  remote_cache = true\n\n[buck2_re_client]\n{section}"
        ),
    )
    .unwrap();
    std::fs::write(root.join("rules/defs.bzl"), RULES).unwrap();
    std::fs::write(
        root.join("pkg/BUCK"),
        "load(\"//rules:defs.bzl\", \"modes\")\n\nmodes(name = \"m\")\n",
    )
    .unwrap();
    dir
}

/// Builds `//pkg:m` and returns buck2's `Commands:` summary line.
fn build(root: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_forge"))
        .args(["build", "//pkg:m"])
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "forge build failed:\n{stderr}");
    stderr
        .lines()
        .find(|l| l.starts_with("Commands: "))
        .unwrap_or_else(|| panic!("no `Commands:` line in:\n{stderr}"))
        .to_string()
}

fn modes(root: &Path) -> BTreeMap<&'static str, u32> {
    EXPECTED
        .iter()
        .map(|(rel, _)| {
            let p = root.join(ART).join(rel);
            let meta = std::fs::metadata(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (*rel, meta.permissions().mode() & 0o7777)
        })
        .collect()
}

fn assert_reference_modes(how: &str, found: &BTreeMap<&'static str, u32>) {
    for (rel, executable) in EXPECTED {
        assert_eq!(
            format!("{:o}", found[rel]),
            format!("{:o}", reference_mode(executable)),
            "{rel} ({how})"
        );
    }
}

#[test]
fn outputs_have_one_mode_from_a_local_run_the_local_cache_and_the_remote_cache() {
    let Some(server) = BuildGrid::start() else {
        return;
    };
    let ws = project(&server);
    let root = ws.path();

    let ran = build(root);
    assert_eq!(ran, "Commands: 2 (cached: 0, remote: 0, local: 2)");
    let local = modes(root);
    assert_reference_modes("run here", &local);

    // The outputs gone, the local cache kept: both commands are restored from it.
    std::fs::remove_dir_all(root.join("buck-out/forge/art")).unwrap();
    let restored = build(root);
    assert_eq!(restored, "Commands: 2 (cached: 2, remote: 0, local: 0)");
    assert_eq!(modes(root), local, "from the local cache");

    // A clean machine: both commands come from BuildGrid.
    std::fs::remove_dir_all(root.join("buck-out")).unwrap();
    let downloaded = build(root);
    assert_eq!(downloaded, "Commands: 2 (cached: 2, remote: 0, local: 0)");
    let log = Command::new(env!("CARGO_BIN_EXE_forge"))
        .args(["log", "what-ran"])
        .current_dir(root)
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&log.stdout);
    let remote = log.lines().filter(|l| l.starts_with("remote ")).count();
    assert_eq!(remote, 2, "both commands from BuildGrid:\n{log}");
    assert_eq!(modes(root), local, "from the remote cache");
}
