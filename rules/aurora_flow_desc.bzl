# Generated from hw/aurora_flow/kernel.toml by `aurora-flow-desc bzl`; do not edit.
# //hw/aurora_flow:desc_check fails when this file and the description disagree.

# [flow_control]: RX headroom in link beats = (depth - prog_full) * fifo_width / link_beat_bytes
# must be >= fixed_inflight_beats + beats_per_metre * cable_m
FLOW_CONTROL = {
    "beats_per_metre": 4,
    "default_cable_m": 30,
    "fixed_inflight_beats": 128,
    "link_beat_bytes": 32,
}

# [kernel] the AXI4-Lite control port (name, address bits, bytes of address space, data bits)
AXILITE = {
    "addr_width": 12,
    "name": "s_axi_control",
    "range": 4096,
    "width": 32,
}
