{
  description = "AuroraForge: a multi-FPGA deployment as one reproducible, cached Buck2 build graph";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" ];
      forAllSystems = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
    in
    {
      # `nix develop`: upstream buck2 plus every open-source tool of the `sim` toolchain.
      # The AMD tools (Vivado, Vitis, XRT) cannot be packaged: they come from a local install
      # named by XILINX_VITIS / XILINX_VIVADO / XILINX_XRT, and `-c fpga.toolchain=vitis`
      # selects them.
      devShells = forAllSystems (pkgs: {
        default = pkgs.mkShell {
          packages = with pkgs; [
            buck2
            # Rust: the forge engine, the host driver and the rule helpers.
            cargo
            rustc
            rustfmt
            clippy
            # RTL simulation and synthesis estimates.
            verilator
            iverilog
            yosys
            ccache
            # Host driver: MPI ranks, one per FPGA.
            openmpi
            pkg-config
            # FINN and the rule helpers; FINN itself is installed into .venv/finn (see below).
            python311
            jq
            # The style checks (rules/style.bzl): shellcheck, and node for npm, which installs
            # the pinned buildifier into .node (see below); ruff comes into .venv/ruff.
            shellcheck
            nodejs
          ];

          # Wheels from PyPI (numpy, onnxruntime) expect the usual shared libraries.
          LD_LIBRARY_PATH = pkgs.lib.makeLibraryPath [ pkgs.stdenv.cc.cc.lib pkgs.zlib ];

          shellHook = ''
            if [ -n "''${XILINX_VITIS:-}" ] && [ -f "$XILINX_VITIS/settings64.sh" ]; then
              source "$XILINX_VITIS/settings64.sh"
            fi
            if [ -n "''${XILINX_VIVADO:-}" ] && [ -f "$XILINX_VIVADO/settings64.sh" ]; then
              source "$XILINX_VIVADO/settings64.sh"
            fi
            if [ -n "''${XILINX_XRT:-}" ] && [ -f "$XILINX_XRT/setup.sh" ]; then
              source "$XILINX_XRT/setup.sh"
            fi
            # The Python environments the rules use (.venv/<name>) and the npm packages
            # (.node), as ./forge makes them.
            if [ -f tools/bootstrap/bootstrap.sh ]; then
              source tools/bootstrap/bootstrap.sh
              FORGE_PYTHON=python3 forge_bootstrap_python "$PWD" || echo "forge: Python environments not ready (see above)" >&2
              forge_bootstrap_npm "$PWD" || echo "forge: npm packages (buildifier) not ready (see above)" >&2
            fi
            echo "AuroraForge shell: buck2 build //... and buck2 test //... (sim toolchain);" >&2
            echo "  with XILINX_VITIS set: buck2 build -c fpga.toolchain=vitis //deploy:mobilenet_2fpga" >&2
          '';
        };
      });
    };
}
