#!/usr/bin/env bash
# Tests of the `./forge` wrapper's bootstrap steps. apt-get, dpkg-query, sudo, id, cargo and
# python are stand-ins that record how they were called, so the test checks the exact
# commands the wrapper would run on a real machine without installing anything.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

passed=0
failed=0
check() {
    local what=$1
    shift
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: $what" >&2
    fi
}
contains() { grep -qF -- "$2" "$1"; }
empty() { [ ! -s "$1" ]; }

fakes="$work/bin"
mkdir -p "$fakes"
log="$work/calls.log"
installed="$work/installed"
touch "$log" "$installed"
export FAKE_LOG=$log FAKE_INSTALLED=$installed

cat >"$fakes/dpkg-query" <<'EOF'
#!/usr/bin/env bash
pkg=${!#}
if grep -qx "$pkg" "$FAKE_INSTALLED"; then printf 'install ok installed'; else exit 1; fi
EOF
cat >"$fakes/apt-get" <<'EOF'
#!/usr/bin/env bash
echo "apt-get $* DEBIAN_FRONTEND=${DEBIAN_FRONTEND:-}" >>"$FAKE_LOG"
if [ "$1" = install ]; then
    for a in "$@"; do case "$a" in install | -*) ;; *) [ "$a" = broken ] || echo "$a" >>"$FAKE_INSTALLED" ;; esac; done
fi
EOF
cat >"$fakes/sudo" <<'EOF'
#!/usr/bin/env bash
echo "sudo $1" >>"$FAKE_LOG"
exec "$@"
EOF
cat >"$fakes/id" <<'EOF'
#!/usr/bin/env bash
echo "${FAKE_UID:-0}"
EOF
cat >"$fakes/cargo" <<'EOF'
#!/usr/bin/env bash
echo "cargo $* CARGO_TARGET_DIR=$CARGO_TARGET_DIR" >>"$FAKE_LOG"
mkdir -p "$CARGO_TARGET_DIR/release"
printf '#!/usr/bin/env bash\necho "engine ran: $*"\n' >"$CARGO_TARGET_DIR/release/forge"
chmod +x "$CARGO_TARGET_DIR/release/forge"
EOF
# A python whose `-m venv DIR` makes a venv whose python records pip calls.
cat >"$fakes/fakepython" <<'EOF'
#!/usr/bin/env bash
case "$1" in
    -c) echo "/fake/python 3.11.${FAKE_PY_MINOR:-7}" ;;
    -m)
        [ "$2" = venv ] || exit 2
        echo "venv $3" >>"$FAKE_LOG"
        mkdir -p "$3/bin"
        printf '#!/usr/bin/env bash\necho "venv-python $*" >>"$FAKE_LOG"\n' >"$3/bin/python"
        chmod +x "$3/bin/python"
        ;;
