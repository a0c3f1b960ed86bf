"""End-to-end calls through a real SIP client (pjsua2 in its own process) with the real models."""

import json

import pytest

from agent.knowledge.text import tokens
from agent.settings import Settings
from eval.kit.repeats import NO, YES
from eval.kit.scoring import heard_said, normalize
from tests.peers import (
    HOURS,
    OFFICE,
    QUESTIONS,
    WARRANTY,
    AgentProcess,
    flite_wav,
    heard,
    heard_goodbye,
    likeness,
    place_call,
)


def _reacting_script(folder, questions, *steps: tuple[str, str, int | None]):
    """A script for a caller who says each (question, the answer it expects, barge-in ms) in turn and, as a person
    would, says it again when asked to and yes or no to a confirmation: on a loaded machine tiny.en once heard the
    hours question over PCMU as "What are your opening hours, wearing the week?", and the warranty one as "What
    Warren V comes with a new boiler?", a near miss the agent rightly asked again and a middling one it confirmed."""
    replies = {"yes_audio": str(flite_wav(folder, "yes", YES)), "no_audio": str(flite_wav(folder, "no", NO))}
    script = folder / "script.json"
    script.write_text(json.dumps([{"audio": str(questions[name]), "repeat_audio": str(questions[name]),
                                   "about": sorted(set(tokens(f"{QUESTIONS[name]} {expected}"))),
                                   "barge_in_at_ms": barge_in_at_ms, **replies}
                                  for name, expected, barge_in_at_ms in steps]))
    return script


@pytest.mark.parametrize(("codec", "negotiated"), [("PCMU", "PCMU/8000"), ("G722", "G722/16000")])
def test_a_caller_hears_the_grounded_answer(agent, models, questions, tmp_path, codec, negotiated):
    script = _reacting_script(tmp_path, questions, ("hours", HOURS, None))
    timeline = place_call(agent, tmp_path / "call", "--codec", codec, "--script", str(script), "--react", duration=30)
    assert timeline["status"] == 200 and timeline["ended_by"] == "caller"
    # The greeting is heard as sound before the question (what a recogniser makes of the agent's own prompt is no
    # claim about the agent: tiny.en once heard "how come i help you"); the answer is heard as words.
    assert any(tick < timeline["steps"][0]["start_tick"] for tick in timeline["received_voiced_ticks"])
    answer = heard(models, timeline, timeline["steps"][-1]["end_tick"])
    assert heard_said(answer, HOURS), (answer, [step.get("kind") for step in timeline["steps"]])
    media = [e for e in agent.events("call.media") if e["codec"] == negotiated]
    assert media, agent.events("call.media")


def test_barge_in_silences_the_answer_and_the_new_question_is_answered(agent, models, questions, tmp_path):
    before = len(agent.events("call.barge_in"))
    script = _reacting_script(tmp_path, questions, ("hours", HOURS, None), ("warranty", WARRANTY, 1000))
    timeline = place_call(agent, tmp_path / "call", "--script", str(script), "--react", duration=40)
    barged = [step for step in timeline["steps"] if step["case"] == 1]
    assert barged, "the first answer never started"
    assert len(agent.wait_for("call.barge_in", before + 1)) == before + 1
    # Generous bound for a shared machine: silence within 1 s of the caller starting to talk
    # (eval.replay measures the reaction time precisely).
    start, end = barged[0]["start_tick"], barged[0]["end_tick"]
    during = [t for t in timeline["received_voiced_ticks"] if start + 50 <= t <= end]
    assert during == [], f"agent still audible {len(during)} ticks after the barge-in"
    answer = heard(models, timeline, timeline["steps"][-1]["end_tick"])
    assert heard_said(answer, WARRANTY), (answer, [step.get("kind") for step in timeline["steps"]])


def test_the_agents_own_echo_does_not_barge_in(agent, models, questions, tmp_path):
    before = len(agent.events("call.barge_in"))
    timeline = place_call(agent, tmp_path, "--question", str(questions["hours"]), "--question-at", "3",
                          "--echo-db", "-12", "--echo-delay-ms", "100", duration=16)
    assert heard_said(heard(models, timeline, timeline["question_end_tick"]), HOURS)
    assert len(agent.events("call.barge_in")) == before


