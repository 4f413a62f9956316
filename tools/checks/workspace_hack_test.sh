#!/usr/bin/env bash
# tools/checks/workspace_hack.py on a scratch workspace of this test's own (an engine `forge`,
# a tool, a crate a build script uses): the generated manifest asks for the engine's libc
# features (which the tool uses too) and leaves serde_json out; --check passes on it and
# fails, naming the file, when the manifest is edited, when a member lacks the dependency,
# when a build script's crate has it and when that crate lacks it as a dev-dependency. The expected contents are written here from cargo's
# feature rules, not taken from the generator. Offline: libc and serde_json come from cargo's
# cache, which ./forge's `cargo fetch` fills (both are in this project's Cargo.lock).
set -euo pipefail
# the toolchains' python and cargo (//:workspace_hack_test sets both; by hand, PATH's)
PYTHON=${PYTHON:-python3}
export CARGO=${CARGO:-cargo}
gen=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)/workspace_hack.py
lock=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)/Cargo.lock
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail=0
t=$scratch/ws

crate() { # crate DIR NAME DEPS...: a library crate with those [dependencies] lines
    local dir=$t/$1 name=$2
    shift 2
    mkdir -p "$dir/src" && : >"$dir/src/lib.rs"
    printf '[package]\nname = "%s"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n' "$name" >"$dir/Cargo.toml"
    printf '%s\n' "$@" >>"$dir/Cargo.toml"
}
mkdir -p "$t"
printf '[workspace]\nresolver = "2"\nmembers = ["engine/forge", "engine/workspace_hack", "tool", "desc", "user"]\n\n[workspace.package]\nedition = "2021"\nlicense = "MIT"\nversion = "0.1.0"\n' >"$t/Cargo.toml"
# the versions this project locks, so that cargo finds them in its cache
cp "$lock" "$t/Cargo.lock"
hack='workspace_hack = { path = "../engine/workspace_hack" }'
crate engine/forge forge 'libc = { version = "0.2", features = ["extra_traits"] }' \
    'serde_json = { version = "1", features = ["preserve_order"] }' \
    'workspace_hack = { path = "../workspace_hack" }'
crate engine/workspace_hack workspace_hack
crate tool tool 'libc = "0.2"' 'serde_json = "1"' "$hack"
crate desc desc 'libc = "0.2"'
# a build script's crate takes the hack as a dev-dependency only
printf '\n[dev-dependencies]\n%s\n' "$hack" >>"$t/desc/Cargo.toml"
crate user user "$hack"
printf '\n[build-dependencies]\ndesc = { path = "../desc" }\n' >>"$t/user/Cargo.toml"
printf 'fn main() {}\n' >"$t/user/build.rs"

"$PYTHON" "$gen" --root "$t" 2>/dev/null || { echo "FAIL: generating in the clean workspace"; exit 1; }
made=$t/engine/workspace_hack/Cargo.toml
# libc: the engine's and the tool's, with the engine's `extra_traits` (libc's `std` and
# `default` come with the default features both ask for)
grep -qE '^libc = \{ version = "=0\.2\.[0-9]+", default-features = false, features = \["default", "extra_traits", "std"\] \}$' "$made" ||
    { echo "FAIL: no libc line with the engine's features in: $(cat "$made")"; fail=1; }
grep -q '^serde_json' "$made" && { echo "FAIL: serde_json is in the manifest"; fail=1; }

# expect WANT TEXT PLANT: PLANT run in a copy of the clean workspace, then --check.
expect() {
    local want=$1 text=$2 plant=$3 status=0 err
    rm -rf "$scratch/c" && cp -r "$t" "$scratch/c"
    (cd "$scratch/c" && eval "$plant")
    err=$("$PYTHON" "$gen" --check --root "$scratch/c" 2>&1) || status=$?
    if [ "$status" -ne "$want" ] || { [ -n "$text" ] && ! grep -qF -- "$text" <<<"$err"; }; then
        echo "FAIL [$plant]: exit $status (want $want)${text:+, want \"$text\"}: $err"
        fail=1
    else
        echo "ok [${plant:-clean}]"
    fi
}
expect 0 "" ""
expect 1 "engine/workspace_hack/Cargo.toml is stale" "sed -i 's/\"extra_traits\", //' engine/workspace_hack/Cargo.toml"
expect 1 "tool/Cargo.toml does not depend on workspace_hack" "sed -i '/^workspace_hack/d' tool/Cargo.toml && \"\$CARGO\" metadata --offline --format-version 1 >/dev/null 2>&1"
expect 1 "desc/Cargo.toml is a build script's dependency: move workspace_hack" "sed -i '/^\[dev-dependencies\]/,\$d' desc/Cargo.toml && printf '%s\n' '$hack' >>desc/Cargo.toml && \"\$CARGO\" metadata --offline --format-version 1 >/dev/null 2>&1"
expect 1 "desc/Cargo.toml is a build script's dependency: add" "sed -i '/^\[dev-dependencies\]/,\$d' desc/Cargo.toml && \"\$CARGO\" metadata --offline --format-version 1 >/dev/null 2>&1"
exit $fail
