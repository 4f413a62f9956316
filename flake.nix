{
  description = "AuroraForge: a multi-FPGA deployment as one reproducible, cached Buck2 build graph";

  # Pinned to one nixpkgs revision, the one tools/bootstrap/tools.toml records as `[nixpkgs]
  # rev`: the revision at which nixpkgs' XRT package was read, with every other attribute of
  # the shell recorded beside it (//:flake_check checks the two revisions agree). Evaluating
  # nixpkgs of that age takes Nix 2.18 or later (its lib/minver.nix); docs/limits.md.
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/91e916f2c0ea6e6816b7b39ac967e93a3d3e6f3d";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" ];
      forAllSystems = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
      # The one tool list, which tools/bootstrap/apt.txt is generated from: the shell takes the
      # nixpkgs attributes of every entry, so it cannot drift from what `./forge` installs.
      tools = builtins.fromTOML (builtins.readFile ./tools/bootstrap/tools.toml);
      entries = tools.tool ++ tools.venv;
      attrsIn = input: builtins.concatMap
        (t: if (t.shell or "packages") == input then t.nix else [ ])
        entries;
    in
    {
      # `nix develop`: every tool of tools/bootstrap/tools.toml. The AMD tools (Vivado, Vitis)
      # cannot be packaged: they come from a local install named by XILINX_VITIS /
      # XILINX_VIVADO, and `-c fpga.toolchain=vitis` selects them; a card's own XRT install
      # (XILINX_XRT) takes over from nixpkgs' xrt the same way.
      devShells = forAllSystems (pkgs: {
        default = pkgs.mkShell {
          # Tools; a library's attribute is in both lists when its binaries are needed too.
          packages = map (name: pkgs.${name}) (attrsIn "packages");
          # Libraries a build links against (their headers and -L paths).
          buildInputs = map (name: pkgs.${name}) (attrsIn "buildInputs");

          # Wheels from PyPI (numpy, onnxruntime) expect the usual shared libraries.
          LD_LIBRARY_PATH = pkgs.lib.makeLibraryPath [ pkgs.stdenv.cc.cc.lib pkgs.zlib ];
          # bindgen (the mpi crate's build) finds libclang here, not by a system path.
          LIBCLANG_PATH = "${pkgs.lib.getLib pkgs.libclang}/lib";
          # host/device/build.rs: XRT's headers, /usr/include/xrt on Debian.
          XRT_INCLUDE_DIR = "${pkgs.lib.getDev pkgs.xrt}/include/xrt";

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
