//! The project's own `aurora_flow_kernel` rule rejects illegal parameter combinations at
//! analysis, naming the target and the parameter, before any action runs. Each case builds a
//! scratch copy of the project's Starlark and the kernel's sources with one bad target added,
//! and builds it with the engine `FORGE` names (`//hw/aurora_flow:desc_check` sets it to
//! `//engine/forge:forge`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../..")
        .canonicalize()
        .expect("the project root above hw/aurora_flow/desc")
}

/// The project's helpers (`action`, rules/tools/action): `ACTION`, the install directory of
/// `//rules/tools/action:action` the BUCK target builds. The scratch copy has no Cargo
/// workspace to bootstrap them from, so its `//rules/tools/action:action` is this binary.
fn action() -> PathBuf {
    let dir = std::env::var_os("ACTION").expect(
        "ACTION names no build of //rules/tools/action:action: run `./forge test \
         //hw/aurora_flow:desc_check`, or set ACTION to its install directory",
    );
    let dir = PathBuf::from(dir);
    let dir = if dir.is_absolute() {
        dir
    } else {
        project_root().join(dir)
    };
    dir.join("bin/action")
}

/// The forge binary under test: `FORGE`, set by the BUCK target from the engine it builds.
fn forge() -> PathBuf {
    let forge = std::env::var_os("FORGE").expect(
        "FORGE names no forge binary: run `./forge test //hw/aurora_flow:desc_check`, or set \
         FORGE=target/release/forge for `cargo test -p aurora_flow_desc`",
    );
    let forge = PathBuf::from(forge);
    // the BUCK target passes a project-relative path; the tests run from the crate's directory
    if forge.is_absolute() {
        forge
    } else {
        project_root().join(forge)
    }
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let dest = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            fs::create_dir_all(&dest).unwrap();
        } else if entry.file_type().is_file() {
            fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// A copy of the workspace skeleton, the rules, the toolchains and `hw/aurora_flow/`, with
/// what toolchains/BUCK (the composition root) loads or hands the FPGA rules: the FINN step
/// catalogue (`finn/flow`), the HLS C-simulation headers (`hw/hls`) and the pin of AMD's
/// (`tools/bootstrap/hls-types`).
fn scratch_project() -> tempfile::TempDir {
    let root = project_root();
    let tmp = tempfile::tempdir().unwrap();
    for file in [".buckconfig", ".buckroot"] {
        fs::copy(root.join(file), tmp.path().join(file)).unwrap();
    }
    for dir in [
        "prelude",
        "platforms",
        "toolchains",
        "rules",
        "hw/aurora_flow",
        "hw/hls",
        "finn/flow",
        "tools/bootstrap/hls-types",
    ] {
        copy_tree(&root.join(dir), &tmp.path().join(dir));
    }
    // toolchains//:fpga reads AMD's HLS headers where `./forge` unpacked them (.venv/hls-types,
    // a `[forge] sandbox_passthrough` path): the scratch project sees the project's.
    std::os::unix::fs::symlink(root.join(".venv"), tmp.path().join(".venv")).unwrap();
    // the helpers as a prebuilt binary instead of their bootstrap build
    let helpers = tmp.path().join("rules/tools/action");
    fs::copy(action(), helpers.join("action")).unwrap();
    fs::write(helpers.join("prebuilt.bzl"), PREBUILT_BZL).unwrap();
    fs::write(helpers.join("BUCK"), PREBUILT_BUCK).unwrap();
    // and the packaging's renderer, the command line of this crate
    let desc = tmp.path().join("hw/aurora_flow/desc/cli");
    fs::copy(desc_tool(), desc.join("aurora-flow-desc")).unwrap();
    fs::write(desc.join("prebuilt.bzl"), PREBUILT_BZL).unwrap();
    fs::write(
        desc.join("BUCK"),
        PREBUILT_BUCK.replace("\"action\"", "\"aurora-flow-desc\""),
    )
    .unwrap();
    // the documents with generated tables (aurora_flow_desc::generated::DOCUMENTS)
    for doc in aurora_flow_desc::generated::DOCUMENTS {
        let to = tmp.path().join(doc);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(root.join(doc), to).unwrap();
    }
    tmp
}

const PREBUILT_BZL: &str = "def _impl(ctx):\n    \
    return [DefaultInfo(default_output = ctx.attrs.binary), RunInfo(args = cmd_args(ctx.attrs.binary))]\n\n\
    prebuilt_binary = rule(impl = _impl, attrs = {\"binary\": attrs.source()})\n";

const PREBUILT_BUCK: &str = "load(\":prebuilt.bzl\", \"prebuilt_binary\")\n\n\
    prebuilt_binary(name = \"action\", binary = \"action\", visibility = [\"PUBLIC\"])\n";

/// The packaging's renderer: `AURORA_FLOW_DESC`, the `aurora-flow-desc` binary the BUCK target
/// builds (`//hw/aurora_flow/desc/cli:aurora-flow-desc`, a crate of its own).
fn desc_tool() -> PathBuf {
    let tool = std::env::var_os("AURORA_FLOW_DESC").expect(
        "AURORA_FLOW_DESC names no aurora-flow-desc binary: run `./forge test \
         //hw/aurora_flow:desc_check`, or set AURORA_FLOW_DESC=target/release/aurora-flow-desc \
         for `cargo test -p aurora_flow_desc`",
    );
    let tool = PathBuf::from(tool);
    if tool.is_absolute() {
        tool
    } else {
        project_root().join(tool)
    }
}

/// `forge VERB TARGET` in the scratch project.
fn forge_in(ws: &tempfile::TempDir, verb: &str, target: &str) -> std::process::Output {
    Command::new(forge())
        .args([verb, target, "--console", "simple"])
        .current_dir(ws.path())
        .output()
        .unwrap()
}

/// Adds `aurora_flow_kernel(name = "bad", <params>)` to the kernel's package and builds it.
fn build_bad_kernel(params: &str) -> (i32, String) {
    let ws = scratch_project();
    let buck = ws.path().join("hw/aurora_flow/BUCK");
    let mut text = fs::read_to_string(&buck).unwrap();
    text.push_str(&format!(
        "\naurora_flow_kernel(\n    name = \"bad\",\n    build_xo = \"tcl/build_xo.sh\",\n    \
         instance = 0,\n    packaging = PACKAGING,\n    description = \"kernel.toml\",\n    \
         rtl = RTL,\n    sim_srcs = SIM_MODEL,\n    {params}\n)\n"
    ));
    fs::write(&buck, text).unwrap();
    let out = forge_in(&ws, "build", "//hw/aurora_flow:bad");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), stderr)
}

