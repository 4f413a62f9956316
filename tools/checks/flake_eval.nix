# Evaluates flake.nix's `nix develop` shell against a stand-in nixpkgs (no store, no network)
# and returns the names of the shell's packages, so tools/checks/flake_parses.sh can check the
# shell provides what the project needs. Names the flake uses but the stand-in lacks fail the
# evaluation with "attribute ... missing".
{ flake }:
let
  available = [
    "buck2"
    "cargo"
    "ccache"
    "clippy"
    "iverilog"
    "jq"
    "openmpi"
    "pkg-config"
    "python311"
    "rustc"
    "rustfmt"
    "verilator"
    "yosys"
    "zlib"
  ];
  stub = name: { inherit name; outPath = "/nix/store/stub-${name}"; type = "derivation"; };
  pkgs = builtins.listToAttrs (map (n: { name = n; value = stub n; }) available) // {
    mkShell = args: args // { type = "derivation"; name = "shell"; };
    stdenv.cc.cc.lib = stub "libstdc++";
    lib.makeLibraryPath = ps: builtins.concatStringsSep ":" (map (p: "${p.outPath}/lib") ps);
  };
  nixpkgs = {
    lib.genAttrs = names: f: builtins.listToAttrs (map (n: { name = n; value = f n; }) names);
    legacyPackages = { x86_64-linux = pkgs; aarch64-linux = pkgs; };
  };
  shell = (flake.outputs { self = { }; inherit nixpkgs; }).devShells.x86_64-linux.default;
in
map (p: p.name) shell.packages
