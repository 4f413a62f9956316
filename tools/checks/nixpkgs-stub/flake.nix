# A stand-in for nixpkgs, so tools/checks/flake_check.sh can run `nix flake check` offline (no
# Nix binary cache is reachable from the build machines). Its packages are exactly the
# attributes tools/bootstrap/tools.toml records as confirmed in nixpkgs (`[nixpkgs.attr]`;
# flake_check.sh copies that file next to this one): a package flake.nix names but the list
# does not fails the check with "attribute ... missing". Packages are derivations that are
# never built (the check evaluates, it does not build), named by their attribute, so the
# check can read the shell's inputs back by name. Besides them only what flake.nix uses of
# nixpkgs' library: mkShell, stdenv.cc.cc.lib and lib.{genAttrs,makeLibraryPath,getLib,getDev}.
{
  outputs = { self }:
    let
      available = builtins.attrNames (builtins.fromTOML (builtins.readFile ./tools.toml)).nixpkgs.attr;
      packagesFor = system:
        let
          stub = name: derivation { inherit name system; builder = "/bin/sh"; };
        in
        builtins.listToAttrs (map (n: { name = n; value = stub n; }) available) // {
          # Every argument becomes the derivation's environment, as in nixpkgs' mkShell, so
          # `nix flake check` forces each package (an undefined one fails it).
          mkShell = args: derivation ({
            name = "shell";
            inherit system;
            builder = "/bin/sh";
            packages = [ ];
            buildInputs = [ ];
          } // args);
          stdenv.cc.cc.lib = stub "libstdc++";
          lib = {
            makeLibraryPath = ps: builtins.concatStringsSep ":" (map (p: "${p}/lib") ps);
            # nixpkgs' getLib/getDev fall back to the default output too.
            getLib = p: p.lib or p;
            getDev = p: p.dev or p;
          };
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
