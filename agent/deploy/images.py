"""The images the deployment runs, built here: the agent's (Dockerfile) and the bundled Asterisk's
(dialplans/asterisk/Dockerfile); for the line overlay (docker-compose.line.yml), Kamailio's and PostgreSQL's too,
from Debian's packages (dialplans/kamailio, dialplans/postgres).

Each is built on its official base image when that is on the machine or can be pulled, else on a Debian bookworm
base made from Debian's own archive (debian_base.py). The agent's build gets the machine's package settings as
build arguments (package_config.py), which its Dockerfile uses in build stages only. An image already built from
the same files and base is kept: its label names a key of everything that went into it.

    python -m agent.deploy images [--line] [--rebuild]
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

from agent.deploy.debian_base import make_base
from agent.deploy.engine import docker, image_exists
from agent.deploy.package_config import machine_settings

REPO = Path(__file__).resolve().parents[2]
LOCAL_BASE = ("ca-certificates", "python3", "python3-venv")
"""A Debian base made here holds what both Dockerfiles expect of their official bases: python3 that makes venvs."""
PULL_TIMEOUT_S = 120


@dataclass(frozen=True)
class Image:
    tag: str
    dockerfile: Path
    official_base: str
    inputs: tuple[str, ...]
    """Repository paths whose content goes into the image (its key)."""


AGENT = Image("phone-agent:latest", REPO / "Dockerfile", "python:3.11-slim-bookworm",
              ("Dockerfile", "pyproject.toml", "README.md", "agent", "eval", "kb", "dialplans"))
ASTERISK = Image("phone-agent-asterisk:latest", REPO / "dialplans" / "asterisk" / "Dockerfile", "debian:bookworm-slim",
                 ("dialplans/asterisk", "agent/deploy/asterisk", "agent/sip/pjproject", "agent/__init__.py"))
KAMAILIO = Image("phone-agent-kamailio:latest", REPO / "dialplans" / "kamailio" / "Dockerfile",
                 "debian:bookworm-slim", ("dialplans/kamailio",))
POSTGRES = Image("phone-agent-postgres:latest", REPO / "dialplans" / "postgres" / "Dockerfile",
                 "debian:bookworm-slim", ("dialplans/postgres",))
STACK = (AGENT, ASTERISK)
"""docker-compose.yml's images."""
LINE = (*STACK, KAMAILIO, POSTGRES)
"""docker-compose.yml's and docker-compose.line.yml's."""


def content_key(paths: tuple[str, ...], base: str, repo: Path = REPO) -> str:
    """12 hex digits naming the content of `paths` (files git tracks or would: what the build context holds) and
    the base image."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *paths],
                            cwd=repo, capture_output=True, check=True)
    digest = hashlib.sha256(base.encode())
    for name in sorted(filter(None, listed.stdout.decode().split("\0"))):
        file = repo / name
        if file.is_file():
            digest.update(name.encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:12]


def base_for(image: Image, log, pull: bool = True) -> str:
    """The official base when it is here or (with `pull`) can be pulled, else a Debian base made from Debian's
    archive."""
    if image_exists(image.official_base):
        return image.official_base
    pulled = docker("pull", image.official_base, timeout=PULL_TIMEOUT_S, check=False) if pull else None
    if pulled is not None and pulled.returncode == 0:
        return image.official_base
    if pulled is None:
        return make_base("phone-agent-debian", "bookworm", LOCAL_BASE)
    log(f"{image.official_base} cannot be pulled ({pulled.stderr.decode(errors='replace').strip()[-120:]}); "
        "making a Debian bookworm base from Debian's archive")
    return make_base("phone-agent-debian", "bookworm", LOCAL_BASE)


def build(image: Image, log=print, rebuild: bool = False, pull: bool = True) -> str:
    """The image's tag, built unless an image of the same content and base is there already; `pull`: try the
    official base's registry when it is not on the machine (tests never do)."""
    base = base_for(image, log, pull)
    key = content_key(image.inputs, base + docker("image", "inspect", "--format", "{{.Id}}", base,
                                                  timeout=60).stdout.decode().strip())
    if not rebuild and image_exists(image.tag) and _label(image.tag) == key:
        return image.tag
    arguments = ["--build-arg", f"BASE={base}"]
    if image is AGENT:
        env, bundle = machine_settings()
        arguments += [arg for name in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST") if name in env
                      for arg in ("--build-arg", f"{name}={env[name]}")]
        ca = REPO / "var" / "docker" / "build-ca.pem"  # the one file of var/ the build context holds
        ca.parent.mkdir(parents=True, exist_ok=True)
        if bundle is not None:
            ca.write_bytes(bundle.read_bytes())
        else:
            ca.unlink(missing_ok=True)
    output = REPO / "var" / "docker" / f"build-{image.tag.partition(':')[0]}.log"
    output.parent.mkdir(parents=True, exist_ok=True)
    log(f"building {image.tag} on {base} (a few minutes the first time; log: {output})")
    with output.open("w") as out:
        result = subprocess.run(["docker", "build", "--label", f"phone-agent.key={key}", *arguments, "-f",
                                 str(image.dockerfile), "-t", image.tag, str(REPO)], stdout=out,
                                stderr=subprocess.STDOUT, timeout=3600)
    if result.returncode != 0:
        raise RuntimeError(f"{image.tag} did not build (exit {result.returncode}): {output.read_text()[-1500:]}")
    return image.tag


def _label(tag: str) -> str:
    return docker("image", "inspect", "--format", '{{index .Config.Labels "phone-agent.key"}}', tag,
                  timeout=60).stdout.decode().strip()
