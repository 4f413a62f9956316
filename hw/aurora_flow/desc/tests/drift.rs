//! Every copy of a kernel.toml fact agrees with kernel.toml: the generated files are exactly
//! what the generator writes, and the hand-written copies (the RTL's checks, defaults and
//! register decode, the testbench's register map, the rule's and the packaging script's
//! checks, the README tables) state the same numbers. Runs under `cargo test` (from the crate
//! directory) and as `//hw/aurora_flow:desc_check` (from hw/aurora_flow).

use aurora_flow_desc::{
    bzl, load, readme_parameters, readme_registers, sv_axil_ports, sv_package, KernelDesc,
};
use std::path::PathBuf;

/// hw/aurora_flow/desc, found from the directory the runner names (the crate's under cargo,
/// the BUCK package's, hw/aurora_flow, under the build graph).
fn crate_dir() -> PathBuf {
    let dir = PathBuf::from(
        std::env::var("CARGO_MANIFEST_DIR").expect("run by cargo or `action run-tests`"),
    );
    if dir.ends_with("hw/aurora_flow/desc") {
        dir
    } else {
        assert!(
            dir.ends_with("hw/aurora_flow"),
            "{}: not hw/aurora_flow[/desc]",
            dir.display()
        );
        dir.join("desc")
    }
}

fn read(rel: &str) -> String {
    let path = crate_dir().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn desc() -> KernelDesc {
    load(&crate_dir().join("../kernel.toml")).expect("kernel.toml")
}

const REGENERATE: &str =
    "regenerate: cargo run -p aurora_flow_desc -- <kind> hw/aurora_flow/kernel.toml <file>";

#[test]
fn generated_bzl_matches() {
    assert_eq!(
        read("../../../rules/aurora_flow_desc.bzl"),
        bzl(&desc()),
        "rules/aurora_flow_desc.bzl is stale; {REGENERATE}"
    );
}

#[test]
fn generated_sv_package_matches() {
    assert_eq!(
        read("../rtl/af_kernel_pkg.sv"),
        sv_package(&desc()),
        "rtl/af_kernel_pkg.sv is stale; {REGENERATE}"
    );
}

#[test]
fn generated_axil_ports_match() {
    assert_eq!(
        read("../rtl/af_axil_ports.svh"),
        sv_axil_ports(&desc()),
        "rtl/af_axil_ports.svh is stale; {REGENERATE}"
    );
}

/// Every module that carries the control port declares and connects it through the generated
/// macros, never by a list of its own.
#[test]
fn control_port_comes_from_the_header() {
    let d = desc();
    let first = format!(
        "{}_{}",
        d.kernel.axilite_port, d.kernel.axilite_signals[0].name
    );
    for (file, connects) in [
        ("../rtl/af_axil_regs.sv", false),
        ("../rtl/aurora_flow.sv", true),
        ("../tcl/render_kernel.py", true),
    ] {
        let text = read(file);
        assert!(
            text.contains("`include \"af_axil_ports.svh\"") && text.contains("`AF_AXIL_PORTS\n"),
            "{file}: must declare the control port with `AF_AXIL_PORTS from af_axil_ports.svh"
        );
        assert!(
            !connects || text.contains("`AF_AXIL_CONNECT\n"),
            "{file}: must connect the control port with `AF_AXIL_CONNECT"
        );
        let own_list = text.contains(&format!(".{first}("))
            || text
                .lines()
                .any(|l| l.contains(&first) && l.trim_start().starts_with("input"));
        assert!(
            !own_list,
            "{file}: declares or connects `{first}` itself; use the macros of af_axil_ports.svh"
        );
    }
    // the two writable registers the slave decodes
    let regs = read("../rtl/af_axil_regs.sv");
    for name in ["CORE_RESET", "COUNTER_RESET"] {
        let r = d.registers.iter().find(|r| r.name == name).unwrap();
        let line = format!("ADDR_{name} = 12'h{:03x};", r.offset);
        assert!(regs.contains(&line), "af_axil_regs.sv: `{line}` expected");
    }
}

/// The text between `<!-- kernel.toml: NAME -->` and `<!-- end kernel.toml: NAME -->`.
fn block<'a>(text: &'a str, name: &str, file: &str) -> &'a str {
    let start = format!("<!-- kernel.toml: {name} -->\n");
    let end = format!("<!-- end kernel.toml: {name} -->");
    let a = text
        .find(&start)
        .unwrap_or_else(|| panic!("{file}: no `{start}` marker"))
        + start.len();
    let b = text[a..]
        .find(&end)
        .unwrap_or_else(|| panic!("{file}: no `{end}` marker"))
        + a;
    &text[a..b]
}