fn assert_rejected(params: &str, parameter: &str, reason: &str) {
    let (code, stderr) = build_bad_kernel(params);
    assert_eq!(
        code, 3,
        "`{params}` must fail the build (exit 3); stderr:\n{stderr}"
    );
    let line = stderr
        .lines()
        .find(|l| l.contains("root//hw/aurora_flow:bad") && l.contains(parameter))
        .unwrap_or_else(|| panic!("no line names the target and `{parameter}`; stderr:\n{stderr}"));
    assert!(line.contains(reason), "expected `{reason}` in: {line}");
    assert!(
        !stderr.contains("Commands:"),
        "no action may run before the parameters are valid; stderr:\n{stderr}"
    );
}

#[test]
fn fifo_size_not_a_power_of_two() {
    assert_rejected(
        "rx_fifo_size = 60000,",
        "rx_fifo_size",
        "60000: must be a power of two (bytes)",
    );
}

#[test]
fn prog_empty_not_below_prog_full() {
    assert_rejected(
        "rx_fifo_prog_full = 100,\n    rx_fifo_prog_empty = 100,",
        "rx_fifo_prog_empty",
        "must be below rx_fifo_prog_full",
    );
}

#[test]
fn width_neither_32_nor_64() {
    assert_rejected(
        "fifo_width = 48,",
        "fifo_width",
        "48: must be one of 32, 64 (bytes)",
    );
}

