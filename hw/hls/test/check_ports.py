"""The port list a kernel's C-simulation library reports (af_kernel_ports(), derived from the
compiled C++ types) equals the ports of its KernelInfo (kernel.json, derived by hls_kernel
from the BUCK file), and so do the arguments (af_kernel_args() against params.args). Loads each library with ctypes (dlopen), parses both with Python's json.
Usage: check_ports.py NAME=<lib.so>=<kernel.json>...
"""

import ctypes
import json
import os
import sys

ABI_VERSION = 1  # AF_SIM_ABI_VERSION of hw/hls/include/af_sim_abi.h


def main():
    failed = 0
    if len(sys.argv) < 2:
        print("usage: check_ports.py NAME=<lib.so>=<kernel.json>...", file=sys.stderr)
        return 2
    for spec in sys.argv[1:]:
        name, lib_path, desc_path = spec.split("=", 2)
        lib = ctypes.CDLL(os.path.abspath(lib_path))
        lib.af_kernel_abi_version.restype = ctypes.c_uint32
        lib.af_kernel_ports.restype = ctypes.c_char_p
        with open(desc_path) as f:
            desc = json.load(f)
        problems = []
        if lib.af_kernel_abi_version() != ABI_VERSION:
            problems.append("ABI version {}".format(lib.af_kernel_abi_version()))
        so_ports = json.loads(lib.af_kernel_ports().decode())
        if so_ports != desc["ports"]:
            problems.append("ports differ:\n  library:     {}\n  KernelInfo:  {}".format(so_ports, desc["ports"]))
        lib.af_kernel_args.restype = ctypes.c_char_p
        so_args = json.loads(lib.af_kernel_args().decode())
        # the library reports axis widths as whole-byte TDATA, like the ports
        desc_args = [
            {"name": a["name"], "kind": a["kind"], "width": 8 * ((a["width"] + 7) // 8) if a["kind"] == "stream" else a["width"]}
            for a in desc["params"]["args"]
        ]
        if so_args != desc_args:
            problems.append("arguments differ:\n  library:     {}\n  KernelInfo:  {}".format(so_args, desc_args))
        if desc["name"] != name or desc["kind"] != "hls" or desc["toolchain"] != "sim":
            problems.append("kernel.json names {} / {} / {}".format(desc["name"], desc["kind"], desc["toolchain"]))
        if os.path.normpath(desc["model"]) != os.path.normpath(lib_path):
            problems.append("kernel.json model {} is not {}".format(desc["model"], lib_path))
        if problems:
            failed += 1
            print("FAIL {}: {}".format(name, "; ".join(problems)), file=sys.stderr)
        else:
            print("{}: {} ports agree ({})".format(name, len(so_ports), ", ".join(p["name"] for p in so_ports)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
