# Generated from hw/aurora_flow/kernel.toml by `aurora-flow-desc regenerate`; do not edit.
# //hw/aurora_flow:desc_check fails when this file and the description disagree.

# [flow_control]: RX headroom in link beats = (depth - prog_full) * fifo_width / link_beat_bytes
# must be >= fixed_inflight_beats + beats_per_metre * cable_m
FLOW_CONTROL = {
    "beats_per_metre": 4,
    "default_cable_m": 30,
    "fixed_inflight_beats": 128,
    "link_beat_bytes": 32,
}

def need_beats(cable_m):
    """Link beats still arriving after an XOFF over `cable_m` whole metres of fibre."""
    return FLOW_CONTROL["fixed_inflight_beats"] + FLOW_CONTROL["beats_per_metre"] * cable_m

def headroom_beats(headroom_words, fifo_width):
    """Link beats an RX FIFO holds in `headroom_words` words above prog_full."""
    return headroom_words * fifo_width // FLOW_CONTROL["link_beat_bytes"]

# [kernel] the AXI4-Lite control port (name, address bits, bytes of address space, data bits)
AXILITE = {
    "addr_width": 12,
    "name": "s_axi_control",
    "range": 4096,
    "width": 32,
}

# [link] the Aurora 64B/66B link's clocks and data cycles
LINK = {
    "cc_cycles": 8,
    "cc_period_cycles": 10000,
    "gearbox_data_cycles": 32,
    "gearbox_period_cycles": 33,
    "init_clk_mhz": "100",
    "lanes": 4,
    "line_rate_gbps": "25.78125",
    "refclk_mhz": "161.1328125",
}

# [[parameter]] per BUCK attribute: the RTL name, the default (None: derived, the rule
# computes it), the unit and the limits of the value itself
PARAMETERS = {
    "cable_m": {
        "default": None,
        "max": 2000,
        "min": 0,
        "power_of_two": False,
        "rtl": "CABLE_M",
        "unit": "m",
    },
    "drain_axi_on_reset": {
        "default": False,
        "power_of_two": False,
        "rtl": "DRAIN_AXI_ON_RESET",
        "unit": "",
    },
    "fifo_width": {
        "allowed": [32, 64],
        "default": 64,
        "power_of_two": False,
        "rtl": "FIFO_WIDTH",
        "unit": "bytes",
    },
    "ins_loss_nyq": {
        "default": 8,
        "max": 31,
        "min": 0,
        "power_of_two": False,
        "rtl": "INS_LOSS_NYQ",
        "unit": "dB",
    },
    "rx_eq_mode": {
        "default": "LPM",
        "power_of_two": False,
        "rtl": "RX_EQ_MODE",
        "unit": "",
        "values": {"AUTO": 0, "DFE": 2, "LPM": 1},
    },
    "rx_fifo_prog_empty": {
        "default": None,
        "power_of_two": False,
        "rtl": "RX_FIFO_PROG_EMPTY",
        "unit": "words",
    },
    "rx_fifo_prog_full": {
        "default": None,
        "power_of_two": False,
        "rtl": "RX_FIFO_PROG_FULL",
        "unit": "words",
    },
    "rx_fifo_size": {
        "default": 65536,
        "max_words": 16384,
        "min_words": 16,
        "power_of_two": True,
        "rtl": "RX_FIFO_SIZE",
        "unit": "bytes",
    },
    "sim_ip_reset_cycles": {
        "default": 300,
        "power_of_two": False,
        "rtl": "IP_RESET_CYCLES",
        "unit": "init_clk cycles",
    },
    "stream_frame_words": {
        "default": 0,
        "max": 65536,
        "min": 0,
        "power_of_two": False,
        "rtl": "STREAM_FRAME_WORDS",
        "unit": "words",
    },
    "tx_fifo_size": {
        "default": 8192,
        "max_words": 16384,
        "min_words": 16,
        "power_of_two": True,
        "rtl": "TX_FIFO_SIZE",
        "unit": "bytes",
    },
    "use_framing": {
        "default": False,
        "power_of_two": False,
        "rtl": "USE_FRAMING",
        "unit": "",
    },
    "xon_on_empty": {
        "default": True,
        "power_of_two": False,
        "rtl": "XON_ON_EMPTY",
        "unit": "",
    },
}