#[test]
fn readme_tables_match() {
    let d = desc();
    for file in ["../README.md", "../../../docs/auroraflow.md"] {
        let text = read(file);
        assert_eq!(
            block(&text, "parameters", file),
            readme_parameters(&d),
            "{file}: parameter table differs from kernel.toml"
        );
        assert_eq!(
            block(&text, "registers", file),
            readme_registers(&d),
            "{file}: register table differs from kernel.toml"
        );
    }
}

/// `localparam logic [11:0] A = 12'h010, B = 12'h014;` pairs of the testbench header.
#[test]
fn testbench_register_map_matches() {
    let d = desc();
    let tb = read("../sim/tb/tb_common.svh");
    let mut seen = 0;
    for line in tb
        .lines()
        .filter(|l| l.trim_start().starts_with("localparam logic [11:0]"))
    {
        let body = line
            .trim_start()
            .trim_start_matches("localparam logic [11:0]")
            .trim_end_matches(';');
        for item in body.split(',') {
            let (name, value) = item.split_once('=').expect("NAME = 12'hNNN");
            let name = name.trim();
            let offset = u32::from_str_radix(value.trim().trim_start_matches("12'h"), 16)
                .expect("hex offset");
            // the testbench shortens GT_NOT_READY_0_COUNT to GT_NOT_READY_0
            let reg = d
                .registers
                .iter()
                .find(|r| r.name == name || r.name == format!("{name}_COUNT"))
                .unwrap_or_else(|| panic!("tb_common.svh: {name} is not a kernel.toml register"));
            assert_eq!(
                reg.offset, offset,
                "tb_common.svh: {name} = 0x{offset:03x}, kernel.toml 0x{:03x}",
                reg.offset
            );
            seen += 1;
        }
    }
    assert!(
        seen >= 20,
        "tb_common.svh: found only {seen} register constants"
    );
    assert!(
        tb.contains(&format!(
            "CORE_STATUS_OK = 32'h{:x};",
            d.kernel.core_status_ok
        )),
        "tb_common.svh: CORE_STATUS_OK"
    );
}

/// The RTL's read decode lists one word per register, commented `// 0xNNN NAME`.
#[test]
fn rtl_register_decode_matches() {
    let d = desc();
    let rtl = read("../rtl/aurora_flow.sv");
    for r in &d.registers {
        let tag = format!("// 0x{:03x} {}", r.offset, r.name);
        let grouped = r.name.ends_with("_COUNT")
            && (r.name.starts_with("GT_NOT_READY_") || r.name.starts_with("LINE_DOWN_"));
        assert!(
            grouped
                || rtl.contains(&tag)
                || rtl.contains(&format!("// 0x{:03x}\n", r.offset))
                || rtl.contains(&format!("// 0x{:03x} ", r.offset)),
            "aurora_flow.sv: no read word `{tag}`"
        );
    }
    let first = d.registers.iter().map(|r| r.offset).min().unwrap();
    let last = d.registers.iter().map(|r| r.offset).max().unwrap();
    let words = (last - first) / 4 + 1;
    assert!(
        rtl.contains(&format!("localparam int NWORDS = {words};")),
        "aurora_flow.sv: NWORDS must be {words}"
    );
}

fn int_default(d: &KernelDesc, attr: &str) -> Option<i64> {
    d.parameters
        .iter()
        .find(|p| p.attr == attr)
        .and_then(|p| p.default.as_integer())
}

