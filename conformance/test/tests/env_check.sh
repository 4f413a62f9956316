#!/bin/sh
# Passes when the test sees the documented environment: cwd = project root,
# project-relative artifacts, its own env, and nothing leaked from the caller.
fail() { echo "FAIL: $1"; exit 1; }
[ "$1" = "tests/fixture.txt" ] || fail "argument is '$1', expected tests/fixture.txt"
[ -f "$1" ] || fail "fixture not readable from cwd"
[ "$TEST_GREETING" = "hello test" ] || fail "TEST_GREETING='$TEST_GREETING'"
[ -n "$PATH" ] || fail "PATH unset"
[ -z "$CONFORMANCE_LEAK" ] || fail "caller environment leaked into the test"
[ -z "$RUST_BACKTRACE" ] || fail "RUST_BACKTRACE leaked into the test"
echo "env ok"
echo "diagnostic on stderr" >&2
