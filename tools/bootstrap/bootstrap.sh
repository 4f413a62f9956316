# shellcheck shell=bash
# Bootstrap steps of the `./forge` wrapper, sourced by it (and by test_bootstrap.sh).
#
#   apt     Debian packages named in tools/bootstrap/apt.txt (`name  # what needs it`),
#           generated from tools/bootstrap/tools.toml (tools/bootstrap/apt_txt.sh).
#   python  one venv .venv/<name> per tools/bootstrap/python/<name>/ (requirements.txt, and an
#           optional install.sh that then does the installing itself, run with $VENV set).
#   hls-types  AMD's HLS arbitrary-precision headers from the wheel pinned in
#           tools/bootstrap/hls-types/ into .venv/hls-types (hls_types.sh).
#   npm     the packages of tools/bootstrap/npm/package-lock.json in .node/node_modules
#           (`npm ci`: exactly the locked versions; buildifier for the style checks).
#   engine  target/release/forge, rebuilt with cargo when an engine source is newer. The
#           target dir and profile are those of the graph's cargo actions (rules/toolchains/cargo.bzl),
#           so the graph reuses every crate this build compiled.
#
# Each step is silent when there is nothing to do, says what it does otherwise, and on
# failure names itself and returns non-zero.
# Knobs: FORGE_SKIP_BOOTSTRAP=1 skips apt, python, hls-types and npm; FORGE_PYTHON picks the
# interpreter venvs are made from and hls-types runs pip with (default python3).

# shellcheck source=tools/bootstrap/hls_types.sh
source "$(dirname "${BASH_SOURCE[0]}")/hls_types.sh"

forge_say() {
    echo "forge: $*" >&2
}

forge_fail() {
    local step=$1
    shift
    echo "forge: bootstrap step '$step' failed: $*" >&2
    return 3
}

# Prints the package names of an apt.txt (comments and blank lines dropped).
forge_apt_wanted() {
    sed -e 's/#.*//' -e 's/[[:space:]]\+/ /g' "$1" | tr ' ' '\n' | sed '/^$/d'
}

