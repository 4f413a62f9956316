//! A description written by a hostile or careless author: every field that reaches a script,
//! a Slurm directive, a v++ config or a file name is refused when it holds what its reader
//! would take for something else, through the `deploy-tool` binary as the build runs it. Each
//! refusal names the file and the line of the bad field (the line is found here from the
//! text, not from the tool), says what to change, and leaves the output directory empty.
//!
//! The references: sbatch(1) of Slurm 22.05 (`--time` formats, `--constraint` operators),
//! the PC2 wiki "FPGA-to-FPGA Networking" (each channel endpoint at most once), the
//! platform TOML (QSFP ports, the fastest kernel clock).

use crate::common;

use std::path::Path;
use std::process::Output;

const PLATFORM: &str = "xilinx_u280_gen3x16_xdma_1_202211_1";

/// A valid two-card benchmark pair with a [slurm] table; `edit` replaces one line.
fn description(name: &str, slurm: &str, devices: &str, cabling: &str) -> String {
    format!(
        "name = \"{name}\"\nplatform = \"{PLATFORM}\"\napp = \"aurora_bench\"\nclock_mhz = 250\n\n\
         {devices}\n{cabling}\n[slurm]\n{slurm}"
    )
}

const SLURM: &str = "time = \"01:00:00\"\naccount = \"hpc-prf-aurora\"\n\
                     constraint = \"xilinx_u280_xrt2.x\"\nmodules = [\"fpga\", \"xilinx/xrt/2.16\"]\n";
const DEVICES: &str = "[[device]]\nname = \"fpga0\"\nnode = 0\ncard = 0\nrole = \"bench\"\n\n\
                       [[device]]\nname = \"fpga1\"\nnode = 0\ncard = 1\nrole = \"bench\"\n";
const PAIR: &str =
    "[[link]]\na = \"fpga0:0\"\nb = \"fpga1:0\"\n\n[[link]]\na = \"fpga0:1\"\nb = \"fpga1:1\"\n";

struct Bad {
    what: &'static str,
    text: String,
    /// Text on the line the error must name (its first occurrence).
    marker: &'static str,
    /// Words the message must hold (what is wrong, what to do).
    words: &'static [&'static str],
}

fn slurm_case(
    what: &'static str,
    line: &str,
    marker: &'static str,
    words: &'static [&'static str],
) -> Bad {
    let key = line.split(" =").next().unwrap();
    let slurm: String = SLURM
        .lines()
        .filter(|l| !l.starts_with(&format!("{key} =")))
        .map(|l| format!("{l}\n"))
        .collect();
    Bad {
        what,
        text: description("pair", &format!("{slurm}{line}\n"), DEVICES, PAIR),
        marker,
        words,
    }
}

