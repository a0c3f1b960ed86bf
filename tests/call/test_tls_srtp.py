"""SIP over TLS with SRTP, against a real softphone: baresip dials the agent's TLS port with SDES-SRTP and hears
the answer; under AGENT_SRTP=mandatory a plain-RTP offer is refused with 488; connections that never start
their TLS handshake hold no call slot and are dropped after the handshake timeout."""

import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from eval.kit.phone import load_wav
from eval.kit.scoring import heard_said
from tests.conftest import REPO
from tests.peers import HOURS, AgentProcess, baresip_config, heard, next_ports

TOKEN = "tls-srtp-test-token"


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, made as the bundled compose file makes the trunk's
    (`python -m agent tls-cert`). baresip 1.0 does not verify it; a client that trusts exactly it, as Asterisk's
    TLS transport there does, is checked in tests/deploy/test_compose.py. (An operator's openssl-made pair is
    accepted alike: tests/test_settings.py.)"""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "agent.crt", folder / "agent.key"
    subprocess.run([sys.executable, "-m", "agent", "tls-cert", str(cert), str(key), "127.0.0.1"], cwd=REPO,
                   check=True, capture_output=True, timeout=60)
    return cert, key


@pytest.fixture(scope="module")
def secure_agent(tmp_path_factory, settings, certificate):
    cert, key = certificate
    agent = AgentProcess(tmp_path_factory.mktemp("secure"), settings, sip_tls_port=next_ports()[0],
                         sip_tls_cert=cert, sip_tls_key=key, srtp="mandatory", max_calls=2, inactivity_s=60,
                         admin_token=TOKEN)
    yield agent
    agent.stop()
    assert agent.process.returncode == 0, agent.log_path.read_text()[-3000:]


def tls_port(agent: AgentProcess) -> int:
    (listening,) = agent.events("sip.listening")
    assert listening["transports"] == "udp,tcp,tls" and listening["srtp"] == "mandatory"
    return int(listening["tls_port"])


def baresip_call(folder: Path, question: Path, target: str, cafile: Path, seconds: int, mediaenc: str) -> str:
    """baresip dials `target` over TLS with `question` as its microphone; returns its console output. What it
    heard is folder/recordings/*-dec.wav."""
    folder.mkdir(parents=True)
    (folder / "recordings").mkdir()
    microphone = folder / "mic.wav"
    subprocess.run(["sox", str(question), "-r", "8000", "-c", "1", "-b", "16", str(microphone), "pad", "3", "20"],
                   check=True)
    port, rtp = next_ports()
    (folder / "config").write_text(baresip_config("127.0.0.1", port, microphone, rtp, folder / "recordings",
                                                  extra=(f"sip_cafile {cafile}", "call_local_timeout 60"),
                                                  modules=("srtp.so",)))
    encryption = f";mediaenc={mediaenc}" if mediaenc else ""
    (folder / "accounts").write_text(f"<sip:caller@127.0.0.1;transport=tls>;regint=0;answermode=manual;"
                                     f"audio_codecs=PCMU{encryption}\n")
    result = subprocess.run(["baresip", "-f", str(folder), "-e", f"/dial {target}", "-t", str(seconds)],
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=seconds + 30)
    return result.stdout + result.stderr


def test_a_tls_call_with_srtp_is_answered_and_heard_while_unfinished_handshakes_wait(secure_agent, certificate,
                                                                                    questions, models, tmp_path):
    port = tls_port(secure_agent)
    # A hundred connections that never start their TLS handshake, far more than the agent's call slots, half
    # from the caller's own address and half from fifty others: they must not keep a caller out, and the agent
    # drops each once its handshake timeout has passed.
    sources = ["127.0.0.1" if n % 2 else f"127.0.1.{n // 2 + 1}" for n in range(100)]
    idle = [socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
            for source in sources]
    try:
        output = baresip_call(tmp_path / "caller", questions["hours"], f"sip:agent@127.0.0.1:{port};transport=tls",
                              certificate[0], 24, "srtp-mand")
        assert all(_closed_by_peer(connection) for connection in idle)
    finally:
        for connection in idle:
            connection.close()
    recordings = list((tmp_path / "caller" / "recordings").glob("*-dec.wav"))
    assert recordings, output[-3000:]
    received = load_wav(recordings[0])  # 16 kHz
    assert np.abs(received).max() > 1000
    assert heard_said(heard(models, {"received": received}), HOURS), output[-2000:]
    (answered,) = secure_agent.wait_for("call.media", 1, timeout=5)[-1:]
    assert answered["codec"].upper().startswith("PCMU")
    # The call's record says how it came in.
    records = secure_agent.http("GET", "/calls?limit=5", TOKEN).json()["calls"]
    assert [r["transport"] for r in records if r["sip_call_id"] == answered["call"]] == ["sip/tls+srtp"]


def _closed_by_peer(connection: socket.socket) -> bool:
    connection.settimeout(2)
    try:
        return connection.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_a_plain_rtp_offer_is_refused_with_488_under_mandatory_srtp(secure_agent, certificate, questions, tmp_path):
    port = tls_port(secure_agent)
    calls_before = len(secure_agent.events("call.media"))
    output = baresip_call(tmp_path / "plain", questions["hours"], f"sip:agent@127.0.0.1:{port};transport=tls",
                          certificate[0], 8, "")
    assert "session closed: 488 Not Acceptable Here" in output, output[-3000:]
    time.sleep(1)
    assert len(secure_agent.events("call.media")) == calls_before
