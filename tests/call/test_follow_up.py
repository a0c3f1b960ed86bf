"""Per-call memory on a real call: a question the agent misheard but still answered right, then a follow-up
that only makes sense beside it ("How much does it cost?"), answered on the topic of that answer."""

import json
import wave

from eval.scoring import normalize, word_error_rate
from tests.conftest import synthesize_caller
from tests.peers import AgentProcess, heard, place_call

TOKEN = "test-token-follow-up"
FIRST = "I'm a landlord, I need the gas safety paperwork."
FOLLOW_UP = "How much does it cost?"


def _wav(folder, name: str, text: str) -> str:
    pcm = synthesize_caller(folder, text, engine="flite", voice="rms")
    path = folder / f"{name}.wav"
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(pcm.tobytes())
    return str(path)


def test_a_follow_up_to_a_misheard_question_answered_right_stays_on_its_topic(tmp_path, settings, models):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"audio": _wav(tmp_path, "first", FIRST)},
                                  {"audio": _wav(tmp_path, "follow-up", FOLLOW_UP)}]))
    agent = AgentProcess(tmp_path, settings, admin_token=TOKEN)
    try:
        timeline = place_call(agent, tmp_path / "call", "--script", str(script), duration=40)
        (call,) = agent.http("GET", "/calls?limit=5", TOKEN).json()["calls"]
        first, follow_up = agent.http("GET", f"/calls/{call['id']}", TOKEN).json()["turns"][:2]
    finally:
        agent.stop()
    # Misheard ("In the landlord, ..."), and answered right all the same.
    assert word_error_rate(FIRST, first["transcript"]) > 0, first["transcript"]
    assert "gas safety certificate" in first["answer"]
    # The follow-up is searched beside that answer, not beside the words heard.
    assert "$75" in follow_up["answer"], follow_up
    caller_heard = heard(models, timeline, timeline["steps"][1]["end_tick"])
    assert "75" in caller_heard or "seventy five" in normalize(caller_heard), caller_heard