fn cases() -> Vec<Bad> {
    let with_devices = |what, devices: &str, marker, words| Bad {
        what,
        text: description("pair", SLURM, devices, PAIR),
        marker,
        words,
    };
    let with_cabling = |what, cabling: &str, marker, words| Bad {
        what,
        text: description("pair", SLURM, DEVICES, cabling),
        marker,
        words,
    };
    let with_name = |what, name: &str, words| Bad {
        what,
        text: description(name, SLURM, DEVICES, PAIR),
        marker: "name = ",
        words,
    };
    vec![
        // A line break in a Slurm field: a new #SBATCH directive, or a shell line after `ml`.
        slurm_case(
            "account with an escaped newline and a directive",
            "account = \"x\\n#SBATCH --wrap=rm\"",
            "account =",
            &["control character U+000A", "remove it"],
        ),
        slurm_case(
            "constraint with a multi-line string",
            "constraint = \"\"\"xilinx_u280_xrt2.x\n#SBATCH --wrap=id\"\"\"",
            "constraint =",
            &["control character U+000A"],
        ),
        slurm_case(
            "module with a carriage return",
            "modules = [\"fpga\", \"xrt\\rtouch /tmp/owned\"]",
            "modules =",
            &["control character U+000D"],
        ),
        slurm_case(
            "time with a bell",
            "time = \"01:00:00\\u0007\"",
            "time =",
            &["control character U+0007"],
        ),
        // Times sbatch(1) does not list.
        slurm_case("time in hours", "time = \"2h\"", "time =", &["Slurm's time formats", "days-hours"]),
        slurm_case("time with 75 minutes", "time = \"1:75:00\"", "time =", &["minutes 75", "below 60"]),
        slurm_case("time with 24 hours after days", "time = \"1-24\"", "time =", &["hours 24", "below 24"]),
        slurm_case("time with a space", "time = \"1 -12\"", "time =", &["Slurm's time formats"]),
        slurm_case("time with four fields", "time = \"1:2:3:4\"", "time =", &["Slurm's time formats"]),
        // Characters a directive or a shell would read differently.
        slurm_case("account with a space", "account = \"x --wrap=id\"", "account =", &["' '", "a Slurm account"]),
        slurm_case("account with a command", "account = \"$(id)\"", "account =", &["'$'"]),
        slurm_case("account as an option", "account = \"-wrap\"", "account =", &["starts with '-'"]),
        slurm_case("constraint with a quote", "constraint = \"a'b\"", "constraint =", &["'\\''", "feature names"]),
        slurm_case("constraint with a comment", "constraint = \"a#b\"", "constraint =", &["'#'"]),
        slurm_case("constraint with a semicolon", "constraint = \"a;id\"", "constraint =", &["';'"]),
        slurm_case("module with a semicolon", "modules = [\"fpga;id\"]", "modules =", &["';'", "module name"]),
        slurm_case("module with a backtick", "modules = [\"`id`\"]", "modules =", &["'`'"]),
        slurm_case("module that unloads", "modules = [\"-fpga\"]", "modules =", &["starts with '-'"]),
        slurm_case("empty module", "modules = [\"\"]", "modules =", &["is empty"]),
        // Names: a file name and a target name, one deployment's own.
        with_name("name with a slash", "../pair", &["'/'", "rename"]),
        with_name("name with a space", "my pair", &["' '"]),
        with_name("name with dot-dot", "pair..x", &["`..`"]),
        with_name("hidden name", ".pair", &["starts with `.`"]),
        with_name("name with a dollar", "pair$x", &["'$'"]),
        with_devices(
            "device name with a dash",
            &DEVICES.replace("\"fpga1\"", "\"fpga-1\""),
            "\"fpga-1\"",
            &["C identifier", "rename"],
        ),
        with_devices(
            "device name with a command",
            &DEVICES.replace("\"fpga1\"", "\"$(id)\""),
            "\"$(id)\"",
            &["C identifier"],
        ),
        // Clocks the platform does not run.
        Bad {
            what: "kernel clock above the platform's",
            text: description("pair", SLURM, DEVICES, PAIR).replace("clock_mhz = 250", "clock_mhz = 650"),
            marker: "clock_mhz",
            words: &["650", "above 500 MHz, the fastest kernel clock", "at most 500"],
        },
        with_devices(
            "device clock above the platform's",
            &DEVICES.replace("card = 1\n", "card = 1\nclock_mhz = 501\n"),
            "clock_mhz = 501",
            &["above 500 MHz, the fastest kernel clock"],
        ),
        Bad {
            what: "kernel clock not a number",
            text: description("pair", SLURM, DEVICES, PAIR).replace("clock_mhz = 250", "clock_mhz = nan"),
            marker: "clock_mhz",
            words: &["positive number of MHz"],
        },
        Bad {
            what: "infinite kernel clock",
            text: description("pair", SLURM, DEVICES, PAIR).replace("clock_mhz = 250", "clock_mhz = -inf"),
            marker: "clock_mhz",
            words: &["positive number of MHz"],
        },
        // Cables that cannot exist.
        with_cabling(
            "cable from a port to itself",
            "[[link]]\na = \"fpga0:1\"\nb = \"fpga0:1\"\n",
            "[[link]]",
            &["from a port to itself", "fpga0:0 - fpga0:1"],
        ),
        with_cabling(
            "port used twice",
            "[[link]]\na = \"fpga0:0\"\nb = \"fpga1:0\"\n\n[[link]] # the second cable\na = \"fpga1:1\"\nb = \"fpga0:0\"\n",
            "# the second cable",
            &["port fpga0:0 is used twice", "one cable"],
        ),
        with_cabling(
            "cable of infinite length",
            "[[link]]\na = \"fpga0:0\"\nb = \"fpga1:0\"\ncable_m = inf\n",
            "cable_m",
            &["finite length"],
        ),
        with_cabling(
            "cable of no length",
            "[topology]\nkind = \"pair\"\ncable_m = nan\n",
            "cable_m",
            &["finite length"],
        ),
        // A node no device uses, which the job would still allocate.
        with_devices(
            "gap in the node numbers",
            &DEVICES.replace("node = 0\ncard = 1", "node = 2\ncard = 1"),
            "\"fpga1\"",
            &["no device is on node 1", "without gaps"],
        ),
        with_devices(
            "node number at the end of the range",
            &DEVICES.replace("node = 0\ncard = 1", "node = 4294967295\ncard = 1"),
            "\"fpga1\"",
            &["no device is on node 1", "4294967296 nodes"],
        ),
        // A key with a control character.
        with_devices(
            "memory key with a newline",
            &DEVICES.replace(
                "card = 1\n",
                "card = 1\nmemory = { \"send_0.m_axi_gmem\\n[connectivity]\" = \"HBM[0]\" }\n",
            ),
            "memory =",
            &["control character U+000A"],
        ),
    ]
}

