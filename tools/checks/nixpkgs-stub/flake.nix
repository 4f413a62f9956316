# A stand-in for nixpkgs with just the attributes flake.nix uses, so tools/checks/flake_check.sh
# can run `nix flake check` offline (no Nix binary cache is reachable from the build machines).
# Packages are derivations that are never built: the check evaluates, it does not build.
# A package flake.nix names but this list lacks fails the check with "attribute ... missing".
{
  outputs = { self }:
    let
      available = [
        "buck2"
        "cargo"
        "ccache"
        "clippy"
        "iverilog"
        "jq"
        "nodejs"
        "openmpi"
        "pkg-config"
        "python311"
        "rustc"
        "rustfmt"
        "shellcheck"
        "verilator"
        "yosys"
        "zlib"
      ];
      packagesFor = system:
        let
          stub = name: derivation { inherit name system; builder = "/bin/sh"; };
        in
        builtins.listToAttrs (map (n: { name = n; value = stub n; }) available) // {
          mkShell = args: derivation ({ name = "shell"; inherit system; builder = "/bin/sh"; }
            // removeAttrs args [ "packages" "shellHook" ]) // { inherit (args) packages; };
          stdenv.cc.cc.lib = stub "libstdc++";
          lib.makeLibraryPath = ps: builtins.concatStringsSep ":" (map (p: "${p}/lib") ps);
        };
    in
    {
      lib.genAttrs = names: f: builtins.listToAttrs (map (n: { name = n; value = f n; }) names);
      legacyPackages = {
        x86_64-linux = packagesFor "x86_64-linux";
        aarch64-linux = packagesFor "aarch64-linux";
      };
    };
}
