#!/usr/bin/env bash
# flake.nix must at least parse. Nix is optional on build machines (it is not among the
# packages ./forge installs), so without nix-instantiate the check is skipped, loudly.
set -euo pipefail

flake=${1:-flake.nix}
if ! command -v nix-instantiate >/dev/null 2>&1; then
    echo "SKIPPED: nix-instantiate is not installed, flake.nix was not checked" \
        "(apt-get install nix-bin to check it)."
    exit 0
fi
# No store, daemon or network is needed to parse; keep nix from looking for them.
export NIX_CONFIG=$'experimental-features = nix-command flakes\nbuild-users-group ='
if out=$(nix-instantiate --parse "$flake" 2>&1 >/dev/null); then
    echo "$flake parses ($(nix-instantiate --version))"
else
    echo "$flake does not parse:" >&2
    echo "$out" >&2
    exit 1
fi
