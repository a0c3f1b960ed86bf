"""Real calls on loopback: the agent in its own process, callers in theirs (pjsua2 allows one
Endpoint per process)."""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from eval.scoring import normalize
from tests.conftest import REPO, read_wav, synthesize_caller

_ports = itertools.count(0)
_FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


def next_ports() -> tuple[int, int]:
    """A SIP port and the start of a 100-port RTP range, distinct for every peer in this run."""
    n = (next(_ports) + (os.getpid() % 40) * 10) % 390
    return 15000 + n * 4, 20000 + n * 100


class AgentProcess:
    """`python -m agent run` on loopback with its own data dir, and its structured log."""

    def __init__(self, tmp: Path, settings, wait_ready: bool = True, **overrides: object) -> None:
        self.sip_port, rtp = next_ports()
        self.http_port = self.sip_port + 1
        env = {**os.environ, "AGENT_SIP_PORT": str(self.sip_port), "AGENT_HTTP_PORT": str(self.http_port),
               "AGENT_RTP_PORT_MIN": str(rtp), "AGENT_RTP_PORT_MAX": str(rtp + 98),
               "AGENT_DATA_DIR": str(tmp / "data"), "AGENT_MODELS_DIR": str(settings.models_path.resolve()),
               "AGENT_KB_DIR": str(REPO / "kb")}
        env.update({f"AGENT_{k.upper()}": str(v) for k, v in overrides.items()})
        self.log_path = tmp / f"agent-{self.sip_port}.log"
        self._log = self.log_path.open("w")
        self.process = subprocess.Popen([sys.executable, "-m", "agent", "run"], cwd=REPO, env=env,
                                        stdout=self._log, stderr=subprocess.STDOUT)
        if wait_ready:
            self.wait_ready()

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 120
        while "event=agent.ready" not in self.log_path.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"agent did not start:\n{self.log_path.read_text()[-3000:]}")
            time.sleep(0.2)

    def http(self, method: str, path: str, token: str | None = None, **kwargs):
        """A real HTTP request to the side app."""
        import httpx

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        headers.update(kwargs.pop("headers", {}))
        return httpx.request(method, f"http://127.0.0.1:{self.http_port}{path}", headers=headers, timeout=60,
                             **kwargs)

    @property
    def uri(self) -> str:
        return f"sip:agent@127.0.0.1:{self.sip_port}"

    def events(self, name: str) -> list[dict[str, str]]:
        out = []
        for line in self.log_path.read_text().splitlines():
            if f"event={name} " in line + " ":
                out.append({k: v.strip('"') for k, v in _FIELD.findall(line)})
        return out

    def wait_for(self, name: str, count: int = 1, timeout: float = 20) -> list[dict[str, str]]:
        deadline = time.monotonic() + timeout
        while len(found := self.events(name)) < count and time.monotonic() < deadline:
            time.sleep(0.2)
        return found

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self._log.close()


@pytest.fixture(scope="module")
def agent(tmp_path_factory, settings):
    process = AgentProcess(tmp_path_factory.mktemp("agent"), settings, max_calls=2, inactivity_s=60)
    yield process
    process.stop()
    assert process.process.returncode == 0, process.log_path.read_text()[-3000:]


@pytest.fixture(scope="session")
def questions(tmp_path_factory):
    """Caller questions in flite's slt voice (unlike the agent's Piper voice), as 8 kHz WAVs."""
    import wave

    folder = tmp_path_factory.mktemp("questions")

    def make(name: str, text: str) -> Path:
        pcm = synthesize_caller(folder, text, engine="flite")
        path = folder / f"{name}.wav"
        with wave.open(str(path), "wb") as wav:
            wav.setnchannels(1)
            wav.setsampwidth(2)
            wav.setframerate(8000)
            wav.writeframes(pcm.tobytes())
        return path

    return {"hours": make("hours", "What are your opening hours during the week?"),
            "office": make("office", "Where is your office?"),
            "warranty": make("warranty", "What warranty comes with a new boiler?")}


def place_call(agent: AgentProcess, out: Path, *args: str, duration: float = 16) -> dict:
    """Run eval.caller against the agent; return its timeline (received audio in out/received.wav)."""
    port, rtp = next_ports()
    command = [sys.executable, "-m", "eval.caller", "--target", agent.uri, "--port", str(port),
               "--rtp-port", str(rtp), "--duration", str(duration), "--out", str(out), *args]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=duration + 60)
    assert result.returncode == 0, result.stderr[-3000:]
    timeline = json.loads((out / "timeline.json").read_text())
    timeline["received"], _ = read_wav(out / "received.wav")
    return timeline


def heard(models, timeline: dict, from_tick: int = 0, to_tick: int | None = None) -> str:
    """What the caller heard between two ticks, transcribed by Whisper and normalised."""
    audio = timeline["received"][from_tick * 320:None if to_tick is None else to_tick * 320]
    if len(audio) == 0:
        return ""
    return normalize(models.transcriber.transcribe(audio.astype(np.float32) / 32768).text)
