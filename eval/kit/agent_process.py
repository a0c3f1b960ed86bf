"""Run `python -m agent run` in its own process on loopback ports, and read its structured log.

Used by eval.replay and by the tests: pjsua2 allows one Endpoint per process, so the agent and
every caller each get their own.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


def events(log: str, name: str) -> list[dict[str, str]]:
    """The fields of each `name` event in an agent's structured log (logfmt lines), in order."""
    return [{k: v.strip('"') for k, v in _FIELD.findall(line)} for line in log.splitlines()
            if f"event={name} " in line + " "]


class AgentProcess:
    """`python -m agent run` on loopback with its own data dir, and its structured log."""

    def __init__(self, tmp: Path, ports: tuple[int, int], models_dir: Path, wait_ready: bool = True,
                 launcher: tuple[str, ...] = ("-m", "agent", "run"), **overrides: object) -> None:
        """`launcher`: the interpreter's arguments that start it (a test may start it through a wrapper)."""
        self.sip_port, rtp = ports
        self.http_port = self.sip_port + 1
        env = {**os.environ, "AGENT_SIP_PORT": str(self.sip_port), "AGENT_HTTP_PORT": str(self.http_port),
               "AGENT_RTP_PORT_MIN": str(rtp), "AGENT_RTP_PORT_MAX": str(rtp + 98),
               "AGENT_DATA_DIR": str(tmp / "data"), "AGENT_MODELS_DIR": str(models_dir.resolve()),
               "AGENT_KB_DIR": str(REPO / "kb"),
               # Rendering the whole KB's answers takes both cores for half a minute after every start;
               # a test or eval agent renders only what it speaks (AGENT_SPEECH_PRERENDER=true to render all).
               "AGENT_SPEECH_PRERENDER": "false"}
        env.update({f"AGENT_{k.upper()}": str(v) for k, v in overrides.items()})
        self.log_path = tmp / f"agent-{self.sip_port}.log"
        self._log = self.log_path.open("w")
        self.process = subprocess.Popen([sys.executable, *launcher], cwd=REPO, env=env,
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
        return events(self.log_path.read_text(), name)

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
