//! The generated copies. Each function returns the whole file (or README block) text.

use crate::KernelDesc;

const HEADER: &str = "Generated from hw/aurora_flow/kernel.toml by `aurora-flow-desc";

/// `rules/aurora_flow_desc.bzl`: the flow-control constants the rule checks against.
pub fn bzl(d: &KernelDesc) -> String {
    let f = &d.flow_control;
    format!(
        "# {HEADER} bzl`; do not edit.\n\
         # //hw/aurora_flow:desc_check fails when this file and the description disagree.\n\
         \n\
         # [flow_control]: RX headroom in link beats = (depth - prog_full) * fifo_width / link_beat_bytes\n\
         # must be >= fixed_inflight_beats + beats_per_metre * cable_m\n\
         FLOW_CONTROL = {{\n    \"beats_per_metre\": {},\n    \"default_cable_m\": {},\n    \
         \"fixed_inflight_beats\": {},\n    \"link_beat_bytes\": {},\n}}\n",
        f.beats_per_metre, f.default_cable_m, f.fixed_inflight_beats, f.link_beat_bytes
    ) + &format!(
        "\n# [kernel] the AXI4-Lite control port (name, address bits, bytes of address space, data bits)\n\
         AXILITE = {{\n    \"addr_width\": {},\n    \"name\": \"{}\",\n    \"range\": {},\n    \
         \"width\": {},\n}}\n",
        d.kernel.axilite_addr_width(),
        d.kernel.axilite_port,
        d.kernel.axilite_range,
        d.kernel.axilite_data_width()
    )
}

/// `rtl/af_axil_ports.svh`: the control port's declarations (`AF_AXIL_PORTS`) and the
/// connection of an instance's control port to the same-named signals (`AF_AXIL_CONNECT`),
/// for every module that carries the port. Both expand to a list ending in a comma, so they
/// stand anywhere in a port or connection list but last.
pub fn sv_axil_ports(d: &KernelDesc) -> String {
    let k = &d.kernel;
    let name = |s: &crate::AxiliteSignal| format!("{}_{}", k.axilite_port, s.name);
    let mut s = format!(
        "// {HEADER} sv-axil-ports`; do not edit.\n\
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

/// `rtl/af_kernel_pkg.sv`: the same constants for elaboration-time checks, and the register
/// offsets.
pub fn sv_package(d: &KernelDesc) -> String {
    let f = &d.flow_control;
    let mut s = format!(
        "`timescale 1ps / 1ps\n\
         // {HEADER} sv-package`; do not edit.\n\
         // //hw/aurora_flow:desc_check fails when this file and the description disagree.\n\
         package af_kernel_pkg;\n\
         \x20 // [flow_control]\n\
         \x20 localparam int LINK_BEAT_BYTES = {};\n\
         \x20 localparam int FIXED_INFLIGHT_BEATS = {};\n\
         \x20 localparam int BEATS_PER_METRE = {};\n\
         \x20 localparam int DEFAULT_CABLE_M = {};\n",
        f.link_beat_bytes, f.fixed_inflight_beats, f.beats_per_metre, f.default_cable_m
    );
    s.push_str("  // [[register]] offsets (s_axi_control)\n");
    for r in &d.registers {
        s.push_str(&format!(
            "  localparam logic [11:0] REG_{} = 12'h{:03x};\n",
            r.name, r.offset
        ));
    }
    s.push_str(&format!(
        "  localparam logic [31:0] CORE_STATUS_OK = 32'h{:x};\nendpackage\n",
        d.kernel.core_status_ok
    ));
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
