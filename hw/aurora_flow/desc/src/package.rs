//! The files that package one kernel instance for Vivado, from the parameters the rule
//! resolved (`params.json`): the top-level wrapper `<kernel_name>.sv` (a module name per
//! instance, so the two QSFP ports' clock constraints do not shadow each other), its XDC,
//! `kernel.xml` and the Vivado parameter script `params.tcl`.

use crate::KernelDesc;
use anyhow::{bail, Context, Result};
use fpga_platform::Platform;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// params.json as aurora_flow_kernel writes it: the kernel's identity and every
/// [[parameter]] by its BUCK attribute (`rx_eq_mode` by name).
#[derive(Debug, Deserialize)]
pub struct KernelParams {
    pub kernel_name: String,
    pub instance: u32,
    pub part: String,
    pub aurora_version: String,
    /// paths relative to the directory Vivado runs in
    pub rtl_files: Vec<String>,
    #[serde(flatten)]
    pub values: BTreeMap<String, serde_json::Value>,
}

impl KernelParams {
    pub fn load(path: &Path) -> Result<Self> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{}: not the kernel's parameters", path.display()))
    }

    /// The value of a parameter as the RTL takes it (an enum by its number).
    fn rtl_value(&self, d: &KernelDesc, p: &crate::Parameter) -> Result<i64> {
        let v = self
            .values
            .get(&p.attr)
            .with_context(|| format!("missing parameter `{}`", p.attr))?;
        match (v, &p.values) {
            (serde_json::Value::String(name), Some(values)) => {
                values.get(name).copied().with_context(|| {
                    let names: Vec<_> = values.keys().cloned().collect();
                    format!("{}: `{name}` is not one of {}", p.attr, names.join(", "))
                })
            }
            (serde_json::Value::Bool(b), _) => Ok(i64::from(*b)),
            _ => v
                .as_i64()
                .with_context(|| format!("{}: {v} is not an integer", p.attr)),
        }
        .map_err(|e| e.context(format!("kernel {}", d.kernel.name)))
    }
}

/// The parameters by RTL name, each within its limits, the thresholds in order, the RX
/// headroom within the in-flight budget and, given the board's platform file, the instance
/// one of its QSFP ports.
pub fn resolve(
    d: &KernelDesc,
    k: &KernelParams,
    board: Option<&Platform>,
) -> Result<BTreeMap<String, i64>> {
    let mut by_rtl = BTreeMap::new();
    for p in &d.parameters {
        if p.attr.starts_with("sim_") {
            continue; // the simulation model's, not the packaged kernel's
        }
        by_rtl.insert(p.rtl.clone(), k.rtl_value(d, p)?);
    }
    let width = by_rtl["FIFO_WIDTH"];
    for p in d.parameters.iter().filter(|p| by_rtl.contains_key(&p.rtl)) {
        if let Err(e) = p.check(by_rtl[&p.rtl], width) {
            bail!("{}: {e}", p.attr);
        }
    }
    let depth = by_rtl["RX_FIFO_SIZE"] / width;
    let (full, empty) = (by_rtl["RX_FIFO_PROG_FULL"], by_rtl["RX_FIFO_PROG_EMPTY"]);
    if !(1 <= empty && empty < full && full < depth) {
        bail!("need 1 <= rx_fifo_prog_empty < rx_fifo_prog_full < RX FIFO depth ({empty}, {full}, {depth})");
    }
    // the in-flight budget (kernel.toml [flow_control]), as hw/aurora_flow/defs.bzl and the RTL
    // apply it: what still arrives after an XOFF must fit above prog_full, or a stalled
    // receiver loses data. Refused here, before any Vivado run.
    let fc = &d.flow_control;
    let cable_m = by_rtl["CABLE_M"];
    let headroom_words = depth - full;
    let headroom = fc.headroom_beats(headroom_words, width);
    let need = fc.need_beats(cable_m as f64);
    if headroom < need {
        bail!(
            "rx_fifo_prog_full: headroom {headroom_words} words = {headroom} link beats \
             (depth {depth} - prog_full {full}, {width} B words) is below the {need} beats in \
             flight with cable_m = {cable_m} ({} + {} x {cable_m} m), so a stalled receiver \
             would lose data; raise rx_fifo_size or lower rx_fifo_prog_full (or cable_m, if the \
             link is shorter)",
            fc.fixed_inflight_beats,
            fc.beats_per_metre
        );
    }
    if by_rtl["USE_FRAMING"] == 1 && by_rtl["STREAM_FRAME_WORDS"] != 0 {
        bail!("stream_frame_words is for streaming; with use_framing the user's frames are the wire's");
    }
    if let Some(b) = board.filter(|b| b.qsfp(k.instance).is_none()) {
        bail!(
            "instance={}: the {} has QSFP ports {:?} ({})",
            k.instance,
            b.board,
            b.ports(),
            b.source
        );
    }
    Ok(by_rtl)
}

