"""tests/data/digits_stream_widths.json is what tests/stream_widths.py writes with finn-plus
1.6.1 from tests/data/digits_estimates.json: regenerated here and compared, so the
checked-in fixture of tests/stream_widths.rs cannot drift from FINN's own functions."""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")


def test_fixture_is_finns_output():
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "widths.json")
        subprocess.run([sys.executable, os.path.join(HERE, "stream_widths.py"),
                        "--estimates", os.path.join(DATA, "digits_estimates.json"),
                        "--out", out], check=True)
        fresh = json.load(open(out))
    kept = json.load(open(os.path.join(DATA, "digits_stream_widths.json")))
    assert fresh == kept, "regenerate tests/data/digits_stream_widths.json with tests/stream_widths.py"
    assert len(kept["cases"]) == 148
