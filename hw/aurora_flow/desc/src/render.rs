//! The generated copies. Each function returns the whole file (or README block) text.

use crate::KernelDesc;

const HEADER: &str = "Generated from hw/aurora_flow/kernel.toml by `aurora-flow-desc";

/// `hw/aurora_flow/desc.bzl`: the constants and limits the rule (`defs.bzl` beside it) checks
/// against. It stands beside the kernel, not in rules/: nothing outside rules/ writes there.
pub fn bzl(d: &KernelDesc) -> String {
    let f = &d.flow_control;
    format!(
        "# {HEADER} regenerate`; do not edit.\n\
         # //hw/aurora_flow:desc_check fails when this file and the description disagree.\n\
         \n\
         # [flow_control]: RX headroom in link beats = (depth - prog_full) * fifo_width / link_beat_bytes\n\
         # must be >= fixed_inflight_beats + beats_per_metre * cable_m\n\
         FLOW_CONTROL = {{\n    \"beats_per_metre\": {},\n    \"default_cable_m\": {},\n    \
         \"fixed_inflight_beats\": {},\n    \"link_beat_bytes\": {},\n}}\n\
         \n\
         def need_beats(cable_m):\n    \
         \"\"\"Link beats still arriving after an XOFF over `cable_m` whole metres of fibre.\"\"\"\n    \
         return FLOW_CONTROL[\"fixed_inflight_beats\"] + FLOW_CONTROL[\"beats_per_metre\"] * cable_m\n\
         \n\
         def headroom_beats(headroom_words, fifo_width):\n    \
         \"\"\"Link beats an RX FIFO holds in `headroom_words` words above prog_full.\"\"\"\n    \
         return headroom_words * fifo_width // FLOW_CONTROL[\"link_beat_bytes\"]\n",
        f.beats_per_metre, f.default_cable_m, f.fixed_inflight_beats, f.link_beat_bytes
    ) + &format!(
        "\n# [kernel] the AXI4-Lite control port (name, address bits, bytes of address space, data bits)\n\
         AXILITE = {{\n    \"addr_width\": {},\n    \"name\": \"{}\",\n    \"range\": {},\n    \
         \"width\": {},\n}}\n",
        d.kernel.axilite_addr_width(),
        d.kernel.axilite_port,
        d.kernel.axilite_range,
        d.kernel.axilite_data_width()
    ) + &bzl_link(d)
        + &bzl_parameters(d)
}

fn bzl_link(d: &KernelDesc) -> String {
    let l = &d.link;
    format!(
        "\n# [link] the Aurora 64B/66B link's clocks and data cycles\n\
         LINK = {{\n    \"cc_cycles\": {},\n    \"cc_period_cycles\": {},\n    \
         \"gearbox_data_cycles\": {},\n    \"gearbox_period_cycles\": {},\n    \
         \"init_clk_mhz\": \"{}\",\n    \"lanes\": {},\n    \"line_rate_gbps\": \"{}\",\n    \
         \"refclk_mhz\": \"{}\",\n}}\n",
        l.cc_cycles,
        l.cc_period_cycles,
        l.gearbox_data_cycles,
        l.gearbox_period_cycles,
        l.init_clk_mhz,
        l.lanes,
        l.line_rate_gbps,
        l.refclk_mhz,
    )
}

/// `PARAMETERS`: per BUCK attribute, the default and the limits the rule checks.
fn bzl_parameters(d: &KernelDesc) -> String {
    let mut s = String::from(
        "\n# [[parameter]] per BUCK attribute: the RTL name, the default (None: derived, the rule\n\
         # computes it), the unit and the limits of the value itself\nPARAMETERS = {\n",
    );
    let mut params: Vec<_> = d.parameters.iter().collect();
    params.sort_by(|a, b| a.attr.cmp(&b.attr));
    for p in params {
        let mut fields: Vec<(String, String)> = Vec::new();
        let default = match (&p.default, p.sim_default) {
            (_, Some(v)) => v.to_string(),
            (toml::Value::Integer(v), None) if p.kind == "bool" => {
                (if *v != 0 { "True" } else { "False" }).to_string()
            }
            (toml::Value::Integer(v), None) => v.to_string(),
            (toml::Value::String(v), None) if p.values.is_some() => format!("\"{v}\""),
            _ => "None".to_string(),
        };
        if let Some(a) = &p.allowed {
            let list = a
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            fields.push(("allowed".into(), format!("[{list}]")));
        }
        fields.push(("default".into(), default));
        if let Some(v) = p.max {
            fields.push(("max".into(), v.to_string()));
        }
        if let Some(v) = p.max_words {
            fields.push(("max_words".into(), v.to_string()));
        }
        if let Some(v) = p.min {
            fields.push(("min".into(), v.to_string()));
        }
        if let Some(v) = p.min_words {
            fields.push(("min_words".into(), v.to_string()));
        }
        fields.push((
            "power_of_two".into(),
            (if p.power_of_two { "True" } else { "False" }).into(),
        ));
        fields.push(("rtl".into(), format!("\"{}\"", p.rtl)));
        fields.push((
            "unit".into(),
            format!("\"{}\"", p.unit.as_deref().unwrap_or("")),
        ));
        if let Some(values) = &p.values {
            let dict = values
                .iter()
                .map(|(k, v)| format!("\"{k}\": {v}"))
                .collect::<Vec<_>>()
                .join(", ");
            fields.push(("values".into(), format!("{{{dict}}}")));
        }
        s.push_str(&format!("    \"{}\": {{\n", p.attr));
        for (k, v) in fields {
            s.push_str(&format!("        \"{k}\": {v},\n"));
        }
        s.push_str("    },\n");
    }
    s.push_str("}\n");
    s
}