esac
EOF
# An npm whose `ci` records its cwd and installs what package-lock.json names, as a file.
cat >"$fakes/npm" <<'EOF'
#!/usr/bin/env bash
echo "npm $* cwd=$PWD" >>"$FAKE_LOG"
[ "$1" = ci ] || exit 2
[ -z "${FAKE_NPM_FAIL:-}" ] || exit 9
[ -f package-lock.json ] || exit 4
mkdir -p node_modules/@bazel/buildifier
cp package-lock.json node_modules/@bazel/buildifier/installed-from
EOF
chmod +x "$fakes"/*
export PATH="$fakes:$PATH"
export FORGE_PYTHON=fakepython

# shellcheck source=tools/bootstrap/bootstrap.sh
source "$repo/tools/bootstrap/bootstrap.sh"

proj="$work/proj"
mkdir -p "$proj/tools/bootstrap" "$proj/engine/core/src"
cp "$repo/forge" "$proj/forge"
cp "$repo/tools/bootstrap/bootstrap.sh" "$repo/tools/bootstrap/hls_types.sh" "$proj/tools/bootstrap/"
echo '[workspace]' >"$proj/Cargo.toml"
printf '[forge]\n  sandbox_passthrough = .venv target /abs/elsewhere\n' >"$proj/.buckconfig"
touch "$proj/Cargo.lock" "$proj/engine/core/src/lib.rs"
out="$work/out"

# --- apt -------------------------------------------------------------------------------
printf '# comment line\nhave  # already there\nneed1  # wanted\n\nneed2\n' >"$proj/tools/bootstrap/apt.txt"
echo have >"$installed"
forge_bootstrap_apt "$proj" 2>"$out"
check "apt: announces the missing packages" contains "$out" "forge: installing Debian packages from tools/bootstrap/apt.txt: need1 need2"
check "apt: updates the package lists first" test "$(head -n1 "$log" | cut -d" " -f1-3)" = "apt-get update -qq"
check "apt: installs exactly the missing ones, non-interactively" \
    contains "$log" "apt-get install -y --no-install-recommends need1 need2 DEBIAN_FRONTEND=noninteractive"
: >"$log"
forge_bootstrap_apt "$proj" 2>"$out"
check "apt: silent when everything is installed" empty "$out"
check "apt: no apt-get call when everything is installed" empty "$log"

echo need3 >>"$proj/tools/bootstrap/apt.txt"
FAKE_UID=1000 forge_bootstrap_apt "$proj" 2>"$out"
check "apt: uses sudo when not root" contains "$log" "sudo apt-get"
: >"$log"

echo broken >>"$proj/tools/bootstrap/apt.txt"
status=0
forge_bootstrap_apt "$proj" 2>"$out" || status=$?
check "apt: a package apt did not install fails the step" test "$status" -ne 0
check "apt: the failure names the step and the package" contains "$out" "bootstrap step 'apt' failed: still not installed after apt-get: broken"
sed -i '/^broken$/d' "$proj/tools/bootstrap/apt.txt"
: >"$log"

# --- python ----------------------------------------------------------------------------
spec="$proj/tools/bootstrap/python/demo"
mkdir -p "$spec"
echo 'six==1.17.0' >"$spec/requirements.txt"
forge_bootstrap_python "$proj" 2>"$out"
check "python: announces the new venv" contains "$out" "forge: creating Python environment .venv/demo from tools/bootstrap/python/demo"
check "python: creates the venv" contains "$log" "venv $proj/.venv/demo"
check "python: installs the requirements" contains "$log" "venv-python -m pip install --disable-pip-version-check --no-input -r $spec/requirements.txt"
check "python: writes the stamp" test -f "$proj/.venv/demo/.forge-stamp"
: >"$log"
forge_bootstrap_python "$proj" 2>"$out"
check "python: silent when the spec is unchanged" empty "$out"
check "python: nothing run when the spec is unchanged" empty "$log"

echo 'attrs==26.1.0' >>"$spec/requirements.txt"
forge_bootstrap_python "$proj" 2>"$out"
check "python: a changed spec updates the venv in place" contains "$out" "updating Python environment .venv/demo"
check "python: the update does not recreate the venv" bash -c "! grep -q '^venv ' '$log'"
: >"$log"

FAKE_PY_MINOR=8 forge_bootstrap_python "$proj" 2>"$out"
check "python: a new interpreter recreates the venv" contains "$log" "venv $proj/.venv/demo"
: >"$log"

# shellcheck disable=SC2016 # expanded by the generated script
printf '#!/usr/bin/env bash\necho "install.sh VENV=$VENV" >>"$FAKE_LOG"\nexit 7\n' >"$spec/install.sh"
status=0
forge_bootstrap_python "$proj" 2>"$out" || status=$?
check "python: install.sh runs with VENV set" contains "$log" "install.sh VENV=$proj/.venv/demo"
check "python: install.sh replaces the plain pip install" bash -c "! grep -q 'pip install' '$log'"
check "python: a failing install.sh fails the step" test "$status" -ne 0
check "python: the failure names the step and the script" contains "$out" "bootstrap step 'python' failed: tools/bootstrap/python/demo/install.sh exited 7"
check "python: a failed venv keeps no stamp" test ! -e "$proj/.venv/demo/.forge-stamp"
rm -rf "$spec" "$proj/.venv"
: >"$log"

# --- hls-types -------------------------------------------------------------------------
# A python whose `-m venv DIR` makes a venv whose python is this script, and whose `-m pip
# download` records the call and "downloads" a wheel built here (a zip with a header tree,
# another file and a licence); everything else is the real python3.
cat >"$fakes/pippython" <<'EOF'
#!/usr/bin/env bash
if [ "$1 $2" = "-m venv" ]; then
    mkdir -p "$3/bin" && cp "$0" "$3/bin/python"
    exit 0
fi
if [ "$1 $2 $3" = "-m pip download" ]; then
    echo "pip $*" >>"$FAKE_LOG"
    [ -z "${FAKE_PIP_FAIL:-}" ] || exit 5
    while [ $# -gt 0 ]; do [ "$1" = -d ] && dir=$2; shift; done
    mkdir -p "$dir"
    exec python3 - "$dir/demo-1.0-py3-none-any.whl" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("demo/types/ap_int.h", "// " + os.environ.get("FAKE_HEADER", "v1") + "\n")
    z.writestr("demo/types/etc/ap_private.h", "// private\n")
    z.writestr("demo/other.py", "")
    z.writestr("demo-1.0.dist-info/licenses/LICENSE", "Apache License 2.0\n")
PY
fi
exec python3 "$@"
EOF
chmod +x "$fakes/pippython"
hspec="$proj/tools/bootstrap/hls-types"
dest="$proj/.venv/hls-types"
mkdir -p "$hspec"
printf 'demo==1.0 --hash=sha256:%064d\n' 0 >"$hspec/requirements.txt"
printf '# comment\ndemo/types\n' >"$hspec/unpack.txt"
FORGE_PYTHON=pippython forge_bootstrap_hls_types "$proj" 2>"$out"
check "hls-types: announces the download" contains "$out" "forge: fetching AMD's HLS arbitrary-precision headers"
check "hls-types: one pinned wheel, no dependencies, hashes required" \
    contains "$log" "pip -m pip download --disable-pip-version-check --no-input --quiet --no-deps --only-binary=:all: --require-hashes -r $hspec/requirements.txt"
check "hls-types: the header tree is unpacked" contains "$dest/include/ap_int.h" "// v1"
check "hls-types: subdirectories too" test -f "$dest/include/etc/ap_private.h"
check "hls-types: nothing outside the tree" test ! -e "$dest/include/other.py" -a ! -e "$dest/other.py"
check "hls-types: the licence travels with them" contains "$dest/LICENSE" "Apache License 2.0"
check "hls-types: the stamp starts with the spec's hash" test "$(head -n1 "$dest/.forge-stamp")" = "$(forge_spec_hash "$hspec")"
check "hls-types: the stamp names each header's sha256" contains "$dest/.forge-stamp" "$(cd "$dest" && sha256sum include/ap_int.h)"
: >"$log"
FORGE_PYTHON=pippython forge_bootstrap_hls_types "$proj" 2>"$out"
check "hls-types: silent when the spec is unchanged" empty "$out"
check "hls-types: no download when the spec is unchanged" empty "$log"
echo '# changed' >>"$hspec/requirements.txt"
stamp_before=$(cat "$dest/.forge-stamp")
status=0
FAKE_PIP_FAIL=1 FORGE_PYTHON=pippython forge_bootstrap_hls_types "$proj" 2>"$out" || status=$?
check "hls-types: a failed download fails the step" test "$status" -ne 0
check "hls-types: the failure names the step" contains "$out" "bootstrap step 'hls-types' failed"
check "hls-types: a failed download keeps the previous tree" test "$(cat "$dest/.forge-stamp")" = "$stamp_before"
printf 'demo/none\n' >"$hspec/unpack.txt"
status=0
FORGE_PYTHON=pippython forge_bootstrap_hls_types "$proj" 2>"$out" || status=$?
check "hls-types: a tree the wheel lacks fails the step" test "$status" -ne 0
check "hls-types: ... naming unpack.txt" contains "$out" "has no files under demo/none/"
check "hls-types: ... and keeps the previous tree" test "$(cat "$dest/.forge-stamp")" = "$stamp_before"
printf 'demo/types\n' >"$hspec/unpack.txt"
FAKE_HEADER=v2 FORGE_PYTHON=pippython forge_bootstrap_hls_types "$proj" 2>"$out"
check "hls-types: a changed spec replaces the tree" contains "$dest/include/ap_int.h" "// v2"
check "hls-types: no temporary directory is left" test -z "$(find "$proj/.venv" -maxdepth 1 -name '.hls-types.*')"
rm -rf "$hspec" "$proj/.venv"
: >"$log"

# --- npm -------------------------------------------------------------------------------
npm_spec="$proj/tools/bootstrap/npm"
mkdir -p "$npm_spec"
echo '{"dependencies": {"@bazel/buildifier": "8.2.1"}}' >"$npm_spec/package.json"
echo '{"lockfileVersion": 3}' >"$npm_spec/package-lock.json"
forge_bootstrap_npm "$proj" 2>"$out"
check "npm: announces the install" contains "$out" "forge: installing the npm packages of tools/bootstrap/npm into .node (npm ci)"
check "npm: npm ci with the locked versions, in .node" \
    contains "$log" "npm ci --prefer-offline --ignore-scripts --no-audit --no-fund cwd=$proj/.node"
check "npm: installs from the spec's lock file" \
    cmp -s "$npm_spec/package-lock.json" "$proj/.node/node_modules/@bazel/buildifier/installed-from"
: >"$log"
forge_bootstrap_npm "$proj" 2>"$out"
check "npm: silent when the spec is unchanged" empty "$out"
check "npm: no npm call (no network) when the spec is unchanged" empty "$log"
echo '{"lockfileVersion": 3, "changed": true}' >"$npm_spec/package-lock.json"
status=0
FAKE_NPM_FAIL=1 forge_bootstrap_npm "$proj" 2>"$out" || status=$?
check "npm: a failing npm ci fails the step" test "$status" -ne 0
check "npm: the failure names the step" contains "$out" "bootstrap step 'npm' failed: \`npm ci\` in .node exited 9"
check "npm: a failed install keeps no stamp" test ! -e "$proj/.node/.forge-stamp"
forge_bootstrap_npm "$proj" 2>"$out"
check "npm: a changed lock file is installed" contains "$proj/.node/node_modules/@bazel/buildifier/installed-from" '"changed": true'
rm -rf "$npm_spec" "$proj/.node"
: >"$log"

# --- engine and the wrapper ------------------------------------------------------------
"$proj/forge" build //some:target >"$out" 2>"$work/err"
check "engine: built when missing, into the shared target dir" \
    contains "$log" "cargo build --profile release --package forge --bin forge CARGO_TARGET_DIR=$proj/target"
check "engine: the build is announced" contains "$work/err" "forge: building the engine (cargo build --profile release -p forge --bin forge)"
check "wrapper: runs the engine with the arguments" contains "$out" "engine ran: build //some:target"
check "crates: fetched for the offline sandbox" contains "$log" "cargo fetch --quiet"
check "passthrough: relative paths exist before any action" test -d "$proj/target" -a -d "$proj/.venv"
: >"$log"
"$proj/forge" test //... >"$out" 2>"$work/err"
check "wrapper: silent when nothing is to do" empty "$work/err"
check "engine: not rebuilt when fresh" empty "$log"

touch -d '2000-01-01' "$proj/target/release/forge"
"$proj/forge" targets //... >"$out" 2>"$work/err"
check "engine: rebuilt when a source is newer" contains "$log" "cargo build --profile release --package forge --bin forge"
check "crates: not fetched again while Cargo.lock is unchanged" bash -c "! grep -q 'cargo fetch' '$log'"
: >"$log"
touch "$proj/Cargo.lock"
"$proj/forge" targets //... >"$out" 2>"$work/err"
check "crates: fetched again after Cargo.lock changed" contains "$log" "cargo fetch --quiet"
: >"$log"

echo ghost >>"$proj/tools/bootstrap/apt.txt"
FORGE_SKIP_BOOTSTRAP=1 "$proj/forge" build //x >"$out" 2>"$work/err"
check "wrapper: FORGE_SKIP_BOOTSTRAP=1 skips the packages" bash -c "! grep -q apt-get '$log'"

# --- one engine build: the wrapper and the graph's cargo actions ----------------------------
# The real project's files: the engine build must use the target dir and profile of the
# graph's cargo toolchain, and that dir must reach the actions (passthrough), or a fresh clone
# compiles every crate twice.
toolchain_default() {
    sed -n "s/^ *\"$1\": attrs.string(default = \"\([^\"]*\)\"),\$/\1/p" "$repo/rules/toolchains/cargo.bzl"
}
check "one build: the toolchain's target_dir is the wrapper's" \
    test "$(toolchain_default target_dir)" = "$FORGE_CARGO_TARGET_DIR"
check "one build: the toolchain's profile is the wrapper's" \
    test "$(toolchain_default profile)" = "$FORGE_CARGO_PROFILE"
check "one build: toolchains//:cargo_bootstrap keeps the defaults" \
    bash -c "! sed -n '/^cargo_bootstrap_toolchain(/,/^)/p' '$repo/toolchains/BUCK' | grep -q 'target_dir\|profile'"
check "one build: the target dir is a sandbox passthrough" \
    bash -c "sed -n 's/^[[:space:]]*sandbox_passthrough[[:space:]]*=//p' '$repo/.buckconfig' | tr ' ' '\n' | grep -qx '$FORGE_CARGO_TARGET_DIR'"
check "one build: the target dir is outside buck-out (forge clean keeps the engine)" \
    bash -c "case '$FORGE_CARGO_TARGET_DIR' in buck-out*) exit 1 ;; esac"
# That the graph's `action cargo build` and the wrapper name the same cargo unit (profile,
# package, binary) is checked by //rules/tools/action:tests (src/cargo.rs), beside the code.

# --- the project's own package list ---------------------------------------------------------
# Tests fail without these tools (they never skip), so ./forge must install them.
wanted_by_forge() { forge_apt_wanted "$repo/tools/bootstrap/apt.txt" | grep -qx "$1"; }
for pkg in nix-bin bubblewrap openssl make python3-venv nodejs shellcheck; do
    check "apt.txt: $pkg is installed by ./forge" wanted_by_forge "$pkg"
done

# The style checks' tools are pinned: buildifier in the npm lock file, ruff in its venv spec.
check "npm spec: buildifier 8.2.1 is locked" \
    bash -c "grep -A1 '\"node_modules/@bazel/buildifier\"' '$repo/tools/bootstrap/npm/package-lock.json' | grep -q '\"version\": \"8.2.1\"'"
check "python spec: ruff is pinned" grep -qx 'ruff==[0-9.]*' "$repo/tools/bootstrap/python/ruff/requirements.txt"

echo "bootstrap: $passed passed, $failed failed" >&2
[ "$failed" -eq 0 ]
