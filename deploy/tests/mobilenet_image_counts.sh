#!/usr/bin/env bash
# `infer --images N` on mobilenet_2fpga for every N from 1 to 40, each run bit-exact with
# FINN's execution of the unpartitioned model and without a note: the full sweep behind the
# six counts //deploy:mobilenet_2fpga_infer runs (820 images; about FIRST-LAST times the
# six-count test). Extra arguments go to `forge test` (e.g. --timeout 90m).
#
#   deploy/tests/mobilenet_image_counts.sh [FIRST-LAST]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
range=${1:-1-40}
shift || true
cd "$root"
exec nice ./forge test --timeout 120m -c "deploy.mobilenet_image_counts=$range" //deploy:mobilenet_2fpga_infer "$@"
