`timescale 1ps / 1ps
// The generated Aurora 64B/66B core as a black box (its ports only), for lint and
// area estimates of the kernel without the core itself.
`include "aurora_core_ports.svh"
/* verilator lint_off LITENDIAN */
/* verilator lint_off UNDRIVEN */
/* verilator lint_off UNUSEDSIGNAL */
(* blackbox *)
module aurora_64b66b_0 (
    `AURORA_CORE_PORTS
);
endmodule