fn line_of(text: &str, marker: &str) -> usize {
    text.lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no {marker:?} in:\n{text}"))
        + 1
}

fn run(args: &[&str]) -> Output {
    common::tool(args)
}

/// `check` (the build's first action) and `scripts` (which writes the job script) on `dep`,
/// with every output in `out`.
fn first_action_and_scripts(dep: &Path, out: &Path) -> [Output; 2] {
    let plat = common::platform();
    let (d, p) = (dep.to_str().unwrap(), plat.to_str().unwrap());
    let o = |n: &str| out.join(n).display().to_string();
    let noctua2 = common::cluster("noctua2").display().to_string();
    [
        run(&[
            "check",
            "--deployment",
            d,
            "--platform",
            p,
            "--devices",
            "fpga0,fpga1",
            "--name",
            "pair",
            "--stamp",
            &o("checked.txt"),
        ]),
        run(&[
            "scripts",
            "--deployment",
            d,
            "--platform",
            p,
            "--cluster",
            &noctua2,
            "--xclbin",
            "fpga0=a.xclbin",
            "fpga1=b.xclbin",
            "--host",
            "host",
            "--job-out",
            &o("job.sh"),
            "--run-out",
            &o("run.sh"),
            "--topology-out",
            &o("topology.json"),
        ]),
    ]
}

