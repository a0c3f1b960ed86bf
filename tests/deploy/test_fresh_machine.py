"""A newcomer's fresh Debian 12, made from Debian's archive, with the distribution's own Python (3.11.2, older than
the one first on these machines' PATH): `make run` installs everything and answers a call, and `make test`'s
install steps pass there.

Installing from nothing takes minutes, so the installed machine is kept as an image named by a key of everything
the install steps read (the Makefile, pyproject.toml, the pjsua2 pin and build, the model manifest): a change to
any of them installs from nothing again. Every run then starts that machine with this checkout's files and runs
`make run` there, which re-verifies the install and starts the agent on Debian's Python, and calls it.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from pathlib import Path

import pytest

from agent.deploy.debian_base import make_base
from agent.deploy.engine import docker, image_exists
from eval.kit.scoring import heard_said
from tests.conftest import REPO, read_wav
from tests.deploy.containers import Machine, docker_engine, own_network  # noqa: F401 - a fixture
from tests.peers import HOURS, heard

BASE_PACKAGES = ("ca-certificates", "python3", "make", "git")
"""What a newcomer who has cloned the repository has: Debian's python3, make and git (minbase holds the rest of
a Debian install's essentials)."""
DEBIAN_PYTHON = "Python 3.11.2"
INSTALL_INPUTS = ("Makefile", "pyproject.toml", "agent/sip/pjproject", "agent/models/manifest.toml")
IMAGE = "phone-agent-fresh-debian"
READY = "The agent is ready"
NOT_IN_A_CONTAINER = {"containers"}
"""make test's steps that start Docker Engine itself: a container cannot, and has no need to."""


def make_prerequisites(target: str, makefile: Path = REPO / "Makefile") -> list[str]:
    """The targets `target:` depends on in the Makefile, in order."""
    match = re.search(rf"^{re.escape(target)}:([^=\n]*)$", makefile.read_text(), re.MULTILINE)
    assert match, f"no `{target}:` rule in {makefile}"
    return match.group(1).split()


def install_key() -> str:
    digest = hashlib.sha256()
    for name in INSTALL_INPUTS:
        path = REPO / name
        for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
            if file.is_file() and "__pycache__" not in file.parts:
                digest.update(file.relative_to(REPO).as_posix().encode() + b"\0" + file.read_bytes())
    digest.update(" ".join(BASE_PACKAGES).encode())
    return digest.hexdigest()[:12]


class Output:
    """A process's output lines, read as they come, waited on for a line holding some text."""

    def __init__(self, process) -> None:
        self.process, self.lines = process, []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line)

    def wait_for(self, text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            if self.process.poll() is not None or time.monotonic() > deadline:
                time.sleep(0.5)  # the last lines
                raise AssertionError(f"no {text!r} (exit {self.process.poll()}):\n{''.join(self.lines)[-5000:]}")
            time.sleep(0.5)


def run_agent_until_ready(machine: Machine, timeout: float) -> tuple:
    process = machine.start("make run 2>&1")
    output = Output(process)
    output.wait_for(READY, timeout)
    return process, output


STOP_AGENT = ("for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null "
              "| grep -q '^[.]venv/bin/python -m agent run' && kill -TERM ${p#/proc/}; done; true")
"""SIGTERM to the agent `make run` started, found by its command line (a fresh Debian has no pkill; anchored, the
pattern does not match this very shell's command line)."""


def stop_agent(machine: Machine, process) -> None:
    machine.sh(STOP_AGENT)
    process.wait(60)


@pytest.fixture(scope="module")
def installed(docker_engine):  # noqa: F811 - the fixture imported above
    """The image of a fresh Debian 12 on which `make run` reached a ready agent and `make test`'s install steps
    then passed, built from nothing unless this key's image exists."""
    tag = f"{IMAGE}:{install_key()}"
    if image_exists(tag):
        return tag
    base = make_base("phone-agent-debian", "bookworm", BASE_PACKAGES)
    steps = [t for t in make_prerequisites("test") if t not in NOT_IN_A_CONTAINER]
    with own_network("fresh-debian") as network:
        machine = Machine(base, network, "fresh-install")
        try:
            assert machine.sh("python3 --version").stdout.strip() == DEBIAN_PYTHON
            machine.put_repository()
            process, _ = run_agent_until_ready(machine, timeout=3600)
            stop_agent(machine, process)
            machine.sh(f"make {' '.join(steps)}", timeout=3600)
            machine.commit(tag, f"phone-agent.install-steps=\"run {' '.join(steps)}\"")
        finally:
            machine.remove()
    for old in docker("images", IMAGE, "--format", "{{.Repository}}:{{.Tag}}").stdout.decode().split():
        if old != tag:
            docker("rmi", old, check=False)
    return tag


def test_make_tests_install_steps_left_debians_python_and_every_test_peer(installed):
    with own_network("fresh-debian") as network:
        machine = Machine(installed, network, "fresh-check")
        try:
            versions = machine.sh("python3 --version; .venv/bin/python --version").stdout.split("\n")
            assert versions[:2] == [DEBIAN_PYTHON, DEBIAN_PYTHON]
            peers = machine.sh("for c in sipp baresip kamailio flite espeak-ng chromium pg_ctlcluster docker "
                               "mmdebstrap; do command -v $c; done")
            assert len(peers.stdout.split()) == 9, peers.stdout
            assert "64 calls" in machine.sh(".venv/bin/python -m agent check 2>&1 | grep -i pjsua2").stdout
        finally:
            machine.remove()


def test_make_run_on_debian_12_answers_a_call(installed, questions, models, tmp_path):
    with own_network("fresh-debian") as network:
        machine = Machine(installed, network, "fresh-run")
        try:
            machine.put_repository()
            process, _ = run_agent_until_ready(machine, timeout=900)
            machine.copy_in(questions["hours"], "/tmp/question.wav")
            machine.sh(".venv/bin/python -m eval.kit.caller --target sip:agent@127.0.0.1:5060 --question "
                       "/tmp/question.wav --question-at 3 --duration 15 --out /tmp/call", timeout=120)
            machine.copy_out("/tmp/call", tmp_path / "call")
            stop_agent(machine, process)
        finally:
            machine.remove()
    timeline = _timeline(tmp_path / "call")
    assert timeline["status"] == 200
    assert heard_said(heard(models, timeline, timeline["question_end_tick"]), HOURS)


def _timeline(folder: Path) -> dict:
    timeline = json.loads((folder / "timeline.json").read_text())
    timeline["received"], _ = read_wav(folder / "received.wav")
    return timeline
