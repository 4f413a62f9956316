#!/usr/bin/env bash
# tools/bootstrap/apt.txt is generated from tools/bootstrap/tools.toml, the one tool list
# (flake.nix reads the same file): one line per `[[tool]]` with an `apt` package, in the file's
# order, its `for` as the comment. `--check` fails when the committed apt.txt differs.
# The TOML is read by nix's own `builtins.fromTOML`, the reader flake.nix uses, so both see
# the same list; nix is nix-bin of that list (`./forge` installs it).
#
#   bash tools/bootstrap/apt_txt.sh            rewrite apt.txt (atomically)
#   bash tools/bootstrap/apt_txt.sh --check    exit 1 and show the difference when stale
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
toml="$here/tools.toml"
out="$here/apt.txt"
command -v nix >/dev/null 2>&1 || {
    echo "apt_txt: nix is not installed; install nix-bin (\`apt-get install nix-bin\`)." >&2
    exit 1
}

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

# A throwaway store: reading a file needs none, but nix opens one.
export NIX_CONFIG=$'experimental-features = nix-command\nbuild-users-group =\n'
# shellcheck disable=SC2016 # a Nix expression: its ${...} are Nix's, not the shell's
if ! TOOLS_TOML="$toml" nix --store "$work/store" eval --impure --raw --expr '
  let
    tools = (builtins.fromTOML (builtins.readFile (builtins.getEnv "TOOLS_TOML"))).tool;
    withApt = builtins.filter (t: t ? apt) tools;
  in
  builtins.concatStringsSep "" ([
    "# Debian packages the simulation toolchain needs; `./forge` installs the missing ones.\n"
    "# GENERATED from tools/bootstrap/tools.toml by tools/bootstrap/apt_txt.sh: edit that file\n"
    "# (it also lists the nixpkgs attribute of each). One package per line, what needs it after #.\n"
  ] ++ map (t: "${t.apt}  # ${t.for}\n") withApt)
' >"$work/apt.txt" 2>"$work/err"; then
    echo "apt_txt: cannot read $toml:" >&2
    cat "$work/err" >&2
    exit 1
fi

if [ "${1:-}" = --check ]; then
    if ! diff -u "$out" "$work/apt.txt" >&2; then
        echo "apt_txt: tools/bootstrap/apt.txt is not what tools/bootstrap/tools.toml says;" \
            "run \`bash tools/bootstrap/apt_txt.sh\` and commit both." >&2
        exit 1
    fi
    echo "apt_txt: tools/bootstrap/apt.txt matches tools/bootstrap/tools.toml ($(grep -vc '^#' "$out") packages)"
    exit 0
fi
cp "$work/apt.txt" "$out.tmp" && mv "$out.tmp" "$out"
echo "apt_txt: wrote tools/bootstrap/apt.txt" >&2
