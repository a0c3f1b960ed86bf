"""A short soak in CI (python -m eval.soak runs the long one): calls one after another, each with its record,
and a call flooded with RFC 4733 digits that still gets its question answered."""

import json

from agent.call.record import MAX_DTMF_RECORDED
from eval.soak import main as soak


def test_sequential_calls_all_leave_records_and_a_digit_flooded_call_is_still_answered(tmp_path, models):
    ok = soak(["--calls", "20", "--digits", "300", "--warm-up", "2", "--out", str(tmp_path)]) == 0
    # A turn the agent could not finish names its stage in the log (the scratch folder is gone after a CI run).
    assert ok, "\n".join(line for line in (tmp_path / "agent.log").read_text().splitlines() if "_failed" in line)
    report = json.loads((tmp_path / "soak.json").read_text())
    assert report["answered"] == 20 and report["records_missing"] == 0
    assert report["flood"]["answered_right"] and report["flood"]["digits_recorded"] == MAX_DTMF_RECORDED
