"""The way people deploy it, run: both images built here (no registry but Debian's and PyPI's), `docker compose
up` from the repository's own file, and a softphone on the host calling the agent through the bundled Asterisk,
which reaches the agent over its SIP-over-TLS trunk with SRTP audio."""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.request

import pytest

from agent.deploy import images
from agent.deploy.engine import docker
from eval.kit.likeness import HEARD, alike_through_a_line
from eval.kit.phone import load_wav
from eval.kit.scoring import heard_said
from tests.deploy.containers import docker_engine  # noqa: F401 - a fixture
from tests.deploy.stack import ASTERISK, Stack, reachable, running
from tests.deploy.stack import softphone_call as call_through
from tests.peers import HOURS, OFFICE, QUESTIONS, baresip_config, flite_wav, heard, next_ports

PASSWORD = "softphone-test-password"
TOKEN = "stack-test-admin-token-0123"
AGENT = "172.28.0.10"
"""The agent's address on the compose network (docker-compose.yml)."""


@pytest.fixture(scope="module")
def stack(docker_engine, tmp_path_factory):  # noqa: F811 - the fixture imported above
    for image in (images.AGENT, images.ASTERISK):
        images.build(image, log=lambda line: None, pull=False)  # no registry: Debian's archive and PyPI
    with running(tmp_path_factory.mktemp("stack"), ("docker-compose.yml",),
                 {"SOFTPHONE_PASSWORD": PASSWORD, "AGENT_ADMIN_TOKEN": TOKEN, "AGENT_TRANSFER_MODE": "blind"}) as up:
        yield up


def softphone_call(stack: Stack, out, *args: str, duration: float = 18) -> dict:
    return call_through(stack, out, PASSWORD, *args, duration=duration)


def test_asterisk_starts_with_the_bundled_configuration_without_a_warning_and_holds_what_it_says(stack):
    log = stack.logs("asterisk")
    start_up = log[:log.index("Asterisk Ready")]
    assert not [line for line in start_up.splitlines() if re.search(r"\b(WARNING|ERROR)\b", line)]
    endpoints = stack.asterisk("pjsip show endpoints")
    assert all(f"Endpoint:  {name} " in endpoints for name in ("6001", "6002", "agent", "agent-udp"))
    assert "Dial(PJSIP/${EXTEN}@${AGENT_TRUNK},60)" in stack.asterisk("dialplan show 100@from-softphones")
    assert re.search(r"Port start:\s+10000", stack.asterisk("rtp show settings"))


