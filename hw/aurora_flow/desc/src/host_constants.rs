//! The host's constants (`aurora` crate, host/aurora/build.rs writes them at build time): the
//! register map with its bit fields, the numeric parameter defaults and the link's physics.

use crate::KernelDesc;
use std::fmt::Write;

/// The Rust module text; it refers to the `aurora` crate's `Field` and `Register` types.
pub fn rust_constants(d: &KernelDesc) -> String {
    let mut out = String::from(
        "// Generated from hw/aurora_flow/kernel.toml by aurora_flow_desc::rust_constants. Do not edit.\n\n",
    );
    writeln!(
        out,
        "/// CORE_STATUS when every lane is powered and up, PLL locked and the channel up.\n\
         pub const CORE_STATUS_OK: u32 = {:#x};",
        d.kernel.core_status_ok
    )
    .unwrap();
    writeln!(
        out,
        "/// Size of the AXI4-Lite map (`{}`).\npub const AXILITE_RANGE: u32 = {:#x};\n",
        d.kernel.axilite_port, d.kernel.axilite_range
    )
    .unwrap();
    let mut table = String::new();
    for r in &d.registers {
        let (name, offset) = (&r.name, r.offset);
        writeln!(out, "/// {}\npub const {name}: u32 = {offset:#05x};", r.doc).unwrap();
        writeln!(
            table,
            "    Register {{ name: \"{name}\", offset: {offset:#05x}, writable: {} }},",
            r.access.contains('w')
        )
        .unwrap();
        if let Some(fields) = &r.fields {
            writeln!(
                out,
                "/// Bit fields of {name}.\npub mod {} {{\n    use crate::Field;",
                name.to_lowercase()
            )
            .unwrap();
            for (field, spec) in fields {
                let (hi, lo) = r.bit_range(field, spec).expect("checked by load()");
                writeln!(
                    out,
                    "    pub const {field}: Field = Field {{ hi: {hi}, lo: {lo} }};"
                )
                .unwrap();
            }
            out.push_str("}\n");
        }
    }
    writeln!(
        out,
        "\n/// Every register, in offset order as kernel.toml lists them.\n\
         pub const REGISTERS: &[Register] = &[\n{table}];"
    )
    .unwrap();
    out.push_str(
        "\n/// Numeric parameter defaults: (BUCK attribute, default).\n\
         pub const PARAMETER_DEFAULTS: &[(&str, i64)] = &[\n",
    );
    for p in &d.parameters {
        if let Some(v) = p.default.as_integer() {
            writeln!(out, "    (\"{}\", {v}),", p.attr).unwrap();
        }
    }
    out.push_str("];\n");
    let l = &d.link;
    write!(
        out,
        "\n/// The link's physics (kernel.toml [link]).\npub mod link {{\n\
         \x20   /// Lanes of the Aurora 64B/66B core.\n    pub const LANES: u32 = {};\n\
         \x20   /// Line rate of one lane, Gb/s.\n    pub const LINE_RATE_GBPS: f64 = {:?};\n\
         \x20   /// The core's user clock (line rate / 64), MHz.\n    pub const USER_CLK_MHZ: f64 = {:?};\n\
         \x20   /// Bytes per user-clock cycle, all lanes.\n    pub const BEAT_BYTES: u32 = {};\n\
         \x20   /// The gearbox: user-clock cycles with data in every period.\n\
         \x20   pub const GEARBOX_DATA_CYCLES: u64 = {};\n    pub const GEARBOX_PERIOD_CYCLES: u64 = {};\n\
         \x20   /// Clock compensation: cycles without data in every period.\n\
         \x20   pub const CC_CYCLES: u64 = {};\n    pub const CC_PERIOD_CYCLES: u64 = {};\n}}\n",
        l.lanes,
        l.line_rate_gbps,
        l.user_clk_mhz(),
        l.beat_bytes(),
        l.gearbox_data_cycles,
        l.gearbox_period_cycles,
        l.cc_cycles,
        l.cc_period_cycles,
    )
    .unwrap();
    out
}
