# Generate the Aurora 64B/66B core behind aurora_ip_if (vitis toolchain).
# Usage: vivado -mode batch -source create_aurora_ip.tcl -tclargs PARAMS_TCL OUT_DIR
# PARAMS_TCL is written by `aurora-flow-desc package` from the kernel's parameters;
# lanes, line rate and clocks are kernel.toml's [link]. As the public AuroraFlow
# core: immediate NFC, streaming or framing with CRC, native DRP, shared logic in
# the core.
if {[llength $argv] != 2} {
  error "usage: create_aurora_ip.tcl PARAMS_TCL OUT_DIR"
}
lassign $argv params_tcl out_dir
source $params_tcl

create_project -in_memory -part $AF(part)
file mkdir $out_dir
create_ip -name aurora_64b66b -vendor xilinx.com -library ip -version $AF(aurora_version) \
  -module_name aurora_64b66b_0 -dir $out_dir
set_property -dict [list \
  CONFIG.C_AURORA_LANES $AF(lanes) \
  CONFIG.C_LINE_RATE $AF(line_rate_gbps) \
  CONFIG.C_REFCLK_FREQUENCY $AF(refclk_mhz) \
  CONFIG.C_INIT_CLK $AF(init_clk_mhz) \
  CONFIG.INS_LOSS_NYQ $AF(ins_loss_nyq) \
  CONFIG.RX_EQ_MODE $AF(rx_eq_mode) \
  CONFIG.flow_mode {Immediate_NFC} \
  CONFIG.interface_mode [expr {$AF(wire_frames) ? "Framing" : "Streaming"}] \
  CONFIG.crc_mode [expr {$AF(wire_frames) ? "true" : "false"}] \
  CONFIG.drp_mode {Native} \
  CONFIG.SupportLevel {1} \
] [get_ips aurora_64b66b_0]
generate_target all [get_ips aurora_64b66b_0]
puts "aurora_flow: generated aurora_64b66b_0 in $out_dir"