/// The generated top: the kernel's ports as Vitis links them, around `aurora_flow`.
pub fn wrapper(d: &KernelDesc, k: &KernelParams, by_rtl: &BTreeMap<String, i64>) -> String {
    let (n, inst) = (&k.kernel_name, k.instance);
    let w = by_rtl["FIFO_WIDTH"];
    let framing = by_rtl["USE_FRAMING"] == 1;
    let (tx_extra, rx_extra, tx_conn, rx_conn, unused) = if framing {
        (
            format!(
                "    input  wire         tx_axis_tlast,\n    input  wire [{}:0]  tx_axis_tkeep,\n",
                w - 1
            ),
            format!(
                "    output wire         rx_axis_tlast,\n    output wire [{}:0]  rx_axis_tkeep,\n",
                w - 1
            ),
            ".tx_axis_tlast(tx_axis_tlast), .tx_axis_tkeep(tx_axis_tkeep),".to_string(),
            ".rx_axis_tlast(rx_axis_tlast), .rx_axis_tkeep(rx_axis_tkeep),".to_string(),
            String::new(),
        )
    } else {
        (
            String::new(),
            String::new(),
            format!(".tx_axis_tlast(1'b0), .tx_axis_tkeep({{{w}{{1'b1}}}}),"),
            ".rx_axis_tlast(unused_tlast), .rx_axis_tkeep(unused_tkeep),".to_string(),
            format!(
                "  // streaming: the kernel has no TLAST/TKEEP on its stream interfaces\n\
                 \x20 /* verilator lint_off UNUSEDSIGNAL */\n\
                 \x20 wire unused_tlast;\n  wire [{}:0] unused_tkeep;\n\
                 \x20 /* verilator lint_on UNUSEDSIGNAL */\n",
                w - 1
            ),
        )
    };
    let overrides = d
        .parameters
        .iter()
        .filter_map(|p| by_rtl.get(&p.rtl).map(|v| format!("      .{}({v})", p.rtl)))
        .collect::<Vec<_>>()
        .join(",\n");
    let bits = 8 * w - 1;
    format!(
        "`timescale 1ps / 1ps\n\
         // Generated by `aurora-flow-desc package`: kernel top for QSFP port {inst}.\n\
         // The control port is the RTL's (rtl/af_axil_ports.svh, generated from kernel.toml).\n\
         `include \"af_axil_ports.svh\"\n\
         module {n} (\n\
         \x20   input  wire         ap_clk,\n\
         \x20   input  wire         ap_rst_n,\n\
         \x20   input  wire         init_clk,\n\
         \x20   input  wire [{bits}:0] tx_axis_tdata,\n\
         \x20   input  wire         tx_axis_tvalid,\n\
         \x20   output wire         tx_axis_tready,\n\
         {tx_extra}\
         \x20   output wire [{bits}:0] rx_axis_tdata,\n\
         \x20   output wire         rx_axis_tvalid,\n\
         \x20   input  wire         rx_axis_tready,\n\
         {rx_extra}\
         \x20   `AF_AXIL_PORTS\n\
         \x20   input  wire         gt_refclk_{inst}_p,\n\
         \x20   input  wire         gt_refclk_{inst}_n,\n\
         \x20   input  wire [3:0]   gt_rxp_in,\n\
         \x20   input  wire [3:0]   gt_rxn_in,\n\
         \x20   output wire [3:0]   gt_txp_out,\n\
         \x20   output wire [3:0]   gt_txn_out\n\
         );\n\
         {unused}\
         \x20 aurora_flow #(\n\
         {overrides}\n\
         \x20 ) u_kernel (\n\
         \x20     .ap_clk(ap_clk), .ap_rst_n(ap_rst_n), .init_clk(init_clk),\n\
         \x20     .tx_axis_tdata(tx_axis_tdata), .tx_axis_tvalid(tx_axis_tvalid),\n\
         \x20     .tx_axis_tready(tx_axis_tready), {tx_conn}\n\
         \x20     .rx_axis_tdata(rx_axis_tdata), .rx_axis_tvalid(rx_axis_tvalid),\n\
         \x20     .rx_axis_tready(rx_axis_tready), {rx_conn}\n\
         \x20     `AF_AXIL_CONNECT\n\
         \x20     .gt_refclk_p(gt_refclk_{inst}_p), .gt_refclk_n(gt_refclk_{inst}_n),\n\
         \x20     .gt_rxp_in(gt_rxp_in), .gt_rxn_in(gt_rxn_in),\n\
         \x20     .gt_txp_out(gt_txp_out), .gt_txn_out(gt_txn_out)\n\
         \x20 );\n\
         endmodule\n"
    )
}