forge_apt_missing() {
    local pkg
    for pkg in "$@"; do
        if [ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" != "install ok installed" ]; then
            echo "$pkg"
        fi
    done
}

forge_bootstrap_apt() {
    local root=$1 list="$1/tools/bootstrap/apt.txt"
    [ -f "$list" ] || return 0
    # Not a Debian system (e.g. inside `nix develop`): the tools come from elsewhere, and a
    # missing one is reported by the toolchain that needs it.
    command -v dpkg-query >/dev/null 2>&1 || return 0

    local wanted missing
    wanted=$(forge_apt_wanted "$list")
    [ -n "$wanted" ] || return 0
    # shellcheck disable=SC2086 # one package name per word
    missing=$(forge_apt_missing $wanted)
    [ -n "$missing" ] || return 0
    missing=$(echo "$missing" | xargs)

    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo=(sudo)
        else
            forge_say "missing Debian packages (tools/bootstrap/apt.txt): $missing"
            forge_say "not root and no sudo: install them with \`apt-get install $missing\`; builds that need them fail until then."
            return 0
        fi
    fi
    forge_say "installing Debian packages from tools/bootstrap/apt.txt: $missing"
    # shellcheck disable=SC2086
    "${sudo[@]}" apt-get update -qq >&2 ||
        { forge_fail apt "\`apt-get update\` exited $?"; return 3; }
    # shellcheck disable=SC2086
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing >&2 ||
        { forge_fail apt "\`apt-get install $missing\` exited $?"; return 3; }
    local still
    # shellcheck disable=SC2086
    still=$(forge_apt_missing $missing)
    [ -z "$still" ] || { forge_fail apt "still not installed after apt-get: $(echo "$still" | xargs)"; return 3; }
}

# The stamp of one Python spec: the interpreter it is built with, then the sha256 of every
# file of the spec directory (name and content, forge_spec_hash).
forge_python_identity() {
    local python=$1
    "$python" -c 'import sys; print(sys.executable, sys.version.split()[0])'
}

forge_spec_hash() {
    local dir=$1 f
    (
        cd "$dir" || exit 3
        for f in $(find . -type f | LC_ALL=C sort); do
            printf '%s\n' "$f"
            sha256sum <"$f"
        done
    ) | sha256sum | cut -d' ' -f1
}

forge_bootstrap_python_one() {
    local root=$1 spec=$2 python=$3
    local name venv stamp identity hash
    name=$(basename "$spec")
    venv="$root/.venv/$name"
    stamp="$venv/.forge-stamp"
    identity=$(forge_python_identity "$python") ||
        { forge_fail python "\`$python\` does not run (set FORGE_PYTHON)"; return 3; }
    hash=$(forge_spec_hash "$spec") || { forge_fail python "cannot hash $spec"; return 3; }

    local want
    want=$(printf '%s\n%s' "$identity" "$hash")
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
        return 0
    fi

    # A different interpreter means a new venv; a changed spec updates the existing one.
    if [ -f "$stamp" ] && [ "$(head -n1 "$stamp")" = "$identity" ] && [ -x "$venv/bin/python" ]; then
        forge_say "updating Python environment .venv/$name (tools/bootstrap/python/$name changed)"
    else
        forge_say "creating Python environment .venv/$name from tools/bootstrap/python/$name"
        rm -rf "$venv"
        mkdir -p "$root/.venv"
        "$python" -m venv "$venv" >&2 ||
            { rm -rf "$venv"; forge_fail python "\`$python -m venv .venv/$name\` failed"; return 3; }
    fi
    rm -f "$stamp"

    local status=0
    if [ -f "$spec/install.sh" ]; then
        (cd "$root" && VENV="$venv" PATH="$venv/bin:$PATH" bash "$spec/install.sh") >&2 || status=$?
        [ "$status" -eq 0 ] ||
            { forge_fail python "tools/bootstrap/python/$name/install.sh exited $status (the venv has no stamp and is redone next time)"; return 3; }
    elif [ -f "$spec/requirements.txt" ]; then
        "$venv/bin/python" -m pip install --disable-pip-version-check --no-input \
            -r "$spec/requirements.txt" >&2 || status=$?
        [ "$status" -eq 0 ] ||
            { forge_fail python "pip install -r tools/bootstrap/python/$name/requirements.txt exited $status (the venv has no stamp and is redone next time)"; return 3; }
    fi
    printf '%s' "$want" >"$stamp.tmp" && mv "$stamp.tmp" "$stamp"
}

forge_bootstrap_python() {
    local root=$1 python=${FORGE_PYTHON:-python3} spec
    [ -d "$root/tools/bootstrap/python" ] || return 0
    for spec in "$root"/tools/bootstrap/python/*/; do
        [ -d "$spec" ] || continue
        forge_bootstrap_python_one "$root" "${spec%/}" "$python" || return 3
    done
}

# The npm spec's packages, installed by `npm ci` into .node (a copy of package.json and
# package-lock.json there, since npm installs next to its manifest). Redone only when a
# file of tools/bootstrap/npm changed, so an up-to-date checkout needs no network; npm
# prefers its download cache when it does run.
forge_bootstrap_npm() {
    local root=$1 spec="$1/tools/bootstrap/npm" dir="$1/.node"
    [ -f "$spec/package-lock.json" ] || return 0
    local stamp="$dir/.forge-stamp" hash
    hash=$(forge_spec_hash "$spec") || { forge_fail npm "cannot hash tools/bootstrap/npm"; return 3; }
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ]; then
        return 0
    fi
    command -v npm >/dev/null 2>&1 ||
        { forge_fail npm "npm is not on PATH: install Node.js with npm (Debian: nodejs, in tools/bootstrap/apt.txt)"; return 3; }
    forge_say "installing the npm packages of tools/bootstrap/npm into .node (npm ci)"
    mkdir -p "$dir"
    rm -f "$stamp"
    cp "$spec/package.json" "$spec/package-lock.json" "$dir/" ||
        { forge_fail npm "cannot copy the spec into .node"; return 3; }
    local status=0
    # --ignore-scripts: the packages ship ready binaries; nothing of theirs runs at install.
    (cd "$dir" && npm ci --prefer-offline --ignore-scripts --no-audit --no-fund >&2) || status=$?
    [ "$status" -eq 0 ] ||
        { forge_fail npm "\`npm ci\` in .node exited $status (.node has no stamp and is redone next time)"; return 3; }
    printf '%s' "$hash" >"$stamp.tmp" && mv "$stamp.tmp" "$stamp"
}

# The engine is stale when its binary is missing or older than any engine source, manifest
# or Cargo.lock. cargo itself decides what to recompile.
forge_engine_stale() {
    local root=$1 bin=$2
    [ -x "$bin" ] || return 0
    [ "$root/Cargo.toml" -nt "$bin" ] && return 0
    [ "$root/Cargo.lock" -nt "$bin" ] && return 0
    [ -n "$(find "$root/engine" \( -name '*.rs' -o -name Cargo.toml \) -newer "$bin" -print -quit 2>/dev/null)" ]
}

# The cargo target dir (project-relative) and profile of the engine build: the defaults of
# `system_cargo_toolchain` in rules/toolchains/cargo.bzl, which the graph's cargo actions use.
FORGE_CARGO_TARGET_DIR=target
FORGE_CARGO_PROFILE=release

forge_bootstrap_engine() {
    local root=$1 bin="$1/$FORGE_CARGO_TARGET_DIR/$FORGE_CARGO_PROFILE/forge"
    forge_engine_stale "$root" "$bin" || return 0
    command -v cargo >/dev/null 2>&1 ||
        { forge_fail engine "cargo is not on PATH: install Rust (rustup, or \`nix develop\`)"; return 3; }
    forge_say "building the engine (cargo build --profile $FORGE_CARGO_PROFILE -p forge --bin forge)"
    # The graph's `cargo_binary` action runs the same build (`action cargo`, rules/tools/action,
    # with --locked, which does not change cargo's fingerprints), so it finds everything fresh.
    # Not --locked here: after a manifest edit this build updates Cargo.lock for the actions.
    (cd "$root" && CARGO_TARGET_DIR="$root/$FORGE_CARGO_TARGET_DIR" \
        cargo build --profile "$FORGE_CARGO_PROFILE" --package forge --bin forge >&2) ||
        { forge_fail engine "\`cargo build --profile $FORGE_CARGO_PROFILE -p forge\` exited $?"; return 3; }
    [ -x "$bin" ] || { forge_fail engine "cargo succeeded but $bin is missing"; return 3; }
    # cargo leaves the binary alone when only mtimes changed; touching it keeps the next
    # staleness check cheap.
    touch "$bin"
}

# Every crate of Cargo.lock in cargo's download cache: cargo actions run without network
# in forge's sandbox. Redone when Cargo.lock changes.
forge_bootstrap_crates() {
    local root=$1 stamp="$1/$FORGE_CARGO_TARGET_DIR/.forge-cargo-fetch"
    [ -f "$root/Cargo.lock" ] || return 0
    [ -f "$stamp" ] && [ ! "$root/Cargo.lock" -nt "$stamp" ] && return 0
    command -v cargo >/dev/null 2>&1 ||
        { forge_fail crates "cargo is not on PATH: install Rust (rustup, or \`nix develop\`)"; return 3; }
    (cd "$root" && cargo fetch --quiet >&2) ||
        { forge_fail crates "\`cargo fetch\` exited $?"; return 3; }
    mkdir -p "$root/$FORGE_CARGO_TARGET_DIR" && touch "$stamp"
}

# The project-relative `[forge] sandbox_passthrough` paths must exist: the sandbox only
# mounts paths that do (a cargo target dir that appears later would stay invisible).
forge_bootstrap_passthrough() {
    local root=$1 path
    [ -f "$root/.buckconfig" ] || return 0
    # shellcheck disable=SC2013 # the value is a space-separated list of words
    for path in $(sed -n 's/^[[:space:]]*sandbox_passthrough[[:space:]]*=//p' "$root/.buckconfig"); do
        case "$path" in
            /* | "~"*) ;;
            *) mkdir -p "$root/$path" ;;
        esac
    done
}

forge_bootstrap() {
    local root=$1
    mkdir -p "$root/buck-out/forge"
    forge_bootstrap_passthrough "$root"
    # Two wrappers started at once must not build the same venv or engine side by side.
    if command -v flock >/dev/null 2>&1; then
        exec 9>"$root/buck-out/forge/bootstrap.lock"
        flock 9
    fi
    if [ "${FORGE_SKIP_BOOTSTRAP:-}" != 1 ]; then
        forge_bootstrap_apt "$root" || return 3
        forge_bootstrap_python "$root" || return 3
        forge_bootstrap_hls_types "$root" || return 3
        forge_bootstrap_npm "$root" || return 3
    fi
    forge_bootstrap_engine "$root" || return 3
    forge_bootstrap_crates "$root" || return 3
    if command -v flock >/dev/null 2>&1; then
        exec 9>&-
    fi
}
