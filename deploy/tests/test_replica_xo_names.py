"""The FINN kernels replica_xo.py builds under vitis for each card of
//deploy:mobilenet_2fpga_replicas are exactly the FINN kernels deploy-tool's link step
puts on that card (its simulated device description, the same under sim and vitis): the
kernel names are stated in deploy/tool/src/replicas.rs and restated in
finn/flow/replica_xo.py, and this test keeps the two equal.

Environment: SLICE_<dev> (the card's plan slice), SIM_<dev> (its sim description).
"""

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "finn", "flow"))

import replica_xo  # noqa: E402


def test_the_xo_names_are_the_link_steps_finn_kernels():
    for dev in ("fpga0", "fpga1"):
        with open(os.environ[f"SLICE_{dev}"]) as f:
            plan = json.load(f)
        with open(os.environ[f"SIM_{dev}"]) as f:
            sim = json.load(f)
        want = sorted({k.get("payload", k["kernel"]) for k in sim["kernels"]
                       if k["kernel"].startswith("finn_")})
        got = sorted(name for name, _, _ in replica_xo.kernels(plan, dev))
        assert want and got == want, dev
