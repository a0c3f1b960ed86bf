"""Warm transfer over real SIP: the agent calls a person (a pjsua2 user agent) while the caller holds, tells them
who is waiting, and joins the two when they press 1 or say yes; a person who declines or never answers gets the
caller an offer to take a message. Pure parts first: the briefing, what an answer means, the hold tone."""

import subprocess
import sys

import numpy as np
import pytest

from agent.call.commands import Phrase
from agent.call.warm_transfer import TAKE, WAITING, announcement, failure, hold_tone, targets, verdict
from eval.kit.likeness import HEARD, alike_through_a_line
from eval.kit.phone import load_wav
from eval.kit.scoring import heard_said
from tests.conftest import REPO
from tests.peers import AgentProcess, flite_wav, heard, next_ports, place_call

TOKEN = "test-token-warm-transfer"
ECHO_ONCE_ASKED = ("--echo-db", "-6", "--echo-from-s", "10")
"""The caller's question is over by then (it starts at 3 s), and the agent, finding someone, listens to no turn."""


def record_of(agent, timeline: dict) -> dict:
    """The call's record, once the call has ended."""
    agent.wait_for("call.ended", 1)
    calls = agent.http("GET", "/calls", TOKEN).json()["calls"]
    (call,) = [c for c in calls if c["sip_call_id"] == timeline["sip_call_id"]]
    return call


def test_the_person_hears_who_is_waiting_what_they_asked_and_what_they_were_told():
    said = announcement("<sip:5551234@pbx>", "Do you fit heat pumps?", "We do not fit heat pumps.")
    assert "5 5 5 1 2 3 4" in said and "They asked: Do you fit heat pumps." in said
    assert "I told them: We do not fit heat pumps." in said and "Press 1" in said


@pytest.mark.parametrize("digit, words, accepts", [("1", None, True), ("2", None, False), ("5", None, None),
                                                   (None, "Yes, put them through.", True), (None, "No.", False),
                                                   (None, "Hello?", None)])
def test_1_or_yes_accepts_and_2_or_no_declines(digit, words, accepts):
    assert verdict(digit, words) is accepts


def test_several_people_are_tried_in_the_order_given_and_a_refusal_says_why():
    assert targets(" sip:a@pbx, sip:b@pbx ,") == ("sip:a@pbx", "sip:b@pbx")
    assert [failure(r) for r in ("486 Busy Here", "603 Decline", "408 Request Timeout", "500 Oops")] == \
        ["busy", "declined", "no answer", "failed"]


def test_the_hold_tone_is_soft_and_mostly_quiet():
    tone = hold_tone()
    assert len(tone) == 3 * 16000 and np.abs(tone).max() < 0.1 * 32768 and (tone == 0).mean() > 0.7


@pytest.fixture(scope="module")
def voices(tmp_path_factory):
    folder = tmp_path_factory.mktemp("warm-voices")
    return {"ask": flite_wav(folder, "ask", "Can I speak to a real person, please?"),
            "yes": flite_wav(folder, "yes", "Yes, put them through.", voice="awb"),
            "hello": flite_wav(folder, "hello", "Reception, good morning. How can I help?", voice="kal")}


@pytest.fixture(scope="module")
def warm_agent(tmp_path_factory, settings):
    folder = tmp_path_factory.mktemp("warm")
    person_port = next_ports()[0]
    agent = AgentProcess(folder, settings, inactivity_s=60, transfer_mode="warm", transfer_ring_s=6, admin_token=TOKEN,
                         transfer_to=f"sip:person@127.0.0.1:{person_port}")
    agent.person_port = person_port
    yield agent
    agent.stop()


def person(agent, folder, mode: str, voices, duration: float = 45) -> subprocess.Popen:
    """The person's user agent at the transfer target's address, for one call; what it prints goes to
    person.log (a file, not a pipe nobody reads until it exits, which a chatty phone could fill and block on)."""
    with (folder / "person.log").open("w") as log:
        return subprocess.Popen([sys.executable, "-m", "eval.kit.person", "--port", str(agent.person_port),
                                 "--rtp-port", str(next_ports()[1]), "--mode", mode, "--yes", str(voices["yes"]),
                                 "--say", str(voices["hello"]), "--duration", str(duration),
                                 "--out", str(folder / "person")], cwd=REPO, stdout=log, stderr=subprocess.STDOUT)


def person_ended_well(ua: subprocess.Popen, folder) -> None:
    assert ua.wait(timeout=60) == 0, (folder / "person.log").read_text()[-2000:]


def received(folder) -> np.ndarray:
    return load_wav(folder / "person" / "received.wav")


