//! `action cargo build|test-build` (was rules/tools/cargo/cargo_action.sh): runs cargo inside
//! a build action (cwd = the project root, or forge's sandbox mirroring it).
//!
//!   action cargo build      --cargo C --profile P --target-dir D --package PKG --bin BIN --out FILE
//!   action cargo test-build --cargo C --profile P --target-dir D --package PKG --out-dir DIR
//!
//! The target dir is shared by every cargo action (and survives between builds) so cargo's
//! own incremental compilation applies; it is resolved to its real path so that paths cargo
//! bakes into test executables (CARGO_BIN_EXE_*) still exist after the action.

use crate::util::{fail, Exit, Result};
use serde::Deserialize;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[derive(clap::Args)]
pub struct Args {
    /// `build` or `test-build`
    mode: Option<String>,
    #[arg(long, default_value = "cargo")]
    cargo: String,
    #[arg(long, default_value = "release")]
    profile: String,
    #[arg(long)]
    target_dir: Option<PathBuf>,
    #[arg(long)]
    package: Option<String>,
    #[arg(long)]
    bin: Option<String>,
    #[arg(long)]
    out: Option<PathBuf>,
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// test-build: the opt-level of the crate under test (its dependencies keep the profile's)
    #[arg(long)]
    opt_level: Option<String>,
}

fn die<T>(message: impl AsRef<str>) -> Result<T> {
    fail(3, format!("cargo_action: {}", message.as_ref()))
}

/// The hint printed after cargo's own failure message, for the mistakes cargo reports
/// obscurely inside a sandbox: a workspace member whose sources were not declared, a crate
/// missing from the download cache (actions have no network), a stale Cargo.lock.
pub fn hint(log: &str) -> Option<[&'static str; 2]> {
    let line_has = |f: &dyn Fn(&str) -> bool| log.lines().any(f);
    let any = |needles: &[&str]| line_has(&|l: &str| needles.iter().any(|n| l.contains(n)));
    let unread_manifest = |l: &str| {
        l.find("failed to read ")
            .is_some_and(|i| l[i + "failed to read ".len()..].contains("Cargo.toml"))
    };
    if any(&["failed to load manifest for workspace member"]) || line_has(&unread_manifest) {
        Some([
            "cargo_action: a member of the Cargo workspace is not among the inputs.",
            "Add its `//<dir>:srcs` target to `members` of //:cargo_workspace in the root BUCK.",
        ])
    } else if any(&[
        "failed to download",
        "Could not resolve host",
        "failed to query replaced source",
        "download of config.json failed",
    ]) {
        Some([
            "cargo_action: a crate is not in cargo's download cache, and actions may have no network.",
            "Run `cargo fetch` at the project root (./forge does it whenever Cargo.lock changes).",
        ])
    } else if any(&["because --locked was passed"]) {
        Some([
            "cargo_action: Cargo.lock does not match the manifests; actions never rewrite it.",
            "Run `cargo update --workspace` (or any cargo build) at the project root, then rebuild.",
        ])
    } else {
        None
    }
}

/// Runs cargo with its stderr held back and printed after it ends, then the hint on failure;
/// returns cargo's stdout.
fn run_cargo(cargo: &str, args: &[&str], target_dir: &Path) -> Result<Vec<u8>> {
    let out = Command::new(cargo)
        .args(args)
        .env("CARGO_TARGET_DIR", target_dir)
        .stdin(Stdio::null())
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => return die(format!("cannot run `{cargo}`: {e}")),
    };
    let log = String::from_utf8_lossy(&out.stderr);
    eprint!("{log}");
    if !out.status.success() {
        if let Some([a, b]) = hint(&log) {
            eprintln!("{a}");
            eprintln!("{b}");
        }
        return Err(Exit(3));
    }
    Ok(out.stdout)
}

/// `mkdir -p` the target dir, which a passthrough path may be as a dangling symlink to a
/// directory that does not exist yet, and return its real path.
fn real_target_dir(dir: &Path) -> Result<PathBuf> {
    let dangling = dir.is_symlink() && !dir.exists();
    let made = if dangling {
        let link = fs::read_link(dir).unwrap_or_default();
        let target = dir.parent().unwrap_or(Path::new(".")).join(link);
        fs::create_dir_all(target)
    } else {
        fs::create_dir_all(dir)
    };
    made.and_then(|()| fs::canonicalize(dir)).or_else(|e| {
        die(format!(
            "cannot create the target dir {}: {e}",
            dir.display()
        ))
    })
}

