#!/usr/bin/env bash
# flake.nix must parse, and its `nix develop` shell must provide what the project needs
# (issue list: buck2, Rust, Verilator, Icarus, Yosys, OpenMPI, Python). The shell is evaluated
# against a stand-in nixpkgs (tools/checks/flake_eval.nix): no Nix store or network is needed.
# Nix is optional on build machines (./forge does not install it), so without
# nix-instantiate the check is skipped, loudly.
set -euo pipefail

flake=${1:-flake.nix}
if ! command -v nix-instantiate >/dev/null 2>&1; then
    echo "SKIPPED: nix-instantiate is not installed, flake.nix was not checked" \
        "(apt-get install nix-bin to check it)."
    exit 0
fi
export NIX_CONFIG=$'experimental-features = nix-command flakes\nbuild-users-group ='
if ! out=$(nix-instantiate --parse "$flake" 2>&1 >/dev/null); then
    echo "$flake does not parse:" >&2
    echo "$out" >&2
    exit 1
fi
echo "$flake parses ($(nix-instantiate --version))"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
flake_abs=$(cd "$(dirname "$flake")" && pwd)/$(basename "$flake")
if ! packages=$(nix-instantiate --eval --strict --readonly-mode \
    -E "import $here/flake_eval.nix { flake = import $flake_abs; }" 2>&1); then
    echo "the devShell of $flake does not evaluate:" >&2
    echo "$packages" >&2
    exit 1
fi
echo "nix develop provides: $packages"
missing=()
for want in buck2 cargo rustc verilator iverilog yosys openmpi python311; do
    case " $packages " in
        *"\"$want\""*) ;;
        *) missing+=("$want") ;;
    esac
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "the devShell of $flake lacks: ${missing[*]}" >&2
    exit 1
fi
