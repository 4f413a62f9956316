// The public AuroraFlow kernel's byte lanes, stated as a table (pc2/AuroraFlow at commit
// 957c8bb, read from its sources):
//  - rtl/aurora_flow_io.v: a 64 B stream word goes through the AXI4-Stream Data Width
//    Converter (axis_dwidth_converter 1.1, tcl/create_axis_dwidth_converter_ip.tcl) to 32 B;
//    the converter sends the least significant bytes first (PG085, AXI4-Stream Infrastructure IP Suite, data width converter), so stream
//    bytes 0..31 form the first 32 B beat and bytes 32..63 the second;
//  - rtl/aurora_flow.v.template.v: the 32 B beat `s_axi_tx_tdata_u[255:0]` and
//    `s_axi_tx_tkeep_u[31:0]` meet the core's `s_axi_tx_tdata[0:255]` and
//    `s_axi_tx_tkeep[0:31]` (PG074 numbering, byte 0 = bits [0:7], sent first on lane 0),
//    connected by position.
// Entry B is where stream byte B (tdata[8B+7:8B], qualified by tkeep[B]) lands: core beat
// PUBLIC_BEAT[B] of the word, core byte PUBLIC_CORE_BYTE[B] (bits [8k:8k+7] of [0:255], value
// unchanged), core keep bit PUBLIC_CORE_BYTE[B] of [0:31]. At 32 B only entries 0..31 apply.
localparam int PUBLIC_BEAT[64] = '{
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
};
localparam int PUBLIC_CORE_BYTE[64] = '{
  31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16,
  15, 14, 13, 12, 11, 10,  9,  8,  7,  6,  5,  4,  3,  2,  1,  0,
  31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16,
  15, 14, 13, 12, 11, 10,  9,  8,  7,  6,  5,  4,  3,  2,  1,  0
};