/// `cargo build`'s arguments: the cargo unit of the wrapper's engine build
/// (tools/bootstrap/bootstrap.sh, which adds no --locked: that changes no fingerprint), so each
/// finds the other's artifacts fresh (checked by `the_wrapper_builds_the_same_cargo_unit`).
fn build_args<'a>(profile: &'a str, package: &'a str, bin: &'a str) -> Vec<&'a str> {
    let unit = ["--profile", profile, "--package", package, "--bin", bin];
    [&["build", "--locked"][..], &unit].concat()
}

/// The `--config` that compiles `package` alone at `level` in `profile` (cargo's profile
/// overrides): the workspace crates and libraries it depends on keep the profile's own
/// settings, so their units are the ones the binaries' builds made.
fn opt_level_override(profile: &str, package: &str, level: &str) -> String {
    format!("profile.{profile}.package.\"{package}\".opt-level={level}")
}

/// A line of `cargo --message-format=json`: the fields that find the test harnesses.
#[derive(Deserialize)]
struct Message {
    reason: String,
    #[serde(default)]
    profile: Option<Profile>,
    #[serde(default)]
    executable: Option<PathBuf>,
}

#[derive(Deserialize)]
struct Profile {
    test: bool,
    #[serde(default)]
    opt_level: String,
}

/// A test executable cargo built, and the opt-level cargo says it compiled it at.
#[derive(Debug, PartialEq)]
pub struct TestExecutable {
    pub path: PathBuf,
    pub opt_level: String,
}

/// The test executables among cargo's JSON messages: the artifacts whose *profile* says test.
pub fn test_executables(messages: &str) -> Vec<TestExecutable> {
    messages
        .lines()
        .filter_map(|l| serde_json::from_str::<Message>(l).ok())
        .filter(|m| m.reason == "compiler-artifact")
        .filter_map(|m| {
            let profile = m.profile.filter(|p| p.test)?;
            Some(TestExecutable {
                path: m.executable?,
                opt_level: profile.opt_level,
            })
        })
        .collect()
}

