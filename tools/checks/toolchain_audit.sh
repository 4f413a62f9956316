#!/usr/bin/env bash
# Every action of the project runs a project file, a shell, or a command one of its target's
# toolchains names (`forge audit tools`, engine/forge/src/cli/audit.rs): a rule that runs
# `python3` or `vivado` straight from PATH fails this test, naming the target and the action.
# Runs from the project root (sh_test's cwd); analysis only, nothing is built.
set -euo pipefail
FORGE_SKIP_BOOTSTRAP=1 exec ./forge audit tools //...
