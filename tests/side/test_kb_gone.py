"""A running agent whose KB directory disappears (an unmounted volume): the re-index is refused, /readyz says
why, and callers still get answers from the index it had. When the directory is back, so is readiness."""

import shutil

from eval.kit.scoring import heard_said
from tests.conftest import REPO
from tests.peers import HOURS, AgentProcess, heard, place_call

TOKEN = "kb-gone-test-token"


def test_a_vanished_kb_directory_keeps_the_old_index_answering_and_readiness_says_why(tmp_path, settings, models,
                                                                                    questions):
    kb = tmp_path / "kb"
    shutil.copytree(REPO / "kb", kb)
    agent = AgentProcess(tmp_path, settings, kb_dir=kb, admin_token=TOKEN)
    try:
        shutil.rmtree(kb)
        refused = agent.http("POST", "/kb/reindex", TOKEN)
        assert refused.status_code == 500 and "previous index" in refused.json()["error"]
        assert refused.json()["deleted"] == 0
        ready = agent.http("GET", "/readyz")
        assert ready.status_code == 503 and "previous index" in ready.json()["reasons"]["kb:default"]
        timeline = place_call(agent, tmp_path / "caller", "--question", str(questions["hours"]), "--question-at",
                              "3", duration=16)
        assert heard_said(heard(models, timeline, timeline["question_end_tick"]), HOURS)
        shutil.copytree(REPO / "kb", kb)
        assert agent.http("POST", "/kb/reindex", TOKEN).status_code == 200
        assert agent.http("GET", "/readyz").status_code == 200
    finally:
        agent.stop()