#[test]
fn every_class_of_bad_field_is_refused_at_its_line_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (i, case) in cases().into_iter().enumerate() {
        let dep = common::write(dir.path(), &format!("case{i}.toml"), &case.text);
        let out = dir.path().join(format!("out{i}"));
        std::fs::create_dir(&out).unwrap();
        let at = format!(
            "error: {}:{}: ",
            dep.display(),
            line_of(&case.text, case.marker)
        );
        for r in first_action_and_scripts(&dep, &out) {
            let stderr = String::from_utf8_lossy(&r.stderr).into_owned();
            let ok = r.status.code() == Some(1)
                && stderr.starts_with(&at)
                && case.words.iter().all(|w| stderr.contains(w));
            if !ok {
                failures.push(format!(
                    "{}: exit {:?}, expected `{at}` and {:?}, got: {stderr}",
                    case.what,
                    r.status.code(),
                    case.words
                ));
            }
        }
        let written: Vec<_> = std::fs::read_dir(&out)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        if !written.is_empty() {
            failures.push(format!("{}: wrote {written:?}", case.what));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_description_whose_name_is_not_its_targets_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = description("other_pair", SLURM, DEVICES, PAIR);
    let dep = common::write(dir.path(), "pair.toml", &text);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let [check, _] = first_action_and_scripts(&dep, &out);
    let stderr = String::from_utf8_lossy(&check.stderr);
    assert_eq!(check.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: {}:1: ", dep.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains("\"other_pair\"") && stderr.contains("set name = \"pair\""),
        "{stderr}"
    );
    // (`scripts` is not told the target; it runs only after `check` passed.)
    assert!(!out.join("checked.txt").exists(), "the stamp was written");
}

/// What is allowed stays allowed, and comes out of the job script exactly as written: every
/// time format sbatch(1) lists, constraint operators, account and module names with `-`, `.`,
/// `/` and `+`; the script passes `bash -n` and shellcheck and has no directive but its own.
#[test]
fn valid_unusual_fields_are_written_as_given_and_the_script_passes_shellcheck() {
    let dir = tempfile::tempdir().unwrap();
    for (i, time) in [
        "0",
        "90",
        "30:15",
        "100:00:00",
        "2-12",
        "2-12:30",
        "2-12:30:15",
    ]
    .iter()
    .enumerate()
    {
        let slurm = format!(
            "time = \"{time}\"\naccount = \"hpc-prf-aur.x_1\"\n\
             constraint = \"[xilinx_u280_xrt2.x&(rack1|rack2)*2]\"\n\
             modules = [\"fpga\", \"xilinx/xrt/2.16\", \"gcc+mpi/13.2-x\"]\n"
        );
        let dep = common::write(
            dir.path(),
            &format!("ok{i}.toml"),
            &description("pair", &slurm, DEVICES, PAIR),
        );
        let out = dir.path().join(format!("out{i}"));
        std::fs::create_dir(&out).unwrap();
        for r in first_action_and_scripts(&dep, &out) {
            assert!(
                r.status.success(),
                "{time}: {}",
                String::from_utf8_lossy(&r.stderr)
            );
        }
        let job = std::fs::read_to_string(out.join("job.sh")).unwrap();
        let directives: Vec<&str> = job.lines().filter(|l| l.starts_with("#SBATCH")).collect();
        assert_eq!(
            directives,
            [
                "#SBATCH -J pair",
                "#SBATCH -N 1",
                "#SBATCH --ntasks-per-node=2",
                "#SBATCH -n 2",
                &format!("#SBATCH -t {time}"),
                "#SBATCH -A hpc-prf-aur.x_1",
                "#SBATCH -p fpga",
                "#SBATCH --constraint=[xilinx_u280_xrt2.x&(rack1|rack2)*2]",
            ],
            "{job}"
        );
        for m in ["ml fpga", "ml xilinx/xrt/2.16", "ml gcc+mpi/13.2-x"] {
            assert!(job.lines().any(|l| l == m), "{m}: {job}");
        }
        for script in ["job.sh", "run.sh"] {
            let p = out.join(script);
            let n = std::process::Command::new("bash")
                .arg("-n")
                .arg(&p)
                .output()
                .unwrap();
            assert!(n.status.success(), "bash -n {script}");
            let sc = std::process::Command::new("shellcheck")
                .arg(&p)
                .output()
                .expect("shellcheck is installed (tools/bootstrap/apt.txt)");
            assert!(
                sc.status.success(),
                "shellcheck {script}:\n{}",
                String::from_utf8_lossy(&sc.stdout)
            );
        }
    }
}