/// kernel.xml: the kernel as Vitis sees it (ap_ctrl_none, the control port, two streams).
pub fn kernel_xml(d: &KernelDesc, k: &KernelParams, by_rtl: &BTreeMap<String, i64>) -> String {
    let n = &k.kernel_name;
    let bits = 8 * by_rtl["FIFO_WIDTH"];
    let ctype = format!("stream&lt;qdma_axis&lt;{bits},0,0,0&gt;&gt;&amp;");
    let (port, range) = (&d.kernel.axilite_port, d.kernel.axilite_range);
    let data = d.kernel.axilite_data_width();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <root versionMajor=\"1\" versionMinor=\"6\">\n\
         \x20 <kernel name=\"{n}\" language=\"ip_c\" vlnv=\"xilinx.com:user:{n}:1.0\" attributes=\"\" preferredWorkGroupSizeMultiple=\"0\" workGroupSize=\"1\" interrupt=\"false\" hwControlProtocol=\"{}\">\n\
         \x20   <ports>\n\
         \x20     <port name=\"{port}\" mode=\"slave\" range=\"{range:#x}\" dataWidth=\"{data}\" portType=\"addressable\" base=\"0x0\"/>\n\
         \x20     <port name=\"tx_axis\" mode=\"read_only\" dataWidth=\"{bits}\" portType=\"stream\"/>\n\
         \x20     <port name=\"rx_axis\" mode=\"write_only\" dataWidth=\"{bits}\" portType=\"stream\"/>\n\
         \x20   </ports>\n\
         \x20   <args>\n\
         \x20     <arg name=\"tx_axis\" addressQualifier=\"4\" id=\"0\" port=\"tx_axis\" size=\"0x0\" offset=\"0x0\" hostOffset=\"0x0\" hostSize=\"0x0\" type=\"{ctype}\"/>\n\
         \x20     <arg name=\"rx_axis\" addressQualifier=\"4\" id=\"1\" port=\"rx_axis\" size=\"0x0\" offset=\"0x0\" hostOffset=\"0x0\" hostSize=\"0x0\" type=\"{ctype}\"/>\n\
         \x20   </args>\n\
         \x20 </kernel>\n\
         </root>\n",
        d.kernel.control
    )
}

