"""Build the bundled Asterisk from Debian's pinned source, with the modules its configuration loads and nothing
else: natively into a folder (tests that need no container), or in the Asterisk image (dialplans/asterisk).

The steps, each checked: the three tarballs of Debian's source package (the upstream tree, its pjproject component
and Debian's packaging) from the Debian mirror the apt sources name, verified by size and sha256 (source.toml);
unpacked into one tree as Debian lays it out, the pjproject component under Xpjproject/; Debian's patches the
build needs applied (before pjproject is packed, since Asterisk builds pjproject from that tarball); the pjproject
tarball and its md5 made as Debian's rules make them, in an externals cache, so configure downloads nothing;
configure, menuselect (every module off, then the listed ones), make, make install into a staging folder.
Stdlib only, like the pjsua2 build it shares its fetching with.

    python -m agent.deploy.asterisk.build --dest DIR [--cache var/build/asterisk]
"""

from __future__ import annotations

import argparse
import bz2
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from agent.sip.pjproject.build import Pin, Unavailable, debian_mirrors, fetch, plain_members, sha256_of

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
CONFIGURE = ("--with-pjproject-bundled", "--prefix=/usr", "--sysconfdir=/etc", "--localstatedir=/var",
             "--without-dahdi", "--without-pri", "--without-ss7")
TOOLS = ("cc", "c++", "make", "patch", "bzip2", "pkg-config")


@dataclass(frozen=True)
class Source:
    version: str
    tarballs: dict[str, Pin]
    """"orig" (the upstream tree), "pjproject" (its component), "debian" (Debian's packaging and patches)."""
    patches: tuple[str, ...]
    modules: tuple[str, ...]


def load_source(path: Path = HERE / "source.toml") -> Source:
    raw = tomllib.loads(path.read_text())
    asterisk = raw["asterisk"]
    pool = asterisk["pool"].strip("/")
    tarballs = {name: Pin(asterisk["version"], asterisk[name]["file"], pool, int(asterisk[name]["size"]),
                          asterisk[name]["sha256"]) for name in ("orig", "pjproject", "debian")}
    return Source(asterisk["version"], tarballs, tuple(raw["build"]["patches"]), tuple(raw["build"]["modules"]))


def build_key(source: Source) -> str:
    """Everything the build depends on: the tarballs, the patches, the modules, the configure line, this file."""
    parts = [p.sha256 for p in source.tarballs.values()] + list(source.patches) + list(source.modules) + \
        [" ".join(CONFIGURE), Path(__file__).read_text()]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12]


def unpack(tarball: Path, into: Path, strip_first: bool = False) -> None:
    """A source tarball into `into`, checked member by member; `strip_first` drops each path's first folder."""
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball) as archive:
        members = plain_members(archive, links=True)  # Asterisk's tree links some files to others
        if strip_first:
            members = [m for m in members if "/" in m.name.strip("/")]
            for member in members:
                member.name = member.name.split("/", 1)[1]
        archive.extractall(into, members=members)


def pjproject_version(version_mak: str) -> str:
    """"2.17" from pjproject's version.mak."""
    found = dict(re.findall(r"^export PJ_VERSION_(MAJOR|MINOR)\s*:=\s*(\d+)\s*$", version_mak, re.M))
    if set(found) != {"MAJOR", "MINOR"}:
        raise Unavailable("pjproject's version.mak names no major and minor version: check the pin")
    return f"{found['MAJOR']}.{found['MINOR']}"


def pack_pjproject(tree: Path, externals: Path) -> str:
    """The pjproject tarball Asterisk's bundled build expects, made from the tree's Xpjproject/ as Debian's rules
    make it (pjproject-VERSION/ inside, bzip2), with the md5 file it is checked against rewritten; its version."""
    version = pjproject_version((tree / "Xpjproject" / "version.mak").read_text())
    name = f"pjproject-{version}.tar.bz2"
    externals.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        archive.add(tree / "Xpjproject", arcname=f"pjproject-{version}")
    data = bz2.compress(buffer.getvalue(), compresslevel=1)
    (externals / name).write_bytes(data)
    (tree / "third-party" / "pjproject" / f"{name}.md5").write_text(f"{hashlib.md5(data).hexdigest()}  {name}\n")
    return version