pub fn run(a: Args) -> Result {
    let mode = a.mode.unwrap_or_default();
    let Some(target_dir) = a.target_dir else {
        return die("--target-dir is required");
    };
    let Some(package) = a.package else {
        return die("--package is required");
    };
    let cwd = std::env::current_dir().or_else(|e| die(format!("no working directory: {e}")))?;
    if !Path::new("Cargo.toml").is_file() {
        return die(format!(
            "no Cargo.toml in {}: declare the workspace manifest as an input",
            cwd.display()
        ));
    }
    // Outputs are named relative to the action's cwd; cargo runs elsewhere (below).
    let out = a.out.map(|o| cwd.join(o));
    let out_dir = a.out_dir.map(|o| cwd.join(o));
    let target_dir = real_target_dir(&target_dir)?;

    // cargo bakes the crate's directory into test executables (env!("CARGO_MANIFEST_DIR")),
    // and the tests read their fixtures from there after the action is gone. forge's symlink
    // sandbox is deleted after the action, so cargo runs where the declared Cargo.toml really
    // lives (the project root itself under buck2 and under a sandbox mounted at the project
    // path).
    let manifest = fs::canonicalize("Cargo.toml")
        .or_else(|e| die(format!("cannot resolve Cargo.toml: {e}")))?;
    let workspace_root = manifest.parent().unwrap();
    std::env::set_current_dir(workspace_root)
        .or_else(|e| die(format!("cannot enter {}: {e}", workspace_root.display())))?;

    let profile_dir = match a.profile.as_str() {
        "dev" | "test" => "debug",
        "bench" => "release",
        p => p,
    };
    let profile = a.profile.as_str();
    match mode.as_str() {
        "build" => {
            let Some(bin) = a.bin else {
                return die("--bin is required");
            };
            let Some(out) = out else {
                return die("--out is required");
            };
            let stdout = run_cargo(&a.cargo, &build_args(profile, &package, &bin), &target_dir)?;
            print!("{}", String::from_utf8_lossy(&stdout));
            let built = target_dir.join(profile_dir).join(&bin);
            if !built.is_file() {
                return die(format!(
                    "cargo succeeded but `{}` does not exist",
                    built.display()
                ));
            }
            let tmp = crate::util::TmpFile::beside(&out);
            fs::copy(&built, tmp.path())
                .and_then(|_| tmp.commit())
                .or_else(|e| die(format!("cannot copy `{}`: {e}", built.display())))
        }
        "test-build" => {
            let Some(out_dir) = out_dir else {
                return die("--out-dir is required");
            };
            let mut args = vec![
                "test",
                "--locked",
                "--profile",
                profile,
                "--package",
                &package,
                "--no-run",
                "--message-format=json-render-diagnostics",
            ];
            let override_ = a
                .opt_level
                .as_deref()
                .map(|level| opt_level_override(profile, &package, level));
            if let Some(o) = &override_ {
                args.extend(["--config", o]);
            }
            let messages = run_cargo(&a.cargo, &args, &target_dir)?;
            fs::create_dir_all(&out_dir)
                .or_else(|e| die(format!("cannot create {}: {e}", out_dir.display())))?;
            let exes = test_executables(&String::from_utf8_lossy(&messages));
            for exe in &exes {
                let name = exe.path.file_name().unwrap_or_default();
                fs::copy(&exe.path, out_dir.join(name))
                    .or_else(|e| die(format!("cannot copy `{}`: {e}", exe.path.display())))?;
            }
            let mut levels: Vec<&str> = exes.iter().map(|e| e.opt_level.as_str()).collect();
            levels.sort_unstable();
            levels.dedup();
            eprintln!(
                "cargo_action: collected {} test executable(s) of `{package}` (cargo's opt-level: {})",
                exes.len(),
                levels.join(", ")
            );
            Ok(())
        }
        _ => die(format!(
            "unknown mode `{mode}` (expected build or test-build)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_name_the_mistake() {
        let member = "error: failed to load manifest for workspace member `/p/b`\n";
        assert!(hint(member).unwrap()[1].contains("//:cargo_workspace"));
        let unread = "  failed to read `/p/b/Cargo.toml`\n";
        assert!(hint(unread).unwrap()[0].contains("not among the inputs"));
        let offline = "error: failed to download from `https://x`\n";
        assert!(hint(offline).unwrap()[1].contains("cargo fetch"));
        let locked = "error: the lock file needs to be updated but --locked was passed to prevent this\nbecause --locked was passed\n";
        assert!(hint(locked).unwrap()[0].contains("Cargo.lock does not match"));
        assert!(hint("error[E0308]: mismatched types\n").is_none());
        // "failed to read" and "Cargo.toml" must be on the same line, in that order
        assert!(hint("Cargo.toml\nfailed to read x\n").is_none());
    }

    /// The engine build of `./forge` and `cargo_binary(name = "forge")` must be one cargo unit
    /// (profile, package, binary), or a fresh clone compiles every crate twice.
    #[test]
    fn the_wrapper_builds_the_same_cargo_unit() {
        let wrapper = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../tools/bootstrap/bootstrap.sh");
        let text =
            fs::read_to_string(&wrapper).expect("tools/bootstrap/bootstrap.sh (a data file)");
        let mut args = build_args("\"$FORGE_CARGO_PROFILE\"", "forge", "forge");
        args.retain(|a| *a != "--locked");
        let line = format!("cargo {}", args.join(" "));
        assert!(
            text.lines().any(|l| l.contains(&line)),
            "tools/bootstrap/bootstrap.sh does not run `{line}`"
        );
    }

    #[test]
    fn test_harnesses_are_the_artifacts_whose_profile_says_test() {
        let messages = [
            r#"{"reason":"compiler-artifact","profile":{"opt_level":"3","test":false},"executable":null}"#,
            r#"{"reason":"compiler-artifact","profile":{"opt_level":"3","test":false},"executable":"/t/release/tool"}"#,
            r#"{"reason":"compiler-artifact","profile":{"opt_level":"3","test":true},"executable":"/t/release/deps/tool-0123"}"#,
            r#"{"reason":"build-script-executed","package_id":"x"}"#,
            r#"{"reason":"build-finished","success":true}"#,
            "not json",
        ]
        .join("\n");
        assert_eq!(
            test_executables(&messages),
            vec![TestExecutable {
                path: PathBuf::from("/t/release/deps/tool-0123"),
                opt_level: "3".into()
            }]
        );
    }
}
