//! The subcommands as the rules run them, against real commands: what each prints and
//! writes on success and on failure.

use crate::common::{action, text, Run, Scratch};
use std::fs;

#[test]
fn stamp_writes_the_output_on_success_and_nothing_on_failure() {
    let s = Scratch::new("stamp");
    let out = s.path("lint.log");
    let ok = action()
        .arg("stamp")
        .arg(&out)
        .args(["--", "sh", "-c", "echo clean; echo warned >&2"])
        .run();
    assert!(ok.status.success(), "{:?}", text(&ok));
    assert_eq!(fs::read_to_string(&out).unwrap(), "clean\nwarned\n");

    let failed_out = s.path("failed.log");
    let bad = action()
        .arg("stamp")
        .arg(&failed_out)
        .args(["--", "sh", "-c", "echo '%Warning-WIDTH: x.sv:3'; exit 1"])
        .run();
    let (_, err) = text(&bad);
    assert_eq!(bad.status.code(), Some(3));
    assert!(err.contains("%Warning-WIDTH: x.sv:3"), "{err}");
    assert!(
        err.contains("error: `sh` failed (command above); fix the reported problem and rebuild"),
        "{err}"
    );
    // neither the output nor its temporary file
    assert_eq!(s.names("."), vec!["lint.log"]);
}

#[test]
fn probe_version_records_each_command_and_its_output() {
    let s = Scratch::new("probe");
    let out = s.path("version.txt");
    let tool = s.script("tool", "echo \"tool 1.2 $*\"");
    let ok = action()
        .arg("probe-version")
        .arg(&out)
        .arg("--")
        .arg(&tool)
        .args(["--version", "--"])
        .arg(&tool)
        .arg("-V")
        .run();
    assert!(ok.status.success(), "{:?}", text(&ok));
    let t = tool.display();
    assert_eq!(
        fs::read_to_string(&out).unwrap(),
        format!("$ {t} --version\ntool 1.2 --version\n$ {t} -V\ntool 1.2 -V\n")
    );

    let missing = action()
        .arg("probe-version")
        .arg(s.path("missing.txt"))
        .args(["--", "forge-no-such-tool", "--version"])
        .run();
    let (_, err) = text(&missing);
    assert_eq!(missing.status.code(), Some(3));
    assert!(
        err.contains("error: `forge-no-such-tool` is not on PATH"),
        "{err}"
    );
    assert!(
        err.contains("point the toolchain at it in toolchains/BUCK"),
        "{err}"
    );

    let failing = s.script("failing", "echo 'bad option'; exit 2");
    let bad = action()
        .arg("probe-version")
        .arg(s.path("failed.txt"))
        .arg("--")
        .arg(&failing)
        .arg("--version")
        .run();
    let (_, err) = text(&bad);
    assert_eq!(bad.status.code(), Some(3));
    assert!(err.contains("failed; its output:"), "{err}");
    assert!(err.contains("bad option"), "{err}");
    let mut names = s.names(".");
    names.retain(|n| n.ends_with(".txt") || n.contains(".tmp"));
    assert_eq!(names, vec!["version.txt"], "a failed probe left files");
}

#[test]
fn probe_version_records_identity_files_before_the_commands() {
    let s = Scratch::new("probe_file");
    let out = s.path("version.txt");
    let stamp = s.path("stamp");
    fs::write(&stamp, "abc\nwheel 1.3.0").unwrap();
    let tool = s.script("tool", "echo \"tool 1.2\"");
    let ok = action()
        .arg("probe-version")
        .arg(&out)
        .arg("--file")
        .arg(&stamp)
        .arg("--")
        .arg(&tool)
        .run();
    assert!(ok.status.success(), "{:?}", text(&ok));
    assert_eq!(
        fs::read_to_string(&out).unwrap(),
        format!(
            "# {}\nabc\nwheel 1.3.0\n$ {}\ntool 1.2\n",
            stamp.display(),
            tool.display()
        )
    );

    let missing = action()
        .arg("probe-version")
        .arg(s.path("missing.txt"))
        .arg("--file")
        .arg(s.path("no-stamp"))
        .arg("--")
        .arg(&tool)
        .run();
    let (_, err) = text(&missing);
    assert_eq!(missing.status.code(), Some(3));
    assert!(
        err.contains("no-stamp") && err.contains("run ./forge once"),
        "{err}"
    );
    assert!(
        !s.path("missing.txt").exists(),
        "a failed probe left its output"
    );
}

#[test]
fn copy_tree_copies_every_file_or_nothing() {
    let s = Scratch::new("copy_tree");
    let src = s.path("src");
    fs::create_dir_all(src.join("etc")).unwrap();
    fs::write(src.join("ap_int.h"), "int").unwrap();
    fs::write(src.join("etc/ap_private.h"), "private").unwrap();
    let out = s.path("out");
    let ok = action().arg("copy-tree").arg(&src).arg(&out).run();
    assert!(ok.status.success(), "{:?}", text(&ok));
    assert_eq!(fs::read_to_string(out.join("ap_int.h")).unwrap(), "int");
    assert_eq!(
        fs::read_to_string(out.join("etc/ap_private.h")).unwrap(),
        "private"
    );

    let missing = action()
        .arg("copy-tree")
        .arg(s.path("no-such-dir"))
        .arg(s.path("out2"))
        .run();
    let (_, err) = text(&missing);
    assert_eq!(missing.status.code(), Some(3));
    assert!(
        err.contains("no-such-dir") && err.contains("run ./forge once"),
        "{err}"
    );
    fs::create_dir_all(s.path("empty")).unwrap();
    let empty = action()
        .arg("copy-tree")
        .arg(s.path("empty"))
        .arg(s.path("out3"))
        .run();
    assert_eq!(empty.status.code(), Some(3));
    let mut names = s.names(".");
    names.sort();
    assert_eq!(
        names,
        vec!["empty", "out", "src"],
        "a failed copy left files"
    );
}

