"""Each FINN action's key covers its own script's files, not every flow script.

In a scratch copy of this project (its local cache seeded by hard links from the project's,
which this test's data has just filled with the tiny network's model and first FINN step),
`forge build` of //finn/tiny:model (finn/models/gen_model.py) and
//finn/tiny:flow[qonnx_to_finn] (finn/flow/run_step.py); then a flow script neither runs is
edited, then run_step.py. The reference is forge's own build log (buck-out/forge/log/
last-build.json): the action-cache key and the executor of every action of the build.

Run: ./forge test //finn:script_keys (FORGE = the forge binary under test, a
project-relative path; TINY_FIRST_STEP makes the project's cache hold what the copy reuses).
"""

import json
import os
import shutil
import subprocess
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGETS = ["//finn/tiny:model", "//finn/tiny:flow[qonnx_to_finn]"]
MODEL = "root//finn/tiny:model (<unspecified>) (finn_model)"
STEP = "root//finn/tiny:flow (<unspecified>) (finn_step qonnx_to_finn)"
# Top-level entries a copy does not get: build state, or linked in.
NOT_COPIED = {"buck-out", "target", ".venv", ".node", ".git"}


def link_tree(src, dst):
    """`src` as hard links (the cache's blobs are read-only and replaced only by rename)."""
    for base, _, files in os.walk(src):
        out = os.path.join(dst, os.path.relpath(base, src))
        os.makedirs(out, exist_ok=True)
        for f in files:
            os.link(os.path.join(base, f), os.path.join(out, f))


@pytest.fixture(scope="module")
def scratch():
    forge = os.environ.get("FORGE")
    assert forge, "FORGE names no forge binary: run `./forge test //finn:script_keys`"
    cache = os.path.join(ROOT, "buck-out", "forge", "cache")
    assert os.path.isdir(os.path.join(cache, "ac")), (
        f"{cache}: no local cache to seed the copy from; run `./forge test //finn:script_keys`")
    with tempfile.TemporaryDirectory(prefix="forge-finn-keys-") as d:
        for name in os.listdir(ROOT):
            src, dst = os.path.join(ROOT, name), os.path.join(d, name)
            if name in NOT_COPIED:
                continue
            if os.path.isdir(src) and not os.path.islink(src):
                shutil.copytree(src, dst, symlinks=True)
            else:
                shutil.copy2(src, dst, follow_symlinks=False)
        for shared in (".venv", ".node", "target"):
            os.symlink(os.path.join(ROOT, shared), os.path.join(d, shared))
        for part in ("cas", "ac"):
            link_tree(os.path.join(cache, part), os.path.join(d, "buck-out", "forge", "cache", part))
        yield os.path.join(ROOT, forge), d


def build(scratch):
    """Builds TARGETS in the copy; {action name: (key, executor)} from the build log."""
    forge, root = scratch
    run = subprocess.run([forge, "build", "--console", "none", *TARGETS], cwd=root,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True)
    assert run.returncode == 0, f"forge build failed ({run.returncode}):\n{run.stderr}"
    with open(os.path.join(root, "buck-out", "forge", "log", "last-build.json")) as f:
        log = json.load(f)
    return {a["name"]: (a["key"], a["executor"]) for a in log["actions"]}


def append_comment(scratch, rel):
    with open(os.path.join(scratch[1], rel), "a", encoding="utf-8") as f:
        f.write("# edited by finn/tests/test_script_keys.py\n")


def test_a_script_edit_changes_only_the_keys_of_the_actions_that_run_it(scratch):
    first = build(scratch)
    for name in (MODEL, STEP):
        assert name in first, f"{name}: not in the build log:\n{sorted(first)}"
        assert first[name][1] != "local", f"{name} ran in the seeded copy: {first[name]}"

    # A script neither action runs nor imports (the plan report): no key moves, nothing runs.
    append_comment(scratch, "finn/flow/report.py")
    after_report = build(scratch)
    for name in (MODEL, STEP):
        assert after_report[name][0] == first[name][0], (
            f"editing finn/flow/report.py changed {name}'s key: {first[name]} -> {after_report[name]}")
        assert after_report[name][1] != "local", f"{name} ran again: {after_report[name]}"

    # The step's own script: its key moves and it runs; the model's (gen_model.py) stays.
    append_comment(scratch, "finn/flow/run_step.py")
    after_step = build(scratch)
    assert after_step[STEP][0] != first[STEP][0], "editing run_step.py kept the step's key"
    assert after_step[STEP][1] == "local", f"the edited step did not run: {after_step[STEP]}"
    assert after_step[MODEL][0] == first[MODEL][0], (
        f"editing run_step.py changed the model's key: {first[MODEL]} -> {after_step[MODEL]}")
    assert after_step[MODEL][1] != "local", f"the model ran again: {after_step[MODEL]}"
