"""The replay eval through the PBX, run small: one call placed directly and through the bundled Asterisk against
one agent, both scored, the hop's latency compared, and the call Asterisk recorded scored as a recording."""

import json
import os
import subprocess
import sys

from agent.deploy import images
from tests.conftest import REPO
from tests.deploy.containers import docker_engine  # noqa: F401 - a fixture


def test_one_call_directly_and_through_asterisk_is_scored_both_ways_and_from_asterisks_recording(
        docker_engine, settings, tmp_path):  # noqa: F811 - the fixture imported above
    images.build(images.ASTERISK, log=lambda line: None, pull=False)
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "hours", "call": "a", "say": "What are your opening hours during the week?",
                                 "expect_any": ["Monday to Friday"]}) + "\n")
    out = tmp_path / "out"
    env = {**os.environ, "AGENT_MODELS_DIR": str(settings.models_path.resolve())}
    result = subprocess.run([sys.executable, "-m", "eval.pbx", "--cases", str(cases), "--out", str(out),
                             "--voices", "flite:slt"], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    # What the agent made of each call, to read a miss by (the scratch folder is gone after a CI run).
    turns = "\n".join(line for line in (out / "agent.log").read_text().splitlines() if "event=call." in line)
    for way in ("direct", "pbx", "recorded"):
        (row,) = report["cases"][way]
        # The whole row as text: pytest shortens an object's repr, and a miss is read by what the caller heard.
        assert row["correct"] and row["latency_ms"] is not None, f"{way}: {json.dumps(row)}\n{turns}"
    assert report["pbx_added_ms"]["n"] == 1 and report["verdict_changed"] == []
    # Asterisk's MixMonitor kept the call: each leg, and both mixed.
    (caller,) = (out / "recordings").glob("*-caller.wav")
    assert caller.with_name(caller.name.replace("-caller", "-agent")).is_file()
    assert caller.with_name(caller.name.replace("-caller", "")).is_file()