def prepare_tree(tarballs: dict[str, Path], patches: tuple[str, ...], work: Path, externals: Path) -> Path:
    """The source tree as Debian lays it out, patched, with pjproject packed into `externals`."""
    shutil.rmtree(work, ignore_errors=True)
    unpack(tarballs["orig"], work)
    (tree,) = [p for p in work.iterdir() if p.is_dir()]
    unpack(tarballs["pjproject"], tree / "Xpjproject", strip_first=True)
    unpack(tarballs["debian"], tree)
    for patch in patches:
        path = tree / "debian" / "patches" / f"{patch}.patch"
        if not path.is_file():
            raise Unavailable(f"Debian's patch {patch} is not in the packaging: check the pin")
        result = subprocess.run(["patch", "-p1", "--forward", "--quiet", "-i", str(path)], cwd=tree,
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise Unavailable(f"Debian's patch {patch} does not apply: {result.stdout[-300:]}")
    pack_pjproject(tree, externals)
    return tree


def _run(step: str, command: list[str], cwd: Path, log: Path) -> None:
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(command)}\n")
        out.flush()
        result = subprocess.run(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        raise Unavailable(f"{step} failed (exit {result.returncode}; see {log})")


def compile_and_install(tree: Path, externals: Path, modules: tuple[str, ...], dest: Path, log: Path) -> None:
    jobs = str(max(1, len(os.sched_getaffinity(0))))
    _run("configure", ["./configure", *CONFIGURE, f"--with-externals-cache={externals}"], tree, log)
    _run("menuselect", ["make", "menuselect.makeopts"], tree, log)
    chosen = [arg for module in modules for arg in ("--enable", module)]
    _run("module choice", ["menuselect/menuselect", "--disable-all", *chosen, "menuselect.makeopts"], tree, log)
    _run("make", ["make", f"-j{jobs}"], tree, log)
    _run("make install", ["make", "install", f"DESTDIR={dest}"], tree, log)
    # menuselect drops a module whose libraries are missing without a word: say which, and fail.
    built = {p.stem for p in (dest / "usr" / "lib" / "asterisk" / "modules").glob("*.so")}
    missing = [module for module in modules if module not in built]
    if missing:
        raise Unavailable(f"modules not built (their libraries are missing?): {', '.join(missing)}; see {log}")


def missing_prerequisites() -> list[str]:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if not (shutil.which("wget") or shutil.which("curl")):
        missing.append("wget")  # configure insists on one, though the externals cache leaves it nothing to fetch
    if "pkg-config" not in missing:
        missing += [lib for lib in ("jansson", "libxml-2.0", "libxslt", "sqlite3", "libedit", "uuid", "openssl",
                                    "libsrtp2")
                    if subprocess.run(["pkg-config", "--exists", lib], capture_output=True).returncode != 0]
    return missing


def build(dest: Path, cache: Path) -> Path:
    """Asterisk installed under `dest` (as DESTDIR), built unless `dest` holds this key's build already; the stamp
    file it leaves names the key."""
    source = load_source()
    key = build_key(source)
    stamp = dest / f".asterisk-{key}"
    if stamp.is_file() and (dest / "usr" / "sbin" / "asterisk").is_file():
        return dest
    missing = missing_prerequisites()
    if missing:
        raise Unavailable(f"missing build prerequisites: {', '.join(missing)} (Debian: the Makefile's ASTERISK_DEBS)")
    mirrors = debian_mirrors()
    tarballs = {name: fetch(pin, cache / "downloads", mirrors) for name, pin in source.tarballs.items()}
    log = cache / f"build-{key}.log"
    log.write_text("")
    started = time.monotonic()
    print(f"asterisk: building {source.version} from Debian's source (about four minutes on two cores; log: {log})",
          flush=True)
    tree = prepare_tree(tarballs, source.patches, cache / "work", cache / "externals")
    shutil.rmtree(dest, ignore_errors=True)
    compile_and_install(tree, cache / "externals", source.modules, dest, log)
    shutil.rmtree(cache / "work", ignore_errors=True)
    stamp.write_text(f"{source.version} {sha256_of(dest / 'usr' / 'sbin' / 'asterisk')}\n")
    print(f"asterisk: built in {time.monotonic() - started:.0f} s into {dest}", flush=True)
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agent.deploy.asterisk.build", description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=REPO / "var" / "build" / "asterisk" / "root")
    parser.add_argument("--cache", type=Path, default=REPO / "var" / "build" / "asterisk")
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    try:
        build(args.dest.resolve(), args.cache.resolve())
    except Unavailable as exc:
        print(f"asterisk: not built: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
