// Generated from hw/aurora_flow/kernel.toml by `aurora-flow-desc sv-package`; do not edit.
// //hw/aurora_flow:desc_check fails when this file and the description disagree.
package af_kernel_pkg;
  // [flow_control]
  localparam int LINK_BEAT_BYTES = 32;
  localparam int FIXED_INFLIGHT_BEATS = 128;
  localparam int BEATS_PER_METRE = 4;
  localparam int DEFAULT_CABLE_M = 30;
endpackage