def test_a_softphone_dialling_100_hears_the_answer_over_the_tls_trunk_with_srtp_audio(stack, questions, models,
                                                                                        tmp_path):
    capture = tmp_path / "trunk.pcap"
    interface = "br-" + json.loads(subprocess.run(["docker", "network", "inspect", f"{stack.project}_voice"],
                                                  capture_output=True, text=True).stdout)[0]["Id"][:12]
    tshark = subprocess.Popen(["tshark", "-q", "-i", interface, "-f", f"host {AGENT} and host {ASTERISK}", "-w",
                               str(capture)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        time.sleep(2)  # the capture is listening
        timeline = softphone_call(stack, tmp_path / "call", "--question", str(questions["hours"]), "--question-at",
                                  "3", duration=18)
    finally:
        time.sleep(1)
        tshark.terminate()
        tshark.wait(20)
    assert timeline["status"] == 200
    assert heard_said(heard(models, timeline, timeline["question_end_tick"]), HOURS)
    # The agent's record of the call says how it came in: over the TLS trunk, with SRTP.
    request = urllib.request.Request(f"http://{AGENT}:8000/calls?limit=5", headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        assert {call["transport"] for call in json.load(response)["calls"]} == {"sip/tls+srtp"}
    # The trunk: the call's SIP over TLS (port 5061), none of it in the clear (Asterisk's keep-alive OPTIONS to the
    # UDP trunk aside), and RTP packets that each carry SRTP's authentication tag (a plain 20 ms frame would be
    # 12 + 160 bytes).
    fields = [line.split("\t") for line in subprocess.run(
        ["tshark", "-r", str(capture), "-T", "fields", "-e", "tcp.port", "-e", "udp.length", "-e", "sip.Method"],
        capture_output=True, text=True).stdout.splitlines()]
    tls = [f for f in fields if "5061" in f[0]]
    plain_sip = {f[2] for f in fields if len(f) > 2 and f[2]}
    assert tls and plain_sip <= {"OPTIONS"}, plain_sip
    udp = [int(f[1]) - 8 for f in fields if len(f) > 1 and f[1]]
    media = [size for size in udp if size > 100]
    assert len(media) > 100 and not any(size == 172 for size in media), sorted(set(media))[:10]


def test_star_pressed_on_the_softphone_reaches_the_agent_through_asterisk_and_repeats_the_answer(stack, questions,
                                                                                                 models, tmp_path):
    timeline = softphone_call(stack, tmp_path / "call", "--question", str(questions["office"]), "--question-at", "3",
                              "--dtmf", "*", "--dtmf-after-answer", "--quiet-ms", "1500", duration=26)
    first = heard(models, timeline, timeline["question_end_tick"], timeline["dtmf_tick"])
    repeat = heard(models, timeline, timeline["dtmf_tick"])
    assert heard_said(first, OFFICE) and heard_said(repeat, OFFICE), (first, repeat)


def test_an_agent_that_dies_is_brought_back_by_the_restart_policy_and_answers_the_next_call(stack, questions, models,
                                                                                            tmp_path):
    agent = stack.container("agent")
    restarts = int(docker("inspect", "--format", "{{.RestartCount}}", agent).stdout)
    # A crash, not a stop: the process is killed from outside (a container stopped on purpose stays stopped).
    pid = docker("inspect", "--format", "{{.State.Pid}}", agent).stdout.decode().strip()
    subprocess.run(["kill", "-KILL", pid], check=True)
    deadline = time.monotonic() + 180
    while docker("inspect", "--format", "{{.State.Health.Status}} {{.RestartCount}}", agent).stdout.decode().split() \
            != ["healthy", str(restarts + 1)]:
        assert time.monotonic() < deadline, stack.logs("agent")[-3000:]
        time.sleep(2)
    timeline = softphone_call(stack, tmp_path / "call", "--question", str(questions["hours"]), "--question-at", "3",
                              duration=18)
    assert timeline["status"] == 200 and heard_said(heard(models, timeline, timeline["question_end_tick"]), HOURS)




def reception_phone(stack: Stack, folder, greeting) -> subprocess.Popen:
    """baresip on the host registered with the bundled Asterisk as 6002, answering every call by itself and
    saying `greeting`; what it hears lands in folder/recordings/*-dec.wav once it has quit."""
    (folder / "recordings").mkdir(parents=True)
    port, rtp = next_ports()
    (folder / "config").write_text(baresip_config(stack.gateway(), port, greeting, rtp, folder / "recordings"))
    (folder / "accounts").write_text(f"<sip:6002@{ASTERISK};transport=udp>;auth_pass={PASSWORD};regint=60;"
                                     f"answermode=auto;audio_codecs=PCMU\n")
    phone = subprocess.Popen(["baresip", "-f", str(folder), "-t", "120"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 30
    while not reachable(stack, "6002"):
        assert time.monotonic() < deadline and phone.poll() is None, stack.asterisk("pjsip show contacts")
        time.sleep(0.5)
    return phone


def test_a_caller_asking_for_a_person_is_put_through_asterisk_to_the_reception_which_hears_them(
        stack, questions, models, tmp_path):
    person = flite_wav(tmp_path, "person", "Can I speak to a real person, please?")
    words = flite_wav(tmp_path, "words", "Reception, good morning.")
    greeting = tmp_path / "reception.wav"  # said a second after it answers, then quiet
    subprocess.run(["sox", "-D", str(words), str(greeting), "pad", "1", "20"], check=True)
    phone = reception_phone(stack, tmp_path / "reception", greeting)
    try:
        timeline = softphone_call(stack, tmp_path / "call", "--question", str(person), "--question-at", "3",
                                  "--second", str(questions["hours"]), "--second-at", "20", duration=30)
    finally:
        phone.terminate()
        output = phone.communicate(timeout=30)[0]
    assert timeline["status"] == 200
    # The agent handed the call over (its REFER, which Asterisk ran as a blind transfer in from-agent), the
    # reception rang and answered, and heard the caller's next question; the caller heard the reception.
    (transfer,) = stack.events("agent", "call.transfer")
    assert transfer["result"] == "transferred", transfer
    assert "[6002@from-agent:2] Dial(" in stack.logs("asterisk")
    recordings = sorted((tmp_path / "reception" / "recordings").glob("*-dec.wav"))
    assert recordings, output[-3000:]
    reception_heard = heard(models, {"received": load_wav(recordings[-1])})
    assert heard_said(reception_heard, QUESTIONS["hours"]), (reception_heard, output[-3000:])
    # The caller heard the reception's words (after the agent's "putting you through"), found by lining its audio
    # up with them rather than by what a recogniser makes of the start of a clip.
    alike = alike_through_a_line(timeline["received"][:timeline["second_tick"] * 320], load_wav(words))
    assert alike > HEARD, alike
