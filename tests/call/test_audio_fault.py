"""A crash in the audio path, met by a real SIP caller: the agent hangs up at once rather than leaving a
silent line, records the call as failed, frees its slot and goes on answering (tests/call/faulty_agent.py
breaks the VAD once; every other part is the real agent)."""

from datetime import datetime

from eval.kit.scoring import heard_said
from tests.peers import HOURS, AgentProcess, heard, place_call

TOKEN = "test-token-audio-fault"


def _time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def test_an_audio_path_crash_mid_call_hangs_up_and_the_next_caller_is_answered(tmp_path, settings, models,
                                                                               questions):
    # 100 VAD windows (3.2 s of line audio): the caller is mid-question when the VAD breaks.
    agent = AgentProcess(tmp_path, settings, launcher=("-m", "tests.call.faulty_agent", "100"), max_calls=1,
                         admin_token=TOKEN)
    try:
        first = place_call(agent, tmp_path / "first", "--question", str(questions["hours"]), "--question-at", "2",
                           duration=20)
        assert first["status"] == 200 and first["ended_by"] == "agent"  # a BYE, not a silent line
        (failed,) = agent.events("call.audio_failed")
        # What broke and where, as the operator reads it in the log.
        assert failed["detail"] == "onnxruntime session lost" and failed["at"].startswith("faulty_agent.py:")
        (ended,) = agent.events("call.ended")
        assert ended["outcome"] == "failed: audio"
        assert (_time(ended["ts"]) - _time(failed["ts"])).total_seconds() <= 2.0
        (record,) = agent.http("GET", "/calls?limit=5", TOKEN).json()["calls"]
        assert record["outcome"] == "failed: audio" and record["ended"] is not None

        # One call allowed: had the failed call kept its slot, this would get 486.
        second = place_call(agent, tmp_path / "second", "--question", str(questions["hours"]), "--question-at", "3",
                            duration=15)
        assert second["status"] == 200
        assert heard_said(heard(models, second, second["question_end_tick"]), HOURS)
        assert agent.process.poll() is None
    finally:
        agent.stop()
