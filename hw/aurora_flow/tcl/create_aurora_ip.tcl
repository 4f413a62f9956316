# Generate the Aurora 64B/66B core behind aurora_ip_if (vitis toolchain).
# Usage: vivado -mode batch -source create_aurora_ip.tcl -tclargs PARAMS_TCL OUT_DIR
# PARAMS_TCL is written by render_kernel.py from the kernel's JSON parameters.
# Facts (PG074 / public AuroraFlow): 4 lanes x 25.78125 Gbps, 161.1328125 MHz
# reference clock, 100 MHz init clock, immediate NFC, streaming or framing
# with CRC, native DRP, shared logic in the core.
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
  CONFIG.C_AURORA_LANES {4} \
  CONFIG.C_LINE_RATE {25.78125} \
  CONFIG.C_REFCLK_FREQUENCY {161.1328125} \
  CONFIG.C_INIT_CLK {100} \
  CONFIG.INS_LOSS_NYQ $AF(ins_loss_nyq) \
  CONFIG.RX_EQ_MODE $AF(rx_eq_mode) \
  CONFIG.flow_mode {Immediate_NFC} \
  CONFIG.interface_mode [expr {$AF(use_framing) ? "Framing" : "Streaming"}] \
  CONFIG.crc_mode [expr {$AF(use_framing) ? "true" : "false"}] \
  CONFIG.drp_mode {Native} \
  CONFIG.SupportLevel {1} \
] [get_ips aurora_64b66b_0]
generate_target all [get_ips aurora_64b66b_0]
puts "aurora_flow: generated aurora_64b66b_0 in $out_dir"
