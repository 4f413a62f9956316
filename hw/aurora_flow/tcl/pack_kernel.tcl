# Package one AuroraFlow kernel instance as a Vitis RTL kernel (.xo).
# Usage: vivado -mode batch -source pack_kernel.tcl -tclargs PARAMS_TCL IP_DIR XO_PATH WORK_DIR
# PARAMS_TCL (from `aurora-flow-desc package`) names the RTL files, the generated
# top-level wrapper, the XDC and kernel.xml; IP_DIR holds aurora_64b66b_0.
if {[llength $argv] != 4} {
  error "usage: pack_kernel.tcl PARAMS_TCL IP_DIR XO_PATH WORK_DIR"
}
lassign $argv params_tcl ip_dir xo_path work_dir
source $params_tcl
set name $AF(kernel_name)
set inst $AF(instance)

create_project -force $name $work_dir/project -part $AF(part)
add_files -norecurse $AF(rtl_files)
add_files -norecurse $AF(top_file)
# the RTL's headers (af_axil_ports.svh) are found where the RTL files are
set include_dirs {}
foreach f $AF(rtl_files) { lappend include_dirs [file dirname $f] }
set_property include_dirs [lsort -unique $include_dirs] [current_fileset]
set_property top $name [current_fileset]
read_ip [glob $ip_dir/aurora_64b66b_0/aurora_64b66b_0.xci]
add_files -fileset constrs_1 -norecurse $AF(xdc_file)
update_compile_order -fileset sources_1

ipx::package_project -root_dir $work_dir/ip -vendor xilinx.com -library user \
  -taxonomy /UserIP -import_files -set_current true
set core [ipx::current_core]

# init_clk is a plain port: v++ connects it to the platform's free-running clock
ipx::remove_bus_interface init_clk $core
ipx::associate_bus_interfaces -busif s_axi_control -clock ap_clk $core
ipx::associate_bus_interfaces -busif tx_axis -clock ap_clk $core
ipx::associate_bus_interfaces -busif rx_axis -clock ap_clk $core
ipx::associate_bus_interfaces -clock ap_clk -reset ap_rst_n $core

set gt [ipx::add_bus_interface gt_port $core]
set_property interface_mode master $gt
set_property vlnv xilinx.com:interface:gt:1.0 $gt
set_property abstraction_type_vlnv xilinx.com:interface:gt_rtl:1.0 $gt
foreach {logical physical} {GRX_P gt_rxp_in GRX_N gt_rxn_in GTX_P gt_txp_out GTX_N gt_txn_out} {
  set_property physical_name $physical [ipx::add_port_map $logical $gt]
}

set refclk [ipx::add_bus_interface gt_refclk_$inst $core]
set_property interface_mode slave $refclk
set_property vlnv xilinx.com:interface:diff_clock:1.0 $refclk
set_property abstraction_type_vlnv xilinx.com:interface:diff_clock_rtl:1.0 $refclk
set_property physical_name gt_refclk_${inst}_p [ipx::add_port_map CLK_P $refclk]
set_property physical_name gt_refclk_${inst}_n [ipx::add_port_map CLK_N $refclk]

set_property sdx_kernel true $core
set_property sdx_kernel_type rtl $core
ipx::create_xgui_files $core
ipx::update_checksums $core
ipx::check_integrity -kernel $core
ipx::save_core $core
close_project

package_xo -force -xo_path $xo_path -kernel_name $name -ctrl_protocol ap_ctrl_none \
  -ip_directory $work_dir/ip -kernel_xml $AF(kernel_xml)
puts "aurora_flow: packaged $name into $xo_path"
