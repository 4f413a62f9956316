#!/usr/bin/env bash
# Runs every conformance workspace under upstream buck2 and checks it against the same
# expected.json files forge is held to (engine/forge/tests/conformance.rs does the
# comparison; `buck-out/v2` and `buck-out/forge` both normalise to <BUCK_OUT>).
#
#   conformance/run-under-buck2.sh                 # all workspaces
#   CONFORMANCE_ONLY=glob,run/run_exit_status conformance/run-under-buck2.sh
#   BUCK2=/path/to/buck2 conformance/run-under-buck2.sh
#   CONFORMANCE_BUCK2_ISOLATION_DIR=mine ...       # buck2's --isolation-dir (default v2)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
buck2="${BUCK2:-$(command -v buck2 || true)}"

if [ -z "$buck2" ]; then
  echo "usage: BUCK2=/path/to/buck2 $0   (buck2 is not on PATH)" >&2
  exit 2
fi
if ! command -v cargo >/dev/null; then
  echo "cargo is required: the comparison harness is a cargo integration test." >&2
  exit 1
fi

echo "conformance under $("$buck2" --version 2>/dev/null || echo "$buck2")" >&2
cd "$here/.."
CONFORMANCE_ENGINE="$buck2" CONFORMANCE_ENGINE_KIND=buck2 \
  exec cargo test -p forge --test all -- conformance::conformance_workspaces --nocapture