def test_dtmf_star_repeats_the_last_answer(agent, models, questions, tmp_path):
    # The star is pressed once the first answer is over (1.5 s of silence), never at a fixed time.
    timeline = place_call(agent, tmp_path, "--question", str(questions["office"]), "--question-at", "3",
                          "--dtmf", "*", "--dtmf-after-answer", "--quiet-ms", "1500", duration=26)
    first = heard(models, timeline, timeline["question_end_tick"], timeline["dtmf_tick"])
    repeat = heard(models, timeline, timeline["dtmf_tick"])
    assert heard_said(first, OFFICE) and heard_said(repeat, OFFICE), (first, repeat)
    assert any(e["digit"] == "*" for e in agent.events("call.dtmf"))


def test_hold_keeps_the_call_and_nothing_is_answered_while_held(agent, models, questions, tmp_path):
    timeline = place_call(agent, tmp_path, "--hold-at", "3", "--question", str(questions["office"]),
                          "--question-at", "5", "--unhold-at", "9", "--second", str(questions["hours"]),
                          "--second-at", "11", duration=26)  # room for the answer on a loaded machine
    assert timeline["ended_by"] == "caller"
    assert "fire station" not in heard(models, timeline, timeline["question_tick"], timeline["second_tick"])
    assert heard_said(heard(models, timeline, timeline["second_end_tick"]), HOURS)
    assert agent.events("call.hold")


def test_beyond_max_calls_the_next_invite_gets_486_and_silence_ends_the_call(tmp_path, settings, questions):
    agent = AgentProcess(tmp_path, settings, max_calls=1, inactivity_s=4)
    try:
        import subprocess
        import sys

        from tests.peers import REPO, next_ports

        port, rtp = next_ports()
        first = subprocess.Popen([sys.executable, "-m", "eval.kit.caller", "--target", agent.uri, "--port", str(port),
                                  "--rtp-port", str(rtp), "--duration", "25", "--out", str(tmp_path / "first")],
                                 cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        agent.wait_for("call.media")
        second = place_call(agent, tmp_path / "second", duration=5)
        assert second["status"] == 486
        first.wait(60)
        import json

        timeline = json.loads((tmp_path / "first" / "timeline.json").read_text())
        assert timeline["ended_by"] == "agent"  # asked "are you still there?", then said goodbye
        assert any(e["outcome"] == "caller silent" for e in agent.events("call.ended"))
    finally:
        agent.stop()


def test_long_calls_and_dead_calls_are_ended_by_the_agent(tmp_path, settings):
    """max_call_s says goodbye and hangs up; a caller that vanishes (no BYE, no RTP) is hung up."""
    import signal
    import subprocess
    import sys

    from tests.peers import REPO, next_ports

    agent = AgentProcess(tmp_path, settings, max_call_s=10, dead_call_s=5, inactivity_s=60)
    try:
        long_call = place_call(agent, tmp_path / "long", duration=25)
        assert long_call["ended_by"] == "agent"
        port, rtp = next_ports()
        vanishing = subprocess.Popen([sys.executable, "-m", "eval.kit.caller", "--target", agent.uri,
                                      "--port", str(port), "--rtp-port", str(rtp), "--duration", "30",
                                      "--out", str(tmp_path / "gone")],
                                     cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert len(agent.wait_for("call.media", 2)) == 2
        vanishing.send_signal(signal.SIGKILL)
        vanishing.wait()
        ended = agent.wait_for("call.ended", 2, timeout=30)
        assert [e["outcome"] for e in ended] == ["maximum call length", "dead call (no RTP)"]
    finally:
        agent.stop()


def test_a_caller_saying_goodbye_hears_the_goodbye_and_the_agent_hangs_up(agent, models, questions, tmp_path):
    timeline = place_call(agent, tmp_path, "--question", str(questions["goodbye"]), "--question-at", "5",
                          duration=25)
    assert timeline["ended_by"] == "agent"
    assert heard_goodbye(heard(models, timeline, timeline["question_end_tick"]))
    assert agent.events("call.ended")[-1]["outcome"] == "caller said goodbye"


def test_a_consent_notice_is_heard_before_the_greeting(tmp_path, settings, models):
    agent = AgentProcess(tmp_path, settings, consent_notice="This call may be recorded for quality.")
    try:
        timeline = place_call(agent, tmp_path / "caller", duration=8)
    finally:
        agent.stop()
    opening = heard(models, timeline)
    notice, greeting = normalize("This call may be recorded for quality."), normalize(Settings.greeting)
    assert likeness(opening, f"{notice} {greeting}") > likeness(opening, f"{greeting} {notice}"), opening