/// Clock-domain crossings of aurora_flow.sv, by instance name below the top's `u_kernel`.
const CDC_FIFOS: [&str; 2] = ["u_tx_fifo", "u_rx_fifo"]; // af_async_fifo
const CDC_BUNDLES: [&str; 1] = ["u_to_ap"]; // af_cdc_bundle
const CDC_SYNCS: [&str; 1] = ["u_cnt_rst_sync"]; // af_sync of a single level
const CDC_RESETS: [&str; 5] = [
    "u_rst_ap",
    "u_rst_ap_core",
    "u_rst_user",
    "u_rst_user_core",
    "u_ip_reset/u_sync",
];

/// The XDC: the reference clock and a bound on every crossing. The user clock is the fastest
/// clock on every crossing, so one of its periods bounds each data path and skew.
pub fn xdc(d: &KernelDesc, k: &KernelParams) -> String {
    let i = k.instance;
    let t = format!("{:.3}", 1000.0 / d.link.user_clk_mhz());
    let refclk_ns = format!("{:.3}", 1000.0 / d.link.refclk_mhz);
    let cells =
        |pattern: &str| format!("[get_cells -hier -filter {{NAME =~ */u_kernel/{pattern}}}]");
    let mut lines = vec![
        format!(
            "# Generated: QSFP{i} reference clock, {} MHz",
            d.link.refclk_mhz
        ),
        format!(
            "create_clock -name gt_refclk{i}_in -period {refclk_ns} [get_ports gt_refclk_{i}_p]"
        ),
        "# Clock-domain crossings, each bounded on its own as the XPM CDC macros do (UG974): a"
            .into(),
        "# datapath-only delay limit and, for Gray-coded pointers, a limit on the skew between"
            .into(),
        format!(
            "# their bits (one period of the fastest clock, {t} ns). No set_clock_groups between"
        ),
        "# the kernel's clocks: clock groups take precedence over set_max_delay (UG903), so they"
            .into(),
        "# would leave the data paths unbounded (UG906 TIMING-24). Level and reset synchronizers"
            .into(),
        "# are cut at their first stage (as xpm_cdc_single / xpm_cdc_async_rst).".into(),
    ];
    for f in CDC_FIFOS {
        for (src, dst) in [
            ("wgray_reg[*]", "u_sync_wgray/meta_reg[*]"),
            ("rgray_reg[*]", "u_sync_rgray/meta_reg[*]"),
        ] {
            let (a, b) = (cells(&format!("{f}/{src}")), cells(&format!("{f}/{dst}")));
            lines.push(format!(
                "set_max_delay -datapath_only -from {a} -to {b} {t}"
            ));
            lines.push(format!("set_bus_skew -from {a} -to {b} {t}"));
        }
        // the memory is written on one clock and read on the other
        lines.push(format!(
            "set_max_delay -datapath_only -from {} -to {} {t}",
            cells(&format!("{f}/mem_reg*")),
            cells(&format!("{f}/m_data_reg[*]"))
        ));
    }
    for b in CDC_BUNDLES {
        // the snapshot is held stable until the destination has captured it
        for (src, dst) in [
            ("hold_reg[*]", "dst_data_reg[*]"),
            ("req_reg", "u_req/meta_reg[*]"),
            ("seen_reg", "u_ack/meta_reg[*]"),
        ] {
            lines.push(format!(
                "set_max_delay -datapath_only -from {} -to {} {t}",
                cells(&format!("{b}/{src}")),
                cells(&format!("{b}/{dst}"))
            ));
        }
    }
    for s in CDC_SYNCS {
        lines.push(format!(
            "set_false_path -to {}",
            cells(&format!("{s}/meta_reg[*]"))
        ));
    }
    for r in CDC_RESETS {
        // asynchronous assertion: the synchronizer's clear pins are not timed; release is
        lines.push(format!(
            "set_false_path -to [get_pins -hier -filter {{NAME =~ */u_kernel/{r}/stages_reg[*]/CLR}}]"
        ));
    }
    lines.join("\n") + "\n"
}