#[test]
fn run_sim_runs_each_set_with_its_words_and_prints_the_replay_line() {
    let s = Scratch::new("sim");
    // a testbench: prints its argument count and plusargs, fails on +fail
    let sim = s.script(
        "sim",
        "echo \"argc=$#\"; for a in \"$@\"; do echo \"arg=$a\"; done\n\
         echo \"RESULT ok $1\"\n\
         case \" $* \" in *' +fail '*) echo 'ERROR seed=2 at cycle 41'; exit 1 ;; esac",
    );
    let out = action()
        .arg("run-sim")
        .arg(&sim)
        .args([
            "--",
            "+seed=1",
            "+name=two words",
            "--",
            "+seed=2",
            "+fail",
            "--",
            "+seed=3",
        ])
        .run();
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    // a passing run prints its RESULT lines only, in the order of the sets
    assert!(stdout.starts_with("RESULT ok +seed=1\n"), "{stdout}");
    assert!(!stdout.contains("arg=+name=two words"), "{stdout}");
    // the failing run: its whole output, then the command that replays it
    assert!(
        stdout.contains("arg=+fail\nRESULT ok +seed=2\nERROR seed=2 at cycle 41\n"),
        "{stdout}"
    );
    let replay = format!("FAILED: {} +seed=2 +fail\n", sim.display());
    assert!(stdout.contains(&replay), "{stdout}");
    assert!(stdout.ends_with("RESULT ok +seed=3\n"), "{stdout}");

    // one plusarg with a space stays one argv word; no set means one run without plusargs
    let words = s.script(
        "words",
        "echo \"RESULT argc=$#\"; [ \"$1\" = '+name=two words' ] || [ $# -eq 0 ]",
    );
    let out = action()
        .arg("run-sim")
        .arg(&words)
        .args(["--", "+name=two words"])
        .run();
    assert!(out.status.success(), "{:?}", text(&out));
    assert_eq!(text(&out).0, "RESULT argc=1\n");
    let out = action().arg("run-sim").arg(&words).run();
    assert!(out.status.success(), "{:?}", text(&out));
    assert_eq!(text(&out).0, "RESULT argc=0\n");
}

#[test]
fn run_sim_quotes_a_replay_word_with_a_space() {
    let s = Scratch::new("sim-quote");
    let sim = s.script("sim", "exit 1");
    let out = action()
        .arg("run-sim")
        .arg(&sim)
        .args(["--", "+name=two words"])
        .run();
    assert_eq!(out.status.code(), Some(1));
    let expected = format!("FAILED: {} '+name=two words'\n", sim.display());
    assert_eq!(text(&out).0, expected);
}

#[test]
fn run_tests_runs_every_executable_from_the_crate_dir_and_names_the_failures() {
    let s = Scratch::new("tests");
    s.script(
        "tests/a_pass",
        "[ \"$CARGO_MANIFEST_DIR\" = \"$(pwd)\" ] && [ -f fixture ] && echo \"a $*\"",
    );
    s.script("tests/b_fail", "echo b; exit 101");
    s.script("tests/c_pass", "echo c");
    s.write("tests/not_executable", "");
    s.write("crate/fixture", "");
    let out = action()
        .current_dir(&s.0)
        .args(["run-tests", "tests", "crate", "--test-threads=1"])
        .run();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert_eq!(
        stdout,
        "== a_pass\na --test-threads=1\n== b_fail\nb\n== c_pass\nc\n"
    );
    assert!(
        stderr.contains("failing test executables: b_fail"),
        "{stderr}"
    );

    // Side by side: each of these waits (up to 20 s) for the other to have started.
    s.script(
        "pair/a",
        "touch ../a.started; i=0; until [ -e ../b.started ]; do i=$((i+1)); [ $i -lt 200 ] || exit 1; sleep 0.1; done; echo a",
    );
    s.script(
        "pair/b",
        "touch ../b.started; i=0; until [ -e ../a.started ]; do i=$((i+1)); [ $i -lt 200 ] || exit 1; sleep 0.1; done; echo b",
    );
    let out = action()
        .current_dir(&s.0)
        .args(["run-tests", "pair", "crate"])
        .run();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert_eq!(stdout, "== a\na\n== b\nb\n");

    fs::create_dir_all(s.path("empty")).unwrap();
    let out = action()
        .current_dir(&s.0)
        .args(["run-tests", "empty", "crate"])
        .run();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).1.contains("no test executables in "),
        "{:?}",
        text(&out)
    );
}