/// The rule's attributes and checks, the RTL's parameter defaults and checks, and the
/// packaging script's checks use kernel.toml's numbers.
#[test]
fn parameter_checks_match() {
    let d = desc();
    let rule = read("../../../rules/aurora_flow.bzl");
    let rtl = read("../rtl/aurora_flow.sv");
    let render = read("../tcl/render_kernel.py");
    for p in &d.parameters {
        assert!(
            rule.contains(&format!("\"{}\": attrs.", p.attr)),
            "rules/aurora_flow.bzl: no attr `{}`",
            p.attr
        );
        if let Some(v) = p.default.as_integer() {
            let rule_default = if p.kind == "bool" {
                format!(
                    "\"{}\": attrs.bool(default = {}",
                    p.attr,
                    if v != 0 { "True" } else { "False" }
                )
            } else if p.attr == "sim_ip_reset_cycles" {
                format!("\"{}\": attrs.int(default = 300", p.attr) // the simulation model's value
            } else {
                format!("\"{}\": attrs.int(default = {v}", p.attr)
            };
            assert!(
                rule.contains(&rule_default),
                "rules/aurora_flow.bzl: `{rule_default}` expected"
            );
            let rtl_default = format!("parameter int {:<18} = {v}", p.rtl);
            assert!(
                rtl.contains(&rtl_default),
                "aurora_flow.sv: `{rtl_default}` expected"
            );
        }
        if let Some(allowed) = &p.allowed {
            let tuple = allowed
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            assert!(
                rule.contains(&format!("a.{} not in ({tuple})", p.attr)),
                "rules/aurora_flow.bzl: {} must allow ({tuple})",
                p.attr
            );
            assert!(
                render.contains(&format!("p[\"{}\"] not in ({tuple})", p.attr)),
                "render_kernel.py: {} must allow ({tuple})",
                p.attr
            );
            let sv = allowed
                .iter()
                .map(|v| format!("{} != {v}", p.rtl))
                .collect::<Vec<_>>()
                .join(" && ");
            assert!(rtl.contains(&sv), "aurora_flow.sv: `{sv}` expected");
        }
        if let (Some(lo), Some(hi)) = (p.min, p.max) {
            assert!(
                rule.contains(&format!("a.{} < {lo} or a.{} > {hi}", p.attr, p.attr))
                    || rule.contains(&format!("> {hi}:")),
                "rules/aurora_flow.bzl: {} range {lo}..{hi}",
                p.attr
            );
            assert!(
                rtl.contains(&format!("{} < {lo} || {} > {hi}", p.rtl, p.rtl)),
                "aurora_flow.sv: {} range {lo}..{hi}",
                p.rtl
            );
        }
        if let Some(values) = &p.values {
            let mut sorted: Vec<_> = values.iter().collect();
            sorted.sort();
            let dict = sorted
                .iter()
                .map(|(k, v)| format!("\"{k}\": {v}"))
                .collect::<Vec<_>>()
                .join(", ");
            assert!(
                rule.contains(&format!("{{{dict}}}")),
                "rules/aurora_flow.bzl: _EQ_MODES must be {{{dict}}}"
            );
            let mut by_value: Vec<_> = values.iter().collect();
            by_value.sort_by_key(|(_, v)| **v);
            let py = by_value
                .iter()
                .map(|(k, v)| format!("\"{k}\": {v}"))
                .collect::<Vec<_>>()
                .join(", ");
            assert!(
                render.contains(&format!("EQ_MODES = {{{py}}}")),
                "render_kernel.py: EQ_MODES must be {{{py}}}"
            );
        }
    }
    let rx = d
        .parameters
        .iter()
        .find(|p| p.rtl == "RX_FIFO_SIZE")
        .unwrap();
    let toml_words = |k: &str| rx_words(rx, k);
    let (lo, hi) = (toml_words("min_words"), toml_words("max_words"));
    assert!(
        rule.contains(&format!("depth < {lo} or depth > {hi}")),
        "rules/aurora_flow.bzl: depth {lo}..{hi}"
    );
    assert!(
        render.contains(&format!("{lo} <= depth <= {hi}")),
        "render_kernel.py: depth {lo}..{hi}"
    );
    assert!(
        rtl.contains(&format!("RX_DEPTH < {lo} || RX_DEPTH > {hi}")),
        "aurora_flow.sv: depth {lo}..{hi}"
    );
    assert_eq!(int_default(&d, "fifo_width"), Some(64));
}

fn rx_words(p: &aurora_flow_desc::Parameter, key: &str) -> i64 {
    // min_words/max_words are not in the struct: read them from the raw file
    let raw: toml::Value = toml::from_str(&read("../kernel.toml")).unwrap();
    raw["parameter"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["rtl"].as_str() == Some(&p.rtl))
        .and_then(|v| v.get(key))
        .and_then(|v| v.as_integer())
        .unwrap_or_else(|| panic!("kernel.toml: {} has no {key}", p.rtl))
}