/// `rtl/af_axil_ports.svh`: the control port's declarations (`AF_AXIL_PORTS`) and the
/// connection of an instance's control port to the same-named signals (`AF_AXIL_CONNECT`),
/// for every module that carries the port. Both expand to a list ending in a comma, so they
/// stand anywhere in a port or connection list but last.
pub fn sv_axil_ports(d: &KernelDesc) -> String {
    let k = &d.kernel;
    let name = |s: &crate::AxiliteSignal| format!("{}_{}", k.axilite_port, s.name);
    let mut s = format!(
        "// {HEADER} regenerate`; do not edit.\n\
         // //hw/aurora_flow:desc_check fails when this file and the description disagree.\n\
         // The AXI4-Lite control port `{}` ([kernel] axilite_signals): `AF_AXIL_PORTS declares\n\
         // it, `AF_AXIL_CONNECT connects an instance's port to the same-named signals.\n\
         `ifndef AF_AXIL_PORTS_SVH\n\
         `define AF_AXIL_PORTS_SVH\n\
         `define AF_AXIL_PORTS \\\n",
        k.axilite_port
    );
    for sig in &k.axilite_signals {
        let range = if sig.width > 1 {
            format!("[{}:0]", sig.width - 1)
        } else {
            String::new()
        };
        s.push_str(&format!(
            "    {:<6} logic {range:<6} {}, \\\n",
            sig.dir,
            name(sig)
        ));
    }
    s.push_str("\n`define AF_AXIL_CONNECT \\\n");
    for sig in &k.axilite_signals {
        s.push_str(&format!("    .{0}({0}), \\\n", name(sig)));
    }
    s.push_str("\n`endif\n");
    s
}

/// `rtl/af_kernel_pkg.sv`: the constants the RTL and the testbenches use: the flow-control
/// sizing, the link's physics, the parameters' defaults and the register offsets.
pub fn sv_package(d: &KernelDesc) -> String {
    let f = &d.flow_control;
    let l = &d.link;
    let mut s = format!(
        "`timescale 1ps / 1ps\n\
         // {HEADER} regenerate`; do not edit.\n\
         // //hw/aurora_flow:desc_check fails when this file and the description disagree.\n\
         // A package of constants: each user takes some of them.\n\
         /* verilator lint_off UNUSEDPARAM */\n\
         package af_kernel_pkg;\n\
         \x20 // [flow_control]\n\
         \x20 localparam int LINK_BEAT_BYTES = {};\n\
         \x20 localparam int FIXED_INFLIGHT_BEATS = {};\n\
         \x20 localparam int BEATS_PER_METRE = {};\n\
         \x20 localparam int DEFAULT_CABLE_M = {};\n\
         \x20 // [link]\n\
         \x20 localparam int LANES = {};\n\
         \x20 localparam real LINE_RATE_GBPS = {};\n\
         \x20 localparam real REFCLK_MHZ = {};\n\
         \x20 localparam real USER_CLK_MHZ = {};\n\
         \x20 localparam int GEARBOX_DATA_CYCLES = {};\n\
         \x20 localparam int GEARBOX_PERIOD_CYCLES = {};\n\
         \x20 localparam int CC_CYCLES = {};\n\
         \x20 localparam int CC_PERIOD_CYCLES = {};\n",
        f.link_beat_bytes,
        f.fixed_inflight_beats,
        f.beats_per_metre,
        f.default_cable_m,
        l.lanes,
        real(l.line_rate_gbps),
        real(l.refclk_mhz),
        real(l.user_clk_mhz()),
        l.gearbox_data_cycles,
        l.gearbox_period_cycles,
        l.cc_cycles,
        l.cc_period_cycles,
    );
    s.push_str("  // [[parameter]] defaults (derived ones are expressions in aurora_flow.sv)\n");
    for p in &d.parameters {
        if let Some(v) = int_default(p) {
            s.push_str(&format!("  localparam int DEFAULT_{} = {v};\n", p.rtl));
        }
    }
    s.push_str("  // [[register]] offsets (s_axi_control)\n");
    for r in &d.registers {
        s.push_str(&format!(
            "  localparam logic [11:0] REG_{} = 12'h{:03x};\n",
            r.name, r.offset
        ));
    }
    s.push_str(&format!(
        "  localparam logic [31:0] CORE_STATUS_OK = 32'h{:x};\nendpackage\n\
         /* verilator lint_on UNUSEDPARAM */\n",
        d.kernel.core_status_ok
    ));
    s
}

