"""The machine's own package settings (pip's index and trust, proxies), handed to a container or an image build.

Read from the machine at the time of use, never written into the repository or an image: `pip config list`
(which includes PIP_* variables) for the index, the CA bundle the environment names for trust. Settings that
point into this machine's file system (a local wheel folder, a constraints file) mean nothing inside a
container and are left out.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

CA_IN_CONTAINER = "/run/host-ca/ca-certificates.crt"
"""Where a container finds the machine's CA bundle (a read-only bind mount, or a build secret)."""
_PIP_KEYS = ("index-url", "extra-index-url", "trusted-host", "default-timeout", "retries")
_PROXIES = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")


def parse_pip_config(listing: str) -> dict[str, str]:
    """`pip config list` output ("global.index-url='https://…'", ":env:.cert='…'") as name -> value, the last
    occurrence of a name winning as in pip itself."""
    settings = {}
    for line in listing.splitlines():
        key, sep, value = line.partition("=")
        if not sep or "." not in key:
            continue
        try:
            settings[key.rpartition(".")[2]] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            settings[key.rpartition(".")[2]] = value.strip("'\"")
    return settings


def pip_environment(settings: dict[str, str], ca_bundle: Path | None) -> dict[str, str]:
    """PIP_* variables for a container: the index settings that reach a network (file:// ones are this machine's
    folders), and the CA bundle at CA_IN_CONTAINER when there is one."""
    env = {}
    for name in _PIP_KEYS:
        value = settings.get(name)
        if value is None:
            continue
        if name.endswith("index-url"):
            value = " ".join(url for url in value.split() if not url.startswith("file:"))
        if value:
            env["PIP_" + name.upper().replace("-", "_")] = value
    if ca_bundle is not None:
        env.update(PIP_CERT=CA_IN_CONTAINER, SSL_CERT_FILE=CA_IN_CONTAINER, REQUESTS_CA_BUNDLE=CA_IN_CONTAINER)
    return env


def machine_ca_bundle(settings: dict[str, str], environ: dict[str, str] = os.environ) -> Path | None:
    """The CA bundle this machine's HTTPS clients trust: pip's own, else the environment's, else Debian's."""
    for candidate in (settings.get("cert"), environ.get("PIP_CERT"), environ.get("SSL_CERT_FILE"),
                      "/etc/ssl/certs/ca-certificates.crt"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def machine_settings() -> tuple[dict[str, str], Path | None]:
    """The environment a container needs to install from the registries this machine reaches, and the CA bundle
    to mount at CA_IN_CONTAINER (None: the container's own trust store will do)."""
    listing = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                             timeout=60).stdout
    settings = parse_pip_config(listing)
    bundle = machine_ca_bundle(settings)
    env = pip_environment(settings, bundle)
    env.update({name: os.environ[name] for name in _PROXIES if os.environ.get(name)})
    return env, bundle
