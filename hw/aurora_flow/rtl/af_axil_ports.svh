// Generated from hw/aurora_flow/kernel.toml by `aurora-flow-desc regenerate`; do not edit.
// //hw/aurora_flow:desc_check fails when this file and the description disagree.
// The AXI4-Lite control port `s_axi_control` ([kernel] axilite_signals): `AF_AXIL_PORTS declares
// it, `AF_AXIL_CONNECT connects an instance's port to the same-named signals.
`ifndef AF_AXIL_PORTS_SVH
`define AF_AXIL_PORTS_SVH
`define AF_AXIL_PORTS \
    input  logic [11:0] s_axi_control_awaddr, \
    input  logic        s_axi_control_awvalid, \
    output logic        s_axi_control_awready, \
    input  logic [31:0] s_axi_control_wdata, \
    input  logic [3:0]  s_axi_control_wstrb, \
    input  logic        s_axi_control_wvalid, \
    output logic        s_axi_control_wready, \
    output logic [1:0]  s_axi_control_bresp, \
    output logic        s_axi_control_bvalid, \
    input  logic        s_axi_control_bready, \
    input  logic [11:0] s_axi_control_araddr, \
    input  logic        s_axi_control_arvalid, \
    output logic        s_axi_control_arready, \
    output logic [31:0] s_axi_control_rdata, \
    output logic [1:0]  s_axi_control_rresp, \
    output logic        s_axi_control_rvalid, \
    input  logic        s_axi_control_rready, \

`define AF_AXIL_CONNECT \
    .s_axi_control_awaddr(s_axi_control_awaddr), \
    .s_axi_control_awvalid(s_axi_control_awvalid), \
    .s_axi_control_awready(s_axi_control_awready), \
    .s_axi_control_wdata(s_axi_control_wdata), \
    .s_axi_control_wstrb(s_axi_control_wstrb), \
    .s_axi_control_wvalid(s_axi_control_wvalid), \
    .s_axi_control_wready(s_axi_control_wready), \
    .s_axi_control_bresp(s_axi_control_bresp), \
    .s_axi_control_bvalid(s_axi_control_bvalid), \
    .s_axi_control_bready(s_axi_control_bready), \
    .s_axi_control_araddr(s_axi_control_araddr), \
    .s_axi_control_arvalid(s_axi_control_arvalid), \
    .s_axi_control_arready(s_axi_control_arready), \
    .s_axi_control_rdata(s_axi_control_rdata), \
    .s_axi_control_rresp(s_axi_control_rresp), \
    .s_axi_control_rvalid(s_axi_control_rvalid), \
    .s_axi_control_rready(s_axi_control_rready), \

`endif