/// A real for SystemVerilog, Starlark and Rust alike: always with a decimal point.
fn real(v: f64) -> String {
    let t = format!("{v}");
    if t.contains('.') {
        t
    } else {
        format!("{t}.0")
    }
}

/// The hardware default of an integer, boolean or enum parameter (None: derived).
fn int_default(p: &crate::Parameter) -> Option<i64> {
    match &p.default {
        toml::Value::Integer(v) => Some(*v),
        toml::Value::String(name) => p.values.as_ref()?.get(name).copied(),
        _ => None,
    }
}

/// `rtl/af_param_checks.svh`: the elaboration-time check of each parameter's own limits
/// ([[parameter]] allowed, min/max, power_of_two, min_words/max_words, values), included in
/// aurora_flow's body. Checks that relate parameters (thresholds, the in-flight budget) are
/// aurora_flow.sv's own.
pub fn sv_param_checks(d: &KernelDesc) -> String {
    let mut s = format!(
        "// {HEADER} regenerate`; do not edit.\n\
         // //hw/aurora_flow:desc_check fails when this file and the description disagree.\n\
         // Included in aurora_flow's body; each block refuses one illegal value (af_refuse.svh):\n\
         // at elaboration, and with an `initial $fatal` at time 0 where a tool lets that through.\n"
    );
    let block = |s: &mut String, name: &str, cond: String, msg: String, args: String| {
        s.push_str(&format!(
            "if ({cond}) begin : g_err_{name}\n  `AF_REFUSE((\"aurora_flow: {msg}\", {args}))\nend\n"
        ));
    };
    for p in &d.parameters {
        let x = &p.rtl;
        let lower = x.to_lowercase();
        let unit = p
            .unit
            .as_deref()
            .map(|u| format!(" ({u})"))
            .unwrap_or_default();
        let one_of = |values: &[(i64, String)]| {
            let cond = values
                .iter()
                .map(|(v, _)| format!("{x} != {v}"))
                .collect::<Vec<_>>()
                .join(" && ");
            let names = values.iter().map(|(_, n)| n.clone()).collect::<Vec<_>>();
            let (last, rest) = names.split_last().unwrap();
            (cond, format!("{} or {last}", rest.join(", ")))
        };
        let values: Option<Vec<(i64, String)>> = if p.kind == "bool" {
            Some(vec![(0, "0".into()), (1, "1".into())])
        } else if let Some(allowed) = &p.allowed {
            Some(allowed.iter().map(|v| (*v, v.to_string())).collect())
        } else {
            p.values.as_ref().map(|m| {
                let mut v: Vec<_> = m.iter().map(|(n, v)| (*v, format!("{v} ({n})"))).collect();
                v.sort();
                v
            })
        };
        if let Some(values) = values {
            let (cond, text) = one_of(&values);
            block(
                &mut s,
                &lower,
                cond,
                format!("{x}=%0d: must be {text}{unit}"),
                x.clone(),
            );
        }
        if p.power_of_two {
            block(
                &mut s,
                &format!("{lower}_pow2"),
                format!("(1 << $clog2({x})) != {x}"),
                format!("{x}=%0d: must be a power of two{unit}"),
                x.clone(),
            );
        }
        if let (Some(lo), Some(hi)) = (p.min_words, p.max_words) {
            let depth = format!("{x} / FIFO_WIDTH");
            block(
                &mut s,
                &format!("{lower}_depth"),
                format!("{depth} < {lo} || {depth} > {hi}"),
                format!("{x}=%0d / FIFO_WIDTH=%0d = %0d words: must be {lo}..{hi}"),
                format!("{x}, FIFO_WIDTH, {depth}"),
            );
        }
        if let (Some(lo), Some(hi)) = (p.min, p.max) {
            block(
                &mut s,
                &format!("{lower}_range"),
                format!("{x} < {lo} || {x} > {hi}"),
                format!("{x}=%0d: must be {lo}..{hi}{unit}"),
                x.clone(),
            );
        }
    }
    s
}

/// The README's parameter table (between `<!-- kernel.toml: parameters -->` markers).
pub fn readme_parameters(d: &KernelDesc) -> String {
    let mut s = String::from(
        "| parameter (RTL / BUCK attr) | default | unit | meaning |\n|---|---|---|---|\n",
    );
    for p in &d.parameters {
        s.push_str(&format!(
            "| `{}` / `{}` | {} | {} | {} |\n",
            p.rtl,
            p.attr,
            p.default_text(),
            p.unit.as_deref().unwrap_or(""),
            p.doc
        ));
    }
    s
}

/// The README's register table (between `<!-- kernel.toml: registers -->` markers).
pub fn readme_registers(d: &KernelDesc) -> String {
    let mut s = String::from("| offset | name | access | meaning |\n|---|---|---|---|\n");
    for r in &d.registers {
        let doc = match r.fields_text() {
            Some(f) => format!("{}: {f}", r.doc),
            None => r.doc.clone(),
        };
        s.push_str(&format!(
            "| 0x{:03x} | {} | {} | {doc} |\n",
            r.offset, r.name, r.access
        ));
    }
    s
}