def person_timeline(folder) -> dict:
    import json

    return json.loads((folder / "person" / "timeline.json").read_text())


@pytest.mark.parametrize("mode", ["accept", "accept-voice"])
def test_the_person_who_accepts_is_told_who_waits_and_then_the_two_hear_each_other(warm_agent, voices, models,
                                                                                    tmp_path, mode):
    ua = person(warm_agent, tmp_path, mode, voices, duration=75)
    # The caller sends back what it hears (an echo at -6 dB): once the two are joined, the person hears their own
    # words come back through the caller's line, whenever that happens. The echo starts once the caller has asked
    # for a person: at -6 dB it is louder than the agent's echo gate lets pass (see echo), and would otherwise
    # talk over the greeting.
    timeline = place_call(warm_agent, tmp_path, "--question", str(voices["ask"]), *ECHO_ONCE_ASKED, duration=60)
    person_ended_well(ua, tmp_path)
    taken = person_timeline(tmp_path)
    assert "answered_tick" in taken and ("pressed" in taken) == (mode == "accept")
    audio = received(tmp_path)
    briefing = heard(models, {"received": audio[:taken["briefing_end_tick"] * 320]})
    assert heard_said(briefing, WAITING) and heard_said(briefing, TAKE), briefing
    # The caller hears the person, and the person hears their own words come back through the caller's line:
    # found by lining the audio up with the person's recording (through G.711 both ways, and jitter buffers
    # that drop or repeat frames when the machine is busy).
    hello = load_wav(voices["hello"])
    caller_heard = alike_through_a_line(timeline["received"][timeline["question_end_tick"] * 320:], hello)
    person_heard = alike_through_a_line(audio[taken["said_tick"] * 320:], hello)
    assert caller_heard > HEARD and person_heard > HEARD, (caller_heard, person_heard)
    (done,) = [e for e in warm_agent.events("call.transfer") if e["call"] == timeline["sip_call_id"]]
    assert (done["result"], done["mode"]) == ("transferred", "warm")
    record = record_of(warm_agent, timeline)
    assert record["outcome"] == "transferred"
    # This caller's phone refuses REFER: the two stay joined through the agent.
    assert record["transfers"] == [{"to": f"sip:person@127.0.0.1:{warm_agent.person_port}", "mode": "warm",
                                    "result": "transferred", "joined": "bridged"}]


@pytest.mark.parametrize("mode, result", [("decline", "declined"), ("no-answer", "no answer"), ("busy", "busy")])
def test_a_person_who_does_not_take_the_call_gets_the_caller_an_offer_of_a_message(warm_agent, voices, models,
                                                                                    tmp_path, mode, result):
    ua = person(warm_agent, tmp_path, mode, voices, duration=30)
    timeline = place_call(warm_agent, tmp_path, "--question", str(voices["ask"]), duration=36)
    ua.wait(timeout=60)
    (done,) = [e for e in warm_agent.events("call.transfer") if e["call"] == timeline["sip_call_id"]]
    assert done["result"] == result
    said = heard(models, timeline, timeline["question_end_tick"])
    assert heard_said(said, Phrase.TRANSFER_FAILED.value), said
    assert [t["result"] for t in record_of(warm_agent, timeline)["transfers"]] == [result]


def test_a_phone_that_takes_replaces_is_handed_the_person_and_the_agent_leaves_the_line(warm_agent, voices, models,
                                                                                       tmp_path):
    ua = person(warm_agent, tmp_path, "accept", voices, duration=75)
    timeline = place_call(warm_agent, tmp_path, "--question", str(voices["ask"]), *ECHO_ONCE_ASKED,
                          "--accept-transfer", "--stay-transferred-s", "20", duration=60)
    person_ended_well(ua, tmp_path)
    taken = person_timeline(tmp_path)
    assert "replaced_s" in taken  # the caller's phone called the person itself, replacing the agent's call
    hello = load_wav(voices["hello"])
    caller_heard = alike_through_a_line(timeline["received"][timeline["question_end_tick"] * 320:], hello)
    person_heard = alike_through_a_line(received(tmp_path)[taken["said_tick"] * 320:], hello)
    assert caller_heard > HEARD and person_heard > HEARD, (caller_heard, person_heard)
    assert timeline["transferred_status"] == 200 and timeline["ended_by"] == "agent"
    (handed,) = [e for e in warm_agent.events("call.hand_over") if e["call"] == timeline["sip_call_id"]]
    assert handed["status"] == "200"
    assert record_of(warm_agent, timeline)["transfers"][0]["joined"] == "replaced"
