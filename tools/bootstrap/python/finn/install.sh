#!/usr/bin/env bash
# Light install of finn-plus 1.6.1 without torch/CUDA into the venv at $VENV.
#
# `pip install finn-plus` would resolve brevitas -> torch and about 2.7 GB of CUDA
# wheels. finn/ never imports brevitas, and torch is only needed by LayerNorm's
# Python execution, so the environment is the lock file (requirements.txt, installed
# without resolution) plus finn-plus with --no-deps. The import workarounds that make
# finn-plus usable without torch and without AMD tools live in one module:
# finn/flow/finn_env.py.
#
# Usable stand-alone (creates the venv when missing) or from the ./forge wrapper.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${VENV:?set VENV to the virtualenv directory (e.g. .venv/finn)}"
python="${PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ]; then
    "$python" -m venv "$VENV"
fi
pip=("$VENV/bin/python" -m pip --disable-pip-version-check --no-input)

# The lock is complete, so no resolution is needed; --no-deps keeps pip from
# pulling torch back in through a transitive requirement.
"${pip[@]}" install --quiet --no-deps -r "$here/requirements.txt"
"${pip[@]}" install --quiet --no-deps "finn-plus==1.6.1"

# Fail here, not in the first build, when the environment is unusable.
"$VENV/bin/python" - <<'EOF'
import importlib.metadata as md
assert md.version("finn-plus") == "1.6.1", md.version("finn-plus")
assert md.version("qonnx") == "1.0.0", md.version("qonnx")
import onnx, onnxruntime, qonnx.core.modelwrapper  # noqa: F401
EOF
echo "finn environment ready at $VENV" >&2
