"""Warm transfer through the bundled Asterisk, as docker-compose.yml deploys it with AGENT_TRANSFER_MODE=warm: the
agent calls the reception (6002) through Asterisk over its TLS trunk, tells them who is waiting, and once they press
1 hands the caller's call over with REFER and Replaces, which Asterisk runs as an attended transfer: the caller and
the reception then talk through Asterisk alone, and the agent's two calls are gone."""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import time

import pytest

from agent.deploy import images
from eval.kit.likeness import HEARD, alike_through_a_line
from eval.kit.phone import load_wav
from eval.kit.scoring import heard_said
from tests.conftest import REPO
from tests.deploy.containers import docker_engine  # noqa: F401 - a fixture
from tests.deploy.stack import ASTERISK, Stack, reachable, running, softphone_call
from tests.peers import flite_wav, heard, next_ports

PASSWORD = "softphone-test-password"
TOKEN = "stack-test-admin-token-0123"
LATER = "I would like to book a boiler service next week."
"""What the caller says once the reception has them."""


@pytest.fixture(scope="module")
def stack(docker_engine, tmp_path_factory):  # noqa: F811 - the fixture imported above
    for image in (images.AGENT, images.ASTERISK):
        images.build(image, log=lambda line: None, pull=False)
    with running(tmp_path_factory.mktemp("warm-stack"), ("docker-compose.yml",),
                 {"SOFTPHONE_PASSWORD": PASSWORD, "AGENT_ADMIN_TOKEN": TOKEN, "AGENT_TRANSFER_MODE": "warm"}) as up:
        yield up


def reception(stack: Stack, out, hello) -> subprocess.Popen:
    """The person: a pjsua2 softphone registered with Asterisk as 6002 that answers, presses 1 once the agent's
    briefing is over, then says `hello`."""
    port, rtp = next_ports()
    out.mkdir(parents=True, exist_ok=True)
    with (out / "phone.log").open("w") as log:  # a file: a pipe nobody reads until the phone exits could fill up
        phone = subprocess.Popen([sys.executable, "-m", "eval.kit.person", "--address", stack.gateway(),
                                  "--port", str(port), "--rtp-port", str(rtp), "--registrar", f"sip:{ASTERISK}",
                                  "--user", "6002", "--password", PASSWORD, "--mode", "accept", "--say", str(hello),
                                  "--duration", "60", "--out", str(out)], cwd=REPO, stdout=log,
                                 stderr=subprocess.STDOUT)
    while not reachable(stack, "6002"):  # the phone gives up (and exits) 15 s into registering
        assert phone.poll() is None, (out / "phone.log").read_text()[-2000:]
        time.sleep(0.5)
    return phone


def test_the_reception_takes_the_call_and_asterisk_joins_it_to_the_caller_without_the_agent(stack, models, tmp_path):
    ask = flite_wav(tmp_path, "ask", "Can I speak to a real person, please?")
    hello = flite_wav(tmp_path, "hello", "Reception, good morning. How can I help?", voice="kal")
    later = flite_wav(tmp_path, "later", LATER)
    phone = reception(stack, tmp_path / "person", hello)
    timeline = softphone_call(stack, tmp_path / "call", PASSWORD, "--question", str(ask), "--question-at", "3",
                              "--second", str(later), "--second-at", "34", duration=45)
    assert phone.wait(timeout=90) == 0, (tmp_path / "person" / "phone.log").read_text()[-2000:]
    taken = json.loads((tmp_path / "person" / "timeline.json").read_text())
    assert taken.get("pressed") == "1", taken
    (transfer,) = stack.events("agent", "call.transfer")
    (handed,) = stack.events("agent", "call.hand_over")
    assert (transfer["result"], transfer["mode"], str(handed["status"])) == ("transferred", "warm", "200")
    # The caller hears the reception, and the reception hears what the caller says next.
    caller_score = alike_through_a_line(timeline["received"][timeline["question_end_tick"] * 320:], load_wav(hello))
    assert caller_score > HEARD, caller_score
    person_heard = load_wav(tmp_path / "person" / "received.wav")
    # Transcribed from the first sound after the reception took the call, whenever the caller's words come.
    voiced = [tick for tick in taken["received_voiced_ticks"] if tick >= taken["said_tick"]]
    assert voiced, "the reception heard nothing once it had taken the call"
    said = heard(models, {"received": person_heard[(voiced[0] - 10) * 320:]})
    assert heard_said(said, LATER), said
    # ... when the agent's call with the caller had already ended: Asterisk had joined the two itself.
    (ended,) = stack.events("agent", "call.ended")
    first_at, last_tick, last_at = timeline["clock"]
    second_said_at = first_at + timeline["second_tick"] * (last_at - first_at) / max(last_tick - 1, 1)
    assert datetime.datetime.fromisoformat(ended["ts"].replace("Z", "+00:00")).timestamp() < second_said_at