/// kernel.toml [flow_control]: 32 B words, 16 KiB = 512 words, cable 30 m needs
/// 128 + 4 x 30 = 248 beats of headroom, so prog_full 264 is the limit and 265 one below it.
#[test]
fn headroom_below_the_in_flight_budget() {
    assert_rejected(
        "fifo_width = 32,\n    rx_fifo_size = 16384,\n    cable_m = 30,\n    rx_fifo_prog_full = 265,",
        "rx_fifo_prog_full",
        "headroom 247 words = 247 link beats (depth 512 - prog_full 265) is below the 248 beats in flight with cable_m = 30",
    );
}

/// The case: 64 B words and an 8 KiB RX FIFO leave 128 beats for the 248 in flight.
#[test]
fn small_rx_fifo_rejected_at_default_cable() {
    assert_rejected(
        "rx_fifo_size = 8192,",
        "rx_fifo_prog_full",
        "is below the 248 beats in flight with cable_m = 30",
    );
}

#[test]
fn headroom_at_the_in_flight_limit_passes_analysis() {
    let ws = scratch_project();
    let buck = ws.path().join("hw/aurora_flow/BUCK");
    let mut text = fs::read_to_string(&buck).unwrap();
    text.push_str(
        "\naurora_flow_kernel(\n    name = \"at_limit\",\n    build_xo = \"tcl/build_xo.sh\",\n    \
         instance = 0,\n    packaging = PACKAGING,\n    description = \"kernel.toml\",\n    \
         rtl = RTL,\n    sim_srcs = SIM_MODEL,\n    fifo_width = 32,\n    rx_fifo_size = 16384,\n    \
         cable_m = 30,\n    rx_fifo_prog_full = 264,\n)\n",
    );
    fs::write(&buck, text).unwrap();
    let out = forge_in(&ws, "build", "//hw/aurora_flow:at_limit[description]");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "prog_full at the limit must pass; stderr:\n{stderr}"
    );
}

#[test]
fn legal_parameters_pass_analysis() {
    // The same scratch project with legal parameters builds (the rendered packaging files):
    // the failures above come from the parameters, not from the copy.
    let ws = scratch_project();
    let out = forge_in(&ws, "build", "//hw/aurora_flow:aurora_flow_0[package]");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The project's Verilator rule cannot build a testbench model of the refused configuration
/// either: it passes -Wno-fatal, and Verilator 5.006 reports an elaboration-time `$fatal` as a
/// warning, so the rule keeps that one an error (rules/verilator.bzl, `-Werror-USERFATAL`).
#[test]
fn verilator_model_of_a_small_rx_fifo_does_not_build() {
    let ws = scratch_project();
    let buck = ws.path().join("hw/aurora_flow/BUCK");
    let mut text = fs::read_to_string(&buck).unwrap();
    text.push_str(
        "\nverilator_test(\n    name = \"bad_model\",\n    srcs = RTL + SIM_MODEL + \
         [\"sim/tb/tb_stream_rate.sv\"],\n    args = [\"-DAURORA_SIM\", \"-GFIFO_WIDTH=64\", \
         \"-GRX_FIFO_SIZE=8192\"],\n    headers = RTL_HEADERS + [\"sim/tb/tb_common.svh\"],\n    \
         top = \"tb_stream_rate\",\n)\n",
    );
    fs::write(&buck, text).unwrap();
    let out = forge_in(&ws, "build", "//hw/aurora_flow:bad_model");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "the model of RX_FIFO_SIZE=8192 at 64 B must not build; stderr:\n{stderr}"
    );
    assert!(
        stderr.contains(
            "aurora_flow: RX_FIFO_PROG_FULL=64 leaves a headroom of 128 link beats ((depth 128 - \
             prog_full 64) words x 64 B / 32 B), but CABLE_M=30 needs 248"
        ),
        "the refusal must carry the numbers; stderr:\n{stderr}"
    );
}

