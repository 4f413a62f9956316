`timescale 1ps / 1ps
`include "af_axil_ports.svh"
// AXI4-Lite slave (the control port kernel.toml describes, af_axil_ports.svh)
// for the AuroraFlow register map. A read returns `rd_data`, which the kernel
// decodes combinationally from the word address `rd_addr` (the offsets of
// af_kernel_pkg, generated from kernel.toml). The two writable registers
// (CORE_RESET, COUNTER_RESET, bit 0) are levels that read back what was
// written: the host writes 1 and then 0. One transaction at a time; OKAY
// responses.
module af_axil_regs (
    input  logic        clk,
    input  logic        rst_n,
    `AF_AXIL_PORTS
    output logic [11:0] rd_addr,
    input  logic [31:0] rd_data,
    output logic        core_reset,
    output logic        counter_reset
);

  logic do_write;
  assign do_write      = s_axi_control_awvalid && s_axi_control_wvalid && !s_axi_control_bvalid;
  assign s_axi_control_awready = do_write;
  assign s_axi_control_wready  = do_write;
  assign s_axi_control_bresp   = 2'b00;
  assign s_axi_control_rresp   = 2'b00;
  assign s_axi_control_arready = !s_axi_control_rvalid;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      s_axi_control_bvalid  <= 1'b0;
      core_reset    <= 1'b0;
      counter_reset <= 1'b0;
    end else begin
      if (s_axi_control_bvalid && s_axi_control_bready) s_axi_control_bvalid <= 1'b0;
      if (do_write) begin
        s_axi_control_bvalid <= 1'b1;
        if (s_axi_control_wstrb[0] && s_axi_control_awaddr == af_kernel_pkg::REG_CORE_RESET) core_reset <= s_axi_control_wdata[0];
        if (s_axi_control_wstrb[0] && s_axi_control_awaddr == af_kernel_pkg::REG_COUNTER_RESET)
          counter_reset <= s_axi_control_wdata[0];
      end
    end
  end

  // only bit 0 of the write data and byte lane 0 matter; reads are word aligned
  /* verilator lint_off UNUSEDSIGNAL */
  logic unused_ok;
  /* verilator lint_on UNUSEDSIGNAL */
  assign unused_ok = ^{s_axi_control_wdata[31:1], s_axi_control_wstrb[3:1], s_axi_control_araddr[1:0]};

  assign rd_addr = {s_axi_control_araddr[11:2], 2'b00};

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      s_axi_control_rvalid <= 1'b0;
      s_axi_control_rdata  <= '0;
    end else begin
      if (s_axi_control_rvalid && s_axi_control_rready) s_axi_control_rvalid <= 1'b0;
      if (s_axi_control_arvalid && s_axi_control_arready) begin
        s_axi_control_rvalid <= 1'b1;
        s_axi_control_rdata  <= rd_data;
      end
    end
  end
endmodule
