"""A Debian base image made from Debian's own archive, for machines that cannot pull one from a registry.

mmdebstrap builds the root file system from the mirror the machine's own apt sources name (their files are
handed to it as they are: nothing here names a mirror), and `docker import` makes it an image. The tag names what
went into it, so a second call finds the image and builds nothing.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

from agent.deploy.engine import EngineUnavailable, docker, image_exists

APT = Path("/etc/apt")


def apt_source_files(apt: Path = APT) -> list[Path]:
    """The machine's apt source files with at least one entry, in the order apt reads them."""
    listed = [apt / "sources.list"] + sorted((apt / "sources.list.d").glob("*.list")) + \
        sorted((apt / "sources.list.d").glob("*.sources"))
    return [path for path in listed if path.is_file() and _has_entries(path)]


def _has_entries(path: Path) -> bool:
    lines = (line.strip() for line in path.read_text(errors="replace").splitlines())
    return any(line.startswith(("deb ", "Types:")) for line in lines)


def base_tag(name: str, suite: str, packages: tuple[str, ...]) -> str:
    """`name:suite-KEY`, KEY naming the package list (a different list is a different image)."""
    key = hashlib.sha256(" ".join((suite, *packages)).encode()).hexdigest()[:10]
    return f"{name}:{suite}-{key}"


def make_base(name: str, suite: str, packages: tuple[str, ...], sources: list[Path] | None = None) -> str:
    """The tag of a `--variant=minbase` image of `suite` holding `packages`, built unless it exists already."""
    tag = base_tag(name, suite, packages)
    if image_exists(tag):
        return tag
    if shutil.which("mmdebstrap") is None:
        raise EngineUnavailable("mmdebstrap is not installed (Debian: apt-get install mmdebstrap)")
    sources = apt_source_files() if sources is None else sources
    if not sources:
        raise EngineUnavailable(f"no apt sources in {APT}: nowhere to build a Debian image from")
    with tempfile.TemporaryDirectory(prefix="debian-base-") as scratch:
        rootfs = Path(scratch) / "rootfs.tar"
        result = subprocess.run(["mmdebstrap", "--quiet", "--variant=minbase", f"--include={','.join(packages)}",
                                 suite, str(rootfs), *map(str, sources)], capture_output=True, text=True, timeout=1200)
        if result.returncode != 0:
            raise RuntimeError(f"mmdebstrap {suite} failed: {result.stderr[-2000:]}")
        docker("import", str(rootfs), tag, timeout=600)
    return tag
