"""Build pjsua2 from pinned pjproject source with the agent's config_site.h, as a wheel of the same name as
PyPI's (`pjsua2-python`), so that it replaces that wheel in the venv and satisfies the project's requirement.

The steps, each checked: the source tarball from the Debian mirror the machine's apt sources name (size and
sha256 pinned in source.toml); unpacked, with the one Makefile line that names a driver Debian removed from
the tarball dropped; configure against Debian's codec and crypto libraries (epoll I/O queue, TLS by OpenSSL,
SRTP by libsrtp2); the libraries; SWIG's Python module; a wheel. The wheel is kept under var/build, named by
a key of everything that went into it, so a second run only verifies it. Stdlib only: it runs before
anything else of the agent is importable.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONFIGURE = ("--disable-shared", "--disable-sound", "--disable-video", "--disable-libyuv", "--disable-libwebrtc",
             "--disable-g7221-codec", "--disable-ilbc-codec", "--disable-upnp", "--disable-sdl", "--disable-ffmpeg",
             "--disable-v4l2", "--disable-openh264", "--disable-vpx", "--disable-opencore-amr", "--disable-silk",
             "--disable-bcg729", "--disable-lyra", "--with-external-srtp", "--with-external-gsm",
             "--with-external-speex", "--enable-speex-resample", "--enable-epoll")
# The conference bridge resamples every G.711 call 8 <-> 16 kHz: speexdsp's resampler at pjsua's quality 4 (its
# level 7) costs a tenth of libsamplerate's medium sinc (AMD EPYC: 0.001 against 0.010 of a core a call, both
# ways), and Debian's tarball has no pjmedia resampler of its own.
# NDEBUG: pjlib's assertions off, as in a release build. An assertion that fires aborts the whole process
# with every call on it; the checks that matter are PJ_ASSERT_RETURN, which return an error either way.
CFLAGS = "-fPIC -O2 -DNDEBUG"
TOOLS = ("swig", "cc", "c++", "make", "pkg-config")
LIBRARIES = ("libsrtp2", "opus", "speex", "speexdsp", "openssl", "uuid")
"""pkg-config names of the Debian libraries it links (Debian's -dev packages: see the Makefile's BUILD_DEBS)."""
DRIVER_DEBIAN_REMOVED = " bdimad_dev.o"
"""pjmedia's Makefile names this sound driver; Debian's DFSG tarball removed its source (their patch
2014_pjproject_unbreak drops the same word)."""


class Unavailable(Exception):
    """The build cannot be made here (no source, no tools, a failed step): the reason, in one line."""


@dataclass(frozen=True)
class Pin:
    version: str
    file: str
    pool: str
    size: int
    sha256: str


def load_pin(path: Path = HERE / "source.toml") -> Pin:
    raw = tomllib.loads(path.read_text())["pjproject"]
    return Pin(str(raw["version"]), raw["file"], raw["pool"].strip("/"), int(raw["size"]), raw["sha256"])


def config_limits(config_site: str) -> dict[str, int]:
    """The limits config_site.h sets, as the built module reports them (pjsua2.BUILD)."""
    found = dict(re.findall(r"^#define\s+(PJSUA_MAX_CALLS|PJ_IOQUEUE_MAX_HANDLES)\s+(\d+)\s*$", config_site, re.M))
    if set(found) != {"PJSUA_MAX_CALLS", "PJ_IOQUEUE_MAX_HANDLES"}:
        raise ValueError("config_site.h must define PJSUA_MAX_CALLS and PJ_IOQUEUE_MAX_HANDLES as numbers")
    return {"max_calls": int(found["PJSUA_MAX_CALLS"]), "ioqueue_handles": int(found["PJ_IOQUEUE_MAX_HANDLES"])}


def debian_mirrors(apt_dir: Path = Path("/etc/apt")) -> list[str]:
    """The Debian archive URIs the machine's own apt sources use (one-line and deb822 formats), security
    archives left out: the pool of any of them holds the tarball."""
    found: list[str] = []
    files = [apt_dir / "sources.list", *sorted((apt_dir / "sources.list.d").glob("*.list")),
             *sorted((apt_dir / "sources.list.d").glob("*.sources"))]
    for path in files:
        try:
            text = path.read_text()
        except OSError:
            continue
        uris = re.findall(r"^\s*URIs:\s*(.+)$", text, re.M) if path.suffix == ".sources" else [
            m for line in text.splitlines() for m in re.findall(r"^\s*deb(?:-src)?\s+(?:\[[^\]]*\]\s+)?(\S+)", line)]
        for line in uris:
            for uri in line.split():
                uri = uri.rstrip("/")
                if uri.startswith(("http://", "https://")) and uri.endswith("/debian") and uri not in found:
                    found.append(uri)
    return found


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified(path: Path, size: int, sha256: str) -> bool:
    return path.is_file() and path.stat().st_size == size and sha256_of(path) == sha256


def fetch(pin: Pin, downloads: Path, mirrors: list[str]) -> Path:
    """The pinned tarball, from the cache or a mirror, verified."""
    target = downloads / pin.file
    if verified(target, pin.size, pin.sha256):
        return target
    if not mirrors:
        raise Unavailable("no Debian mirror in the machine's apt sources")
    downloads.mkdir(parents=True, exist_ok=True)
    reasons = []
    for mirror in mirrors:
        url = f"{mirror}/{pin.pool}/{urllib.request.quote(pin.file)}"
        partial = target.with_suffix(".partial")
        try:
            with urllib.request.urlopen(url, timeout=60) as response, partial.open("wb") as out:
                shutil.copyfileobj(response, out)
        except OSError as exc:
            reasons.append(f"{type(exc).__name__} {str(exc)[:80]}")
            continue
        if verified(partial, pin.size, pin.sha256):
            partial.replace(target)
            return target
        reasons.append("size or sha256 differs from source.toml")
        partial.unlink(missing_ok=True)
    raise Unavailable(f"{pin.file} not fetched ({'; '.join(reasons)})")


def missing_prerequisites() -> list[str]:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if "pkg-config" not in missing:
        missing += [lib for lib in LIBRARIES
                    if subprocess.run(["pkg-config", "--exists", lib], capture_output=True).returncode != 0]
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        missing.append("Python.h")
    return missing


def build_key(pin: Pin, config_site: str) -> str:
    """Everything the built module depends on: the source, the configuration, the interpreter, the builder."""
    parts = [pin.sha256, config_site, " ".join(CONFIGURE), CFLAGS, sys.version, sysconfig.get_platform(),
             Path(__file__).read_text()]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12]


def _run(step: str, command: list[str], cwd: Path, log: Path, env: dict | None = None) -> None:
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(command)}\n")
        out.flush()
        result = subprocess.run(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
    if result.returncode != 0:
        raise Unavailable(f"{step} failed (exit {result.returncode}; see {log})")


def plain_members(archive: tarfile.TarFile, links: bool = False) -> list[tarfile.TarInfo]:
    """The archive's directories and regular files (and with `links`, symbolic links), each refused unless it
    unpacks, and a link points, inside the target folder.

    Written out because `extractall(filter="data")` arrived in Python 3.11.4 and Debian 12 ships 3.11.2; a
    source tarball needs no devices or modes beyond rwx, so anything else is an error, not a skip.
    """
    members = []
    for member in archive.getmembers():
        path = Path(member.name)
        if path.is_absolute() or ".." in path.parts:
            raise Unavailable(f"the source tarball names a path outside its folder: {member.name!r}")
        if links and member.issym():
            target = os.path.normpath(os.path.join(os.path.dirname(member.name), member.linkname))
            if os.path.isabs(member.linkname) or target.startswith(".."):
                raise Unavailable(f"the source tarball links outside its folder: {member.name!r}")
        elif not (member.isdir() or member.isfile()):
            raise Unavailable(f"the source tarball holds a link or special file: {member.name!r}")
        member.mode &= 0o755
        members.append(member)
    return members


def compile_module(tarball: Path, work: Path, config_site: str, log: Path) -> tuple[Path, Path]:
    """pjproject unpacked, configured and built; returns SWIG's pjsua2.py and the compiled _pjsua2 module."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    with tarfile.open(tarball) as archive:
        archive.extractall(work, members=plain_members(archive))
    (source,) = [p for p in work.iterdir() if p.is_dir()]
    makefile = source / "pjmedia" / "build" / "Makefile"
    text = makefile.read_text()
    if DRIVER_DEBIAN_REMOVED not in text:
        raise Unavailable(f"{makefile.relative_to(work)} no longer names{DRIVER_DEBIAN_REMOVED}: check the pin")
    makefile.write_text(text.replace(DRIVER_DEBIAN_REMOVED, ""))
    (source / "pjlib" / "include" / "pj" / "config_site.h").write_text(config_site)
    env = {**os.environ, "CFLAGS": CFLAGS, "CXXFLAGS": CFLAGS}
    jobs = str(max(1, len(os.sched_getaffinity(0))))
    _run("configure", ["./configure", *CONFIGURE], source, log, env)
    _run("make dep", ["make", "dep"], source, log, env)
    _run("make lib", ["make", f"-j{jobs}", "lib"], source, log, env)
    swig = source / "pjsip-apps" / "src" / "swig" / "python"
    _run("the SWIG module", ["make", f"PYTHON_EXE={sys.executable}"], swig, log, env)
    modules = sorted(swig.glob("build/lib*/_pjsua2*.so"))
    if not modules or not (swig / "pjsua2.py").is_file():
        raise Unavailable(f"the SWIG module was not built (see {log})")
    return swig / "pjsua2.py", modules[0]