/// One edit of kernel.toml reaches every copy: in a scratch project, CONFIGURATION and
/// FIFO_THRESHOLDS trade offsets and INS_LOSS_NYQ's limit drops to 20 dB. After regenerating
/// (and nothing else), the register testbench passes against the RTL with the moved
/// registers, a kernel at 25 dB is refused by the rule and by the RTL, and the documents and
/// the host's constants state the new offsets.
#[test]
fn one_edit_of_kernel_toml_reaches_rtl_testbenches_rule_docs_and_host() {
    let ws = scratch_project();
    let toml_path = ws.path().join("hw/aurora_flow/kernel.toml");
    let text = fs::read_to_string(&toml_path).unwrap();
    let edited = text
        .replace(
            "offset = 0x018\nname = \"CONFIGURATION\"",
            "offset = 0x01c\nname = \"CONFIGURATION\"",
        )
        .replace(
            "offset = 0x01c\nname = \"FIFO_THRESHOLDS\"",
            "offset = 0x018\nname = \"FIFO_THRESHOLDS\"",
        )
        .replace(
            "min = 0\nmax = 31\nunit = \"dB\"",
            "min = 0\nmax = 20\nunit = \"dB\"",
        );
    assert_eq!(
        edited.matches("0x01c\nname = \"CONFIGURATION\"").count(),
        1,
        "edit the copy"
    );
    assert!(edited.contains("max = 20\nunit = \"dB\""), "edit the copy");
    fs::write(&toml_path, &edited).unwrap();
    let desc = aurora_flow_desc::load(&toml_path).unwrap();
    let written = aurora_flow_desc::generated::regenerate(ws.path(), &desc).unwrap();
    assert!(written.len() >= 4, "regenerated only {written:?}");

    // the RTL decodes and the testbench reads the moved registers
    let out = forge_in(&ws, "test", "//hw/aurora_flow:registers_w64");
    assert!(
        out.status.success(),
        "registers_w64 with the moved registers; stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // the rule refuses what the new limit excludes
    let buck = ws.path().join("hw/aurora_flow/BUCK");
    let mut text = fs::read_to_string(&buck).unwrap();
    text.push_str(
        "\naurora_flow_kernel(\n    name = \"lossy\",\n    build_xo = \"tcl/build_xo.sh\",\n    \
         instance = 0,\n    packaging = PACKAGING,\n    description = \"kernel.toml\",\n    \
         rtl = RTL,\n    sim_srcs = SIM_MODEL,\n    ins_loss_nyq = 25,\n)\n",
    );
    fs::write(&buck, text).unwrap();
    let out = forge_in(&ws, "build", "//hw/aurora_flow:lossy");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("ins_loss_nyq: 25: must be 0..20 (dB)"),
        "ins_loss_nyq = 25 must be refused by the rule; stderr:\n{stderr}"
    );
    // and by the RTL's generated checks
    let checks =
        fs::read_to_string(ws.path().join("hw/aurora_flow/rtl/af_param_checks.svh")).unwrap();
    assert!(
        checks.contains("INS_LOSS_NYQ < 0 || INS_LOSS_NYQ > 20"),
        "{checks}"
    );

    // the documents' tables and the host's constants
    for doc in aurora_flow_desc::generated::DOCUMENTS {
        let text = fs::read_to_string(ws.path().join(doc)).unwrap();
        assert!(text.contains("| 0x01c | CONFIGURATION |"), "{doc}");
    }
    let host = aurora_flow_desc::rust_constants(&desc);
    assert!(
        host.contains("pub const CONFIGURATION: u32 = 0x01c;"),
        "{host}"
    );
    assert!(
        host.contains("pub const FIFO_THRESHOLDS: u32 = 0x018;"),
        "{host}"
    );
}
