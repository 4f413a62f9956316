#!/usr/bin/env bash
# flake.nix must parse, pass `nix flake check`, and its `nix develop` shell must provide what
# the project needs (buck2, Rust with rustfmt and clippy, Verilator, Icarus, Yosys, OpenMPI,
# Python, and shellcheck and node for the style checks).
#
# No Nix binary cache is reachable from the build machines, so nixpkgs is replaced by a
# stand-in flake (tools/checks/nixpkgs-stub) through `--override-input`, the store is a
# throwaway directory, and nix runs without network (`unshare -n`): the check evaluates the
# flake exactly as `nix develop` would, it does not build anything.
# nix comes from the Debian package nix-bin, which `./forge` installs (tools/bootstrap/apt.txt);
# without it this test fails.
set -euo pipefail

flake=${1:-flake.nix}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
for tool in nix nix-instantiate unshare; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "flake_check: \`$tool\` is not installed; \`./forge\` installs nix-bin from" \
            "tools/bootstrap/apt.txt (or run \`apt-get install nix-bin\`)." >&2
        exit 1
    fi
done

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export NIX_CONFIG=$'experimental-features = nix-command flakes\nflake-registry =\nbuild-users-group =\n'
export HOME="$work/home" XDG_CACHE_HOME="$work/cache"
mkdir -p "$HOME"

# Without network: as root a new network namespace is enough; otherwise a user namespace
# maps us to root inside it first.
offline=(unshare -n)
[ "$(id -u)" -eq 0 ] || offline=(unshare -r -n)
nix_offline() {
    "${offline[@]}" nix --store "$work/store" "$@"
}

if ! out=$(nix-instantiate --parse "$flake" 2>&1 >/dev/null); then
    echo "$flake does not parse:" >&2
    echo "$out" >&2
    exit 1
fi
echo "$flake parses ($(nix --version))"

# Only flake.nix is copied: `path:` of the project root would copy the whole tree.
mkdir -p "$work/flake"
cp "$flake" "$work/flake/flake.nix"
cp -r "$here/nixpkgs-stub" "$work/stub"
ref="path:$work/flake"
override=(--offline --no-write-lock-file --override-input nixpkgs "path:$work/stub")

if ! out=$(nix_offline flake check --no-build "${override[@]}" "$ref" 2>&1); then
    echo "\`nix flake check\` of $flake fails:" >&2
    echo "$out" >&2
    exit 1
fi
echo "nix flake check: ok"

failed=0
for system in x86_64-linux aarch64-linux; do
    if ! packages=$(nix_offline eval --json "${override[@]}" \
        "$ref#devShells.$system.default.packages" --apply 'map (p: p.name)' 2>"$work/err"); then
        echo "the devShell of $flake for $system does not evaluate:" >&2
        cat "$work/err" >&2
        exit 1
    fi
    echo "nix develop ($system) provides: $packages"
    missing=()
    for want in buck2 cargo rustc rustfmt clippy verilator iverilog yosys openmpi python311 shellcheck nodejs; do
        case "$packages" in
            *"\"$want\""*) ;;
            *) missing+=("$want") ;;
        esac
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "the devShell of $flake for $system lacks: ${missing[*]}" >&2
        failed=1
    fi
done
exit "$failed"
