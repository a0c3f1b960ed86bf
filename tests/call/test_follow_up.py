"""Per-call memory on a real call: a question the agent misheard but still answered right, then a follow-up
that only makes sense beside it ("How much does it cost?"), answered on the topic of that answer."""

import json

from agent.knowledge.text import tokens
from eval.kit.repeats import NO, YES
from eval.kit.scoring import normalize, word_error_rate
from tests.peers import AgentProcess, flite_wav, heard, place_call

TOKEN = "test-token-follow-up"
FIRST = "I'm a landlord, I need the gas safety paperwork."
FOLLOW_UP = "How much does it cost?"


def _wav(folder, name: str, text: str) -> str:
    return str(flite_wav(folder, name, text, voice="rms"))


def test_a_follow_up_to_a_misheard_question_answered_right_stays_on_its_topic(tmp_path, settings, models):
    # The caller answers a confirmation as the person who asked would (eval.kit.reactions): yes to the certificate.
    about = sorted(set(tokens(FIRST + " gas safety certificate landlords costs")))
    replies = {"yes_audio": _wav(tmp_path, "yes", YES), "no_audio": _wav(tmp_path, "no", NO)}
    script = tmp_path / "script.json"
    # Asked to say it again, the caller says the same question once more.
    steps = [_wav(tmp_path, "first", FIRST), _wav(tmp_path, "follow-up", FOLLOW_UP)]
    script.write_text(json.dumps([{"audio": wav, "repeat_audio": wav, "about": about, **replies} for wav in steps]))
    agent = AgentProcess(tmp_path, settings, admin_token=TOKEN)
    try:
        timeline = place_call(agent, tmp_path / "call", "--script", str(script), "--react", duration=60)
        (call,) = agent.http("GET", "/calls?limit=5", TOKEN).json()["calls"]
        turns = agent.http("GET", f"/calls/{call['id']}", TOKEN).json()["turns"]
    finally:
        agent.stop()
    answers = [t for t in turns if t["answer"]]
    first, follow_up = answers[0], answers[-1]
    # Misheard ("In the landlord, ..."), and answered right all the same.
    assert word_error_rate(FIRST, turns[0]["transcript"]) > 0, turns[0]["transcript"]
    assert "gas safety certificate" in first["answer"]
    # The follow-up is searched beside that answer, not beside the words heard (the agent may confirm it first).
    assert len(answers) == 2 and "$75" in follow_up["answer"], _story(turns, timeline)
    caller_heard = heard(models, timeline, timeline["steps"][-1]["end_tick"])
    assert "75" in caller_heard or "seventy five" in normalize(caller_heard), caller_heard


def _story(turns: list[dict], timeline: dict) -> list:
    """What each side heard, turn by turn: a failure must say whether the agent lost the topic or the caller
    misheard a confirmation and said no to it."""
    return ([(t["transcript"], t["outcome"], t["answer"], t.get("hearing")) for t in turns]
            + [step.get("caller_heard") for step in timeline["steps"]])
