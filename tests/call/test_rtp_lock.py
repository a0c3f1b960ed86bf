"""RTP from a stranger mid-call: the caller still hears the answer, the stranger hears nothing."""

import socket
import struct
import subprocess
import sys
import threading
import time

from eval.kit.scoring import heard_said
from tests.peers import HOURS, REPO, AgentProcess, heard, next_ports

STRANGER = "127.0.0.9"


def spray(agent_host: str, rtp_port: int, seconds: float, heard_back: list[int]) -> None:
    """PCMU silence from another address to the call's RTP port, 50 packets a second; counts replies."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind((STRANGER, 0))
        sock.setblocking(False)
        ssrc, sequence, stamp = 0x5EED, 0, 0
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            header = struct.pack("!BBHII", 0x80, 0, sequence & 0xFFFF, stamp, ssrc)
            sock.sendto(header + b"\xff" * 160, (agent_host, rtp_port))
            sequence, stamp = sequence + 1, stamp + 160
            try:
                while True:
                    sock.recv(2048)
                    heard_back[0] += 1
            except BlockingIOError:
                pass
            time.sleep(0.02)


def test_a_stranger_spraying_the_calls_rtp_port_takes_nothing_over(tmp_path, settings, models, questions):
    agent = AgentProcess(tmp_path, settings, inactivity_s=60)
    try:
        port, rtp = next_ports()
        # The caller sends no RTP while quiet, as phones with silence suppression do: the moment a stranger
        # could take the stream over.
        caller = subprocess.Popen([sys.executable, "-m", "eval.kit.caller", "--target", agent.uri, "--port", str(port),
                                   "--rtp-port", str(rtp), "--question", str(questions["hours"]), "--question-at",
                                   "6", "--silence-suppression", "--duration", "22", "--out", str(tmp_path / "c")],
                                  cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        (media,) = agent.wait_for("call.media_locked", 1)
        assert media["locked"] == "True"
        heard_back = [0]
        stranger = threading.Thread(target=spray, args=("127.0.0.1", int(media["rtp_port"]), 14, heard_back))
        stranger.start()
        caller.wait(60)
        stranger.join()
    finally:
        agent.stop()
    import json

    from tests.conftest import read_wav

    timeline = json.loads((tmp_path / "c" / "timeline.json").read_text())
    timeline["received"], _ = read_wav(tmp_path / "c" / "received.wav")
    assert heard_said(heard(models, timeline, timeline["question_end_tick"]), HOURS)
    assert heard_back[0] == 0
