#!/usr/bin/env bash
# Runs cargo inside a build action (cwd = project root or forge's sandbox mirroring it).
#
#   cargo_action.sh build      --cargo C --profile P --target-dir D --package PKG --bin BIN --out FILE
#   cargo_action.sh test-build --cargo C --profile P --target-dir D --package PKG --out-dir DIR
#
# The target dir is shared by every cargo action (and survives between builds) so cargo's own
# incremental compilation applies; it is resolved to its real path so that paths cargo bakes
# into test executables (CARGO_BIN_EXE_*) still exist after the action.
set -euo pipefail

die() {
    echo "cargo_action: $*" >&2
    exit 3
}

mode=${1:-}
shift || true
cargo=cargo profile=release target_dir="" package="" bin="" out="" out_dir=""
while [ $# -gt 0 ]; do
    case "$1" in
        --cargo) cargo=$2 ;;
        --profile) profile=$2 ;;
        --target-dir) target_dir=$2 ;;
        --package) package=$2 ;;
        --bin) bin=$2 ;;
        --out) out=$2 ;;
        --out-dir) out_dir=$2 ;;
        *) die "unknown argument \`$1\`" ;;
    esac
    shift 2
done
[ -n "$target_dir" ] || die "--target-dir is required"
[ -n "$package" ] || die "--package is required"
[ -f Cargo.toml ] || die "no Cargo.toml in $(pwd): declare the workspace manifest as an input"

# Outputs are named relative to the action's cwd; cargo runs elsewhere (below).
case "$out" in "" | /*) ;; *) out="$PWD/$out" ;; esac
case "$out_dir" in "" | /*) ;; *) out_dir="$PWD/$out_dir" ;; esac

# A passthrough path may be a dangling symlink to a directory that does not exist yet.
if [ -L "$target_dir" ] && [ ! -e "$target_dir" ]; then
    mkdir -p "$(readlink -m "$target_dir")"
else
    mkdir -p "$target_dir"
fi
CARGO_TARGET_DIR=$(cd "$target_dir" && pwd -P)
export CARGO_TARGET_DIR

# cargo bakes the crate's directory into test executables (env!("CARGO_MANIFEST_DIR")), and
# the tests read their fixtures from there after the action is gone. forge's symlink sandbox
# is deleted after the action, so cargo runs where the declared Cargo.toml really lives (the
# project root itself under buck2 and under a sandbox mounted at the project path).
workspace_root=$(dirname "$(readlink -f Cargo.toml)")
cd "$workspace_root"

case "$profile" in
    dev | test) profile_dir=debug ;;
    bench) profile_dir=release ;;
    *) profile_dir=$profile ;;
esac

log=$(mktemp)
trap 'rm -f "$log" "${messages:-}"' EXIT

# cargo's own failure message is printed first; then a hint for the one mistake that cargo
# reports obscurely inside a sandbox: a workspace member whose sources were not declared.
run_cargo() {
    local status=0
    "$cargo" "$@" 2>"$log" || status=$?
    cat "$log" >&2
    if [ "$status" -ne 0 ]; then
        if grep -q "failed to load manifest for workspace member\|failed to read .*Cargo.toml" "$log"; then
            echo "cargo_action: a member of the Cargo workspace is not among the inputs." >&2
            echo "Add its \`//<dir>:srcs\` target to \`members\` of //:cargo_workspace in the root BUCK." >&2
        elif grep -q "failed to download\|Could not resolve host\|failed to query replaced source\|download of config.json failed" "$log"; then
            echo "cargo_action: a crate is not in cargo's download cache, and actions may have no network." >&2
            echo "Run \`cargo fetch\` at the project root (./forge does it whenever Cargo.lock changes)." >&2
        elif grep -q "because --locked was passed" "$log"; then
            echo "cargo_action: Cargo.lock does not match the manifests; actions never rewrite it." >&2
            echo "Run \`cargo update --workspace\` (or any cargo build) at the project root, then rebuild." >&2
        fi
        exit 3
    fi
}

case "$mode" in
    build)
        [ -n "$bin" ] || die "--bin is required"
        [ -n "$out" ] || die "--out is required"
        run_cargo build --locked --profile "$profile" --package "$package" --bin "$bin"
        built="$CARGO_TARGET_DIR/$profile_dir/$bin"
        [ -f "$built" ] || die "cargo succeeded but \`$built\` does not exist"
        cp "$built" "$out.tmp"
        mv "$out.tmp" "$out"
        ;;
    test-build)
        [ -n "$out_dir" ] || die "--out-dir is required"
        messages=$(mktemp)
        run_cargo test --locked --profile "$profile" --package "$package" --no-run \
            --message-format=json-render-diagnostics >"$messages"
        mkdir -p "$out_dir"
        count=0
        # One JSON object per line; test harnesses are the artifacts whose *profile* says test.
        while IFS= read -r exe; do
            cp "$exe" "$out_dir/$(basename "$exe")"
            count=$((count + 1))
        done < <(grep '"reason":"compiler-artifact"' "$messages" |
            grep -E '"profile":\{[^}]*"test":true' |
            sed -n 's/.*"executable":"\([^"]*\)".*/\1/p')
        echo "cargo_action: collected $count test executable(s) of \`$package\`" >&2
        ;;
    *)
        die "unknown mode \`$mode\` (expected build or test-build)"
        ;;
esac
