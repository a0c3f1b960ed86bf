"""Transfer to a person over real SIP: the agent REFERs a pjsua2 caller, which calls a SIPp target; a busy
target or a profile without one gets the caller an offer to take a message."""

import subprocess
import time
import wave
from pathlib import Path

import pytest

from agent.call.commands import Phrase
from eval.kit.owner import WebhookReceiver
from eval.kit.scoring import heard_said
from tests.conftest import REPO, synthesize_caller
from tests.peers import AgentProcess, heard, next_ports, place_call

BUSY = Path(__file__).parent / "sipp" / "uas_busy.xml"
WEBHOOK_SECRET = "transfer-webhook-secret-01"


@pytest.fixture(scope="module")
def person(tmp_path_factory):
    folder = tmp_path_factory.mktemp("person")
    path = folder / "person.wav"
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(8000)
        wav.writeframes(synthesize_caller(folder, "Can I speak to a real person, please?", engine="flite").tobytes())
    return path


@pytest.fixture(scope="module")
def owner():
    """The owner's webhook receiver (real HTTP on loopback): told of every failed transfer."""
    receiver = WebhookReceiver(WEBHOOK_SECRET).start()
    yield receiver
    receiver.stop()


@pytest.fixture(scope="module")
def transfer_agent(tmp_path_factory, settings, owner):
    """Extension 200 transfers to a target on `target_port`; every other extension has nobody to transfer to."""
    tmp = tmp_path_factory.mktemp("transfer")
    target_port = next_ports()[0]
    dialplan = tmp / "dialplan.toml"
    dialplan.write_text(f'default = "main"\n[profiles.main]\nkb_dir = "{REPO / "kb"}"\n'
                        f'[profiles.front]\nextensions = ["200"]\nkb_dir = "{REPO / "kb"}"\n'
                        f'transfer_to = "sip:reception@127.0.0.1:{target_port}"\n')
    agent = AgentProcess(tmp, settings, dialplan=dialplan, inactivity_s=60, transfer_mode="blind",
                         webhook_url=owner.url, webhook_secret=WEBHOOK_SECRET)
    agent.target_port = target_port
    yield agent
    agent.stop()


def target(agent, tmp_path, *scenario: str) -> subprocess.Popen:
    """A SIPp UAS at the transfer target's address, for one call."""
    return subprocess.Popen(["sipp", *scenario, "-i", "127.0.0.1", "-p", str(agent.target_port),
                             "-mp", str(next_ports()[1]), "-m", "1", "-timeout", "60s", "-nostdin",
                             "-trace_msg", "-message_file", str(tmp_path / "target.log")], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_caller_asking_for_a_person_is_transferred_and_the_target_answers(transfer_agent, person, tmp_path):
    sipp = target(transfer_agent, tmp_path, "-sn", "uas")
    timeline = place_call(transfer_agent, tmp_path, "--question", str(person), "--accept-transfer", dial="200",
                          duration=30)
    assert sipp.wait(timeout=60) == 0, sipp.stdout.read()[-2000:]  # the target got the INVITE and answered
    assert timeline["transfer_to"] == f"sip:reception@127.0.0.1:{transfer_agent.target_port}"
    assert timeline["transferred_status"] == 200 and timeline["ended_by"] == "agent"
    invite = (tmp_path / "target.log").read_text()
    assert "INVITE sip:reception@127.0.0.1" in invite
    # The agent's REFER named it as the referrer, and the caller carried that on to the person it called.
    assert "Referred-By: <sip:200@127.0.0.1" in invite
    (done,) = [e for e in transfer_agent.wait_for("call.transfer", 1) if e["call"] == timeline["sip_call_id"]]
    assert done["result"] == "transferred"
    ended = [e for e in transfer_agent.wait_for("call.ended", 1) if e["call"] == timeline["sip_call_id"]]
    assert ended[0]["outcome"] == "transferred"


def test_a_busy_target_gets_the_caller_an_offer_to_take_a_message(transfer_agent, models, person, tmp_path):
    sipp = target(transfer_agent, tmp_path, "-sf", str(BUSY))
    before = len(transfer_agent.events("call.transfer"))
    timeline = place_call(transfer_agent, tmp_path, "--question", str(person), "--accept-transfer", dial="200",
                          duration=24)
    assert sipp.wait(timeout=60) == 0, sipp.stdout.read()[-2000:]
    assert timeline["transferred_status"] == 486 and timeline["ended_by"] == "caller"
    result = transfer_agent.wait_for("call.transfer", before + 1)[-1]
    assert result["result"] == "transfer failed" and result["status"].startswith("486")
    said = heard(models, timeline, timeline["question_end_tick"])
    assert heard_said(said, Phrase.TRANSFER_FAILED.value), said


def test_the_owner_is_told_of_the_transfer_that_failed(transfer_agent, owner, person, tmp_path):
    sipp = target(transfer_agent, tmp_path, "-sf", str(BUSY))
    timeline = place_call(transfer_agent, tmp_path, "--question", str(person), "--accept-transfer", dial="200",
                          duration=24)
    assert sipp.wait(timeout=60) == 0, sipp.stdout.read()[-2000:]
    deadline = time.monotonic() + 30
    while not (told := [r for r in owner.received if r["body"]["call"]["sip_call_id"] == timeline["sip_call_id"]]) \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [(r["body"]["type"], r["body"]["transfer"]["result"], r["signed"]) for r in told] == \
        [("transfer.failed", "transfer failed", True)]
    assert told[0]["body"]["transfer"]["to"] == f"sip:reception@127.0.0.1:{transfer_agent.target_port}"


def test_without_anyone_to_transfer_to_the_digit_gets_an_offer_to_take_a_message(transfer_agent, models, tmp_path):
    timeline = place_call(transfer_agent, tmp_path, "--dtmf", "0", "--dtmf-at", "5", duration=16)
    said = heard(models, timeline, timeline["dtmf_tick"])
    assert heard_said(said, Phrase.NO_TRANSFER.value), said
    assert "transfer_to" not in timeline