fn tcl_list(items: &[String]) -> String {
    let words: Vec<_> = items.iter().map(|x| format!("{{{x}}}")).collect();
    format!("[list {}]", words.join(" "))
}

/// params.tcl: what create_aurora_ip.tcl and pack_kernel.tcl read. Paths are relative to the
/// working directory unless `absolute` (build_xo.sh runs Vivado in a scratch directory).
pub fn params_tcl(d: &KernelDesc, k: &KernelParams, out: &Path, absolute: bool) -> Result<String> {
    let path = |f: &Path| -> Result<String> {
        let p: PathBuf = if absolute {
            std::path::absolute(f)?
        } else {
            f.to_path_buf()
        };
        Ok(p.display().to_string())
    };
    let rtl: Vec<String> = k
        .rtl_files
        .iter()
        .map(|f| path(Path::new(f)))
        .collect::<Result<_>>()?;
    let value = |attr: &str| {
        k.values.get(attr).map(|v| match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    let l = &d.link;
    let flag = |attr: &str| value(attr).is_some_and(|v| v != "0" && v != "false");
    let wire_frames = flag("use_framing") || flag("stream_frame_words");
    let lines = [
        "# Generated by `aurora-flow-desc package` from the kernel's parameters".to_string(),
        format!("set AF(kernel_name) {{{}}}", k.kernel_name),
        format!("set AF(instance) {}", k.instance),
        format!(
            "set AF(use_framing) {}",
            value("use_framing").unwrap_or_default()
        ),
        // the core in framing mode: the user's frames or the stream's own (stream_frame_words)
        format!("set AF(wire_frames) {}", u8::from(wire_frames)),
        format!("set AF(part) {{{}}}", k.part),
        format!("set AF(aurora_version) {{{}}}", k.aurora_version),
        format!(
            "set AF(ins_loss_nyq) {}",
            value("ins_loss_nyq").unwrap_or_default()
        ),
        format!(
            "set AF(rx_eq_mode) {{{}}}",
            value("rx_eq_mode").unwrap_or_default()
        ),
        format!("set AF(lanes) {}", l.lanes),
        format!("set AF(line_rate_gbps) {{{}}}", l.line_rate_gbps),
        format!("set AF(refclk_mhz) {{{}}}", l.refclk_mhz),
        format!("set AF(init_clk_mhz) {{{}}}", l.init_clk_mhz),
        format!("set AF(rtl_files) {}", tcl_list(&rtl)),
        format!(
            "set AF(top_file) {{{}}}",
            path(&out.join(format!("{}.sv", k.kernel_name)))?
        ),
        format!(
            "set AF(xdc_file) {{{}}}",
            path(&out.join(format!("{}.xdc", k.kernel_name)))?
        ),
        format!("set AF(kernel_xml) {{{}}}", path(&out.join("kernel.xml"))?),
    ];
    Ok(lines.join("\n") + "\n")
}

/// Checks the parameters (the instance against `board`'s ports when given) and writes the
/// four files into `out`.
pub fn write_package(
    d: &KernelDesc,
    params: &Path,
    board: Option<&Platform>,
    out: &Path,
    absolute: bool,
) -> Result<()> {
    let k = KernelParams::load(params)?;
    let by_rtl = resolve(d, &k, board).with_context(|| format!("{}", params.display()))?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let n = &k.kernel_name;
    crate::write_atomic(&out.join(format!("{n}.sv")), &wrapper(d, &k, &by_rtl))?;
    crate::write_atomic(&out.join(format!("{n}.xdc")), &xdc(d, &k))?;
    crate::write_atomic(&out.join("kernel.xml"), &kernel_xml(d, &k, &by_rtl))?;
    crate::write_atomic(&out.join("params.tcl"), &params_tcl(d, &k, out, absolute)?)?;
    Ok(())
}
