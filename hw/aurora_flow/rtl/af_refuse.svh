// `AF_REFUSE(("format", args...)): stop elaboration of an illegal configuration, with the
// formatted message, in every tool the kernel meets. Use it as the only item of a generate
// block whose condition is the illegal case.
//  - Vivado, Verilator: $fatal. Verilator 5.006 reports an elaboration-time $fatal as the
//    warning USERFATAL, so rules/verilator.bzl passes -Werror-USERFATAL after -Wno-fatal.
//    A flow that lets the warning through (-Wno-fatal alone, or a simulator that downgrades
//    elaboration tasks) still builds the block, and its `initial $fatal` stops the model at
//    time 0 with the same message, before any data moves.
//  - Yosys 0.23 prints an elaboration task's first argument as the message, unformatted, and
//    ignores the rest: it gets the string already formatted.
//  - Icarus Verilog 11 has no elaboration tasks: a reference to an undeclared net fails
//    elaboration, and the error names the generate block (`g_err_<what>`) it sits in.
`ifndef AF_REFUSE_SVH
`define AF_REFUSE_SVH
`ifdef YOSYS
`define AF_REFUSE(MSG) $fatal($sformatf MSG);
`elsif __ICARUS__
`define AF_REFUSE(MSG) wire refused = aurora_flow_refuses_these_parameters;
`else
`define AF_REFUSE(MSG) $fatal(1, $sformatf MSG); initial $fatal(1, "%s", $sformatf MSG);
`endif
`endif
