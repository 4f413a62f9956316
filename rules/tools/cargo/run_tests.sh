#!/usr/bin/env bash
# run_tests.sh TESTS_DIR CRATE_DIR [TEST ARGS...]
# Runs every test executable collected by `cargo_action.sh test-build`, from the crate's
# directory as `cargo test` does, and exits non-zero if any of them fails.
set -uo pipefail

tests_dir=${1:?usage: run_tests.sh TESTS_DIR CRATE_DIR [ARGS...]}
crate_dir=${2:?usage: run_tests.sh TESTS_DIR CRATE_DIR [ARGS...]}
shift 2

tests_dir=$(cd "$tests_dir" && pwd) || exit 3
cd "$crate_dir" || exit 3
# `cargo test` exports the crate directory at run time; tests that read fixtures use it.
CARGO_MANIFEST_DIR=$(pwd)
export CARGO_MANIFEST_DIR

failed=()
ran=0
for exe in "$tests_dir"/*; do
    if [ ! -f "$exe" ] || [ ! -x "$exe" ]; then
        continue
    fi
    ran=$((ran + 1))
    echo "== $(basename "$exe")"
    if ! "$exe" "$@"; then
        failed+=("$(basename "$exe")")
    fi
done

if [ "$ran" -eq 0 ]; then
    echo "no test executables in $tests_dir" >&2
    exit 1
fi
if [ ${#failed[@]} -gt 0 ]; then
    echo "failing test executables: ${failed[*]}" >&2
    exit 1
fi