INIT = '''"""pjsua2 {version}, built from source by the agent (agent/sip/pjproject): {file}."""

from .pjsua2 import *  # noqa: F401,F403

__version__ = "{wheel_version}"
BUILD = {build!r}
"""What this build holds (its config_site.h), read by agent/sip/build_info.py."""
'''


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def make_wheel(bindings: Path, module: Path, pin: Pin, limits: dict[str, int], key: str, out: Path) -> Path:
    """A wheel of the distribution `pjsua2-python` holding the package `pjsua2`, as PyPI's does."""
    version = f"{pin.version}+src.{key}"
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    dist = f"pjsua2_python-{version}.dist-info"
    build = {"pjproject": pin.version, "source": pin.file, **limits}
    files = {
        "pjsua2/__init__.py": INIT.format(version=pin.version, file=pin.file, wheel_version=version,
                                          build=build).encode(),
        "pjsua2/pjsua2.py": bindings.read_bytes(),
        f"pjsua2/{module.name}": module.read_bytes(),
        f"{dist}/METADATA": (f"Metadata-Version: 2.1\nName: pjsua2-python\nVersion: {version}\n"
                             f"Summary: pjsua2 from pjproject {pin.version}, built by the agent\n").encode(),
        f"{dist}/WHEEL": (f"Wheel-Version: 1.0\nGenerator: agent.sip.pjproject\nRoot-Is-Purelib: false\n"
                          f"Tag: {tag}-{tag}-{platform}\n").encode(),
        f"{dist}/top_level.txt": b"pjsua2\n",
    }
    record = [_record_line(name, data) for name, data in files.items()] + [f"{dist}/RECORD,,"]
    files[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"pjsua2_python-{version}-{tag}-{tag}-{platform}.whl"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    partial = wheel.with_suffix(".partial")
    partial.write_bytes(buffer.getvalue())
    partial.replace(wheel)
    return wheel
