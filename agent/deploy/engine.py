"""Docker Engine: reached when it runs, started when it is installed but not running (Debian's `docker.io` has
no init system to start it in a container or CI machine), or a clear reason why neither is possible."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

START_TIMEOUT_S = 60.0


class EngineUnavailable(RuntimeError):
    """Docker Engine cannot be used here; the message says why and what would fix it."""


def docker(*args: str, timeout: float = 600, check: bool = True, input: bytes | None = None
           ) -> subprocess.CompletedProcess:
    """One `docker` command; its output as text (a failed one raises with its stderr when `check`)."""
    result = subprocess.run(["docker", *args], capture_output=True, timeout=timeout, input=input)
    if check and result.returncode != 0:
        raise RuntimeError(f"docker {' '.join(args[:3])} failed ({result.returncode}): "
                           f"{result.stderr.decode(errors='replace')[-2000:]}")
    return result


def running() -> bool:
    if shutil.which("docker") is None:
        return False
    return docker("info", "--format", "{{json .ServerVersion}}", timeout=30, check=False).returncode == 0


def server_version() -> str:
    return json.loads(docker("info", "--format", "{{json .ServerVersion}}", timeout=30).stdout)


def ensure(log: Path) -> str:
    """The engine's version, once it answers; started as a daemon of its own session (its log in `log`) when it
    is installed and this process may start it."""
    if running():
        return server_version()
    if shutil.which("docker") is None or shutil.which("dockerd") is None:
        raise EngineUnavailable("Docker Engine is not installed (Debian: apt-get install docker.io)")
    if os.geteuid() != 0:
        raise EngineUnavailable("Docker Engine is installed but not running, and only root can start it "
                                "(sudo systemctl start docker, or sudo dockerd)")
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        daemon = subprocess.Popen(["dockerd"], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  start_new_session=True)  # outlives the make or pytest run that started it
    deadline = time.monotonic() + START_TIMEOUT_S
    while not running():
        if daemon.poll() is not None or time.monotonic() > deadline:
            raise EngineUnavailable(f"dockerd did not come up (exit {daemon.poll()}); see {log}")
        time.sleep(0.5)
    return server_version()


def image_exists(tag: str) -> bool:
    return docker("image", "inspect", tag, timeout=30, check=False).returncode == 0
