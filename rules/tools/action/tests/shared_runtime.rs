//! The toolchain's shared Verilator runtime (`action build-model --runtime-only` /
//! `--runtime`; was rules/tools/verilator/tests/shared_runtime.sh): a testbench built against
//! it links the shared objects instead of compiling its own and behaves as the same testbench
//! built by Verilator alone (the reference); one built with other runtime settings (--trace)
//! is built with its own runtime, and behaves and traces as Verilator alone builds it.
//! Verilator is the command toolchains//:verilator names, in `VERILATOR` (rules/tools/action/BUCK).

use crate::common::{action, text, Run, Scratch};
use std::fs;
use std::process::Command;

const TOP: &str = "module forge_verilator_runtime; initial begin #1 $finish; end endmodule\n";

const TB: &str = r#"module tb;
  logic clk = 0;
  always #5 clk = ~clk;
  int n = 0;
  int unsigned acc = 32'h1234_5678;
  always @(posedge clk) begin
    n <= n + 1;
    acc <= {acc[30:0], acc[31] ^ acc[21] ^ acc[1] ^ acc[0]};
    if (n == 1000) begin
      $display("n=%0d acc=%08x t=%0t", n, acc, $time);
      $finish;
    end
  end
  initial if ($test$plusargs("trace")) begin $dumpfile("tb.vcd"); $dumpvars; end
endmodule
"#;

/// rules/toolchains/verilator.bzl's VERILATOR_BINARY_ARGS
const ARGS: [&str; 6] = [
    "--binary",
    "--timing",
    "-j",
    "2",
    "-MAKEFLAGS",
    "VM_PARALLEL_BUILDS=0",
];

fn verilator() -> String {
    std::env::var("VERILATOR").unwrap_or_else(|_| "verilator".into())
}

fn build_model(
    s: &Scratch,
    runtime: &[&str],
    out: &str,
    extra: &[&str],
    src: &str,
    top: &str,
) -> (bool, String) {
    let o = action()
        .current_dir(&s.0)
        .arg("build-model")
        .args(runtime)
        .arg(out)
        .arg(verilator())
        .arg("--")
        .args(ARGS)
        .args(extra)
        .args([src, "--top-module", top, "-o", "sim"])
        .run();
    (o.status.success(), text(&o).1)
}

fn run(s: &Scratch, dir: &str, args: &[&str]) -> String {
    let o = Command::new(s.path(dir).join("sim"))
        .args(args)
        .current_dir(s.path(dir))
        .run();
    assert!(o.status.success(), "{dir}/sim failed: {:?}", text(&o));
    text(&o).0
}

fn reference(s: &Scratch, dir: &str, extra: &[&str]) {
    let o = Command::new(verilator())
        .current_dir(&s.0)
        .args(ARGS)
        .args(extra)
        .args(["tb.sv", "--top-module", "tb", "-o", "sim", "--Mdir", dir])
        .run();
    assert!(
        o.status.success(),
        "Verilator alone cannot build tb.sv {extra:?}: {:?}",
        text(&o)
    );
}

#[test]
fn the_shared_runtime_is_linked_only_into_models_it_was_compiled_for() {
    let s = Scratch::new("runtime");
    s.write("top.sv", TOP);
    s.write("tb.sv", TB);

    let (ok, err) = build_model(
        &s,
        &["--runtime-only"],
        "runtime",
        &[],
        "top.sv",
        "forge_verilator_runtime",
    );
    assert!(ok, "{err}");
    let names = s.names("runtime");
    for f in ["verilated.o", "verilated_timing.o", "runtime.sig"] {
        let len = fs::metadata(s.path("runtime").join(f))
            .map(|m| m.len())
            .unwrap_or(0);
        assert!(len > 0, "the runtime directory lacks {f}: {names:?}");
    }
    assert!(
        names
            .iter()
            .all(|n| n == "runtime.sig" || (n.starts_with("verilated") && n.ends_with(".o"))),
        "the runtime directory keeps more than the objects: {names:?}"
    );

    reference(&s, "ref", &[]);
    reference(&s, "ref_trace", &["--trace"]);

    let (ok, err) = build_model(&s, &["--runtime", "runtime"], "shared", &[], "tb.sv", "tb");
    assert!(ok, "{err}");
    let log = fs::read_to_string(s.path("shared/build.log")).unwrap();
    assert!(
        !log.contains("verilated.cpp"),
        "the model compiled verilated.cpp although the shared runtime matches: {log}"
    );
    assert_eq!(
        run(&s, "shared", &[]),
        run(&s, "ref", &[]),
        "the model on the shared runtime differs from Verilator alone's"
    );
    // Verilator's timestamp files, dependency files and objects are gone
    let left: Vec<String> = s
        .names("shared")
        .into_iter()
        .filter(|n| n.ends_with("__verFiles.dat") || n.ends_with(".d") || n.ends_with(".o"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    let (ok, err) = build_model(
        &s,
        &["--runtime", "runtime"],
        "traced",
        &["--trace"],
        "tb.sv",
        "tb",
    );
    assert!(ok, "{err}");
    assert!(
        err.contains("runtime settings differ"),
        "a --trace model was not rebuilt with its own runtime: {err}"
    );
    let log = fs::read_to_string(s.path("traced/build.log")).unwrap();
    assert!(
        log.contains("verilated_vcd_c.cpp"),
        "the --trace model did not compile its tracing runtime: {log}"
    );
    assert_eq!(
        run(&s, "traced", &["+trace"]),
        run(&s, "ref_trace", &["+trace"])
    );
    assert_eq!(
        fs::read(s.path("traced/tb.vcd")).unwrap(),
        fs::read(s.path("ref_trace/tb.vcd")).unwrap(),
        "the --trace model's VCD differs from Verilator alone's"
    );
}

#[test]
fn a_failing_verilator_prints_its_log() {
    let s = Scratch::new("runtime-fail");
    s.write("bad.sv", "module bad; initial begin oops end endmodule\n");
    let (ok, err) = build_model(&s, &[], "model", &[], "bad.sv", "bad");
    assert!(!ok);
    assert!(err.contains("%Error"), "{err}");
    assert!(
        err.contains("failed building the model (log above)"),
        "{err}"
    );
}
