"""Containers the deployment tests run: Docker Engine started for the session, a network the test made itself,
and a `Machine` (one container with a copy of this repository at /src) to run commands in."""

from __future__ import annotations

import contextlib
import io
import subprocess
import tarfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.deploy import engine
from agent.deploy.engine import docker
from agent.deploy.package_config import CA_IN_CONTAINER, machine_settings
from tests.conftest import REPO


@pytest.fixture(scope="session")
def docker_engine(tmp_path_factory) -> str:
    """Docker Engine's version, the engine started if it is installed and not running (`make test` installs it)."""
    try:
        return engine.ensure(REPO / "var" / "docker" / "dockerd.log")
    except engine.EngineUnavailable as exc:
        pytest.fail(f"the deployment tests need Docker Engine: {exc}")


@contextlib.contextmanager
def own_network(prefix: str) -> Iterator[str]:
    """A bridge network made for one test and removed after it: the only network its containers reach the
    registries through, apart from loopback."""
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    docker("network", "create", "--driver", "bridge", name, timeout=60)
    try:
        yield name
    finally:
        docker("network", "rm", name, timeout=60, check=False)


def tracked_files_tar() -> bytes:
    """This checkout's tracked files, as they are in the working tree, as a tar (what a clone would hold)."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name in filter(None, names.decode().split("\0")):
            if (REPO / name).exists():  # a file deleted but not yet committed is not in a clone either
                archive.add(REPO / name, arcname=name, recursive=False)
    return buffer.getvalue()


class Machine:
    """One container from `image` on `network`, with the machine's package settings and this repository at /src.
    Commands run as root, as on a machine whose owner runs make."""

    def __init__(self, image: str, network: str, name: str) -> None:
        self.name = f"{name}-{uuid.uuid4().hex[:8]}"
        env, bundle = machine_settings()
        mounts = ["-v", f"{bundle}:{CA_IN_CONTAINER}:ro"] if bundle is not None else []
        variables = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
        docker("run", "-d", "--name", self.name, "--network", network, *mounts, *variables, image,
               "sleep", "infinity", timeout=120)
        docker("exec", self.name, "mkdir", "-p", "/src", timeout=60)

    def put_repository(self) -> None:
        """/src becomes this checkout's tracked files; an installed .venv and var/ (models, builds) stay."""
        self.sh("find . -mindepth 1 -maxdepth 1 ! -name .venv ! -name var "
                "-exec rm -rf {} +")
        docker("exec", "-i", self.name, "tar", "-xf", "-", "-C", "/src", input=tracked_files_tar(), timeout=120)

    def sh(self, script: str, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess:
        """A shell script run in /src; stdout and stderr together, as text."""
        result = subprocess.run(["docker", "exec", "-w", "/src", self.name, "sh", "-c", script],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"`{script}` failed ({result.returncode}) in {self.name}:\n{result.stdout[-4000:]}")
        return result

    def start(self, script: str) -> subprocess.Popen:
        """A long-running shell script in /src, its output a line-buffered text pipe."""
        return subprocess.Popen(["docker", "exec", "-w", "/src", self.name, "sh", "-c", script],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)

    def copy_in(self, source: Path, target: str) -> None:
        docker("cp", str(source), f"{self.name}:{target}", timeout=120)

    def copy_out(self, source: str, target: Path) -> None:
        docker("cp", f"{self.name}:{source}", str(target), timeout=120)

    def commit(self, tag: str, *labels: str) -> None:
        docker("commit", *[arg for label in labels for arg in ("--change", f"LABEL {label}")], self.name, tag,
               timeout=900)

    def remove(self) -> None:
        docker("rm", "-f", self.name, timeout=120, check=False)
