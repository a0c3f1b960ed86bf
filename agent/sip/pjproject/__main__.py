"""`python -m agent.sip.pjproject [--cache DIR] [--require] [--no-install]`: make sure the venv runs pjsua2
built from source.

Builds the wheel once (about three minutes on two cores) and keeps it under the cache with its sha256; later
runs verify it and install it when the venv holds anything else. When the build cannot be made here (no
source, no build tools), it says why in one line and leaves the PyPI wheel (pjsua2-python 2.15.1, 4 calls)
in place: `python -m agent check` and /readyz then name that limit. Exits 0 either way; 1 when the built
wheel fails to install, or (with --require, as the Dockerfile's build stage runs it) when it cannot be built.
--no-install only builds the wheel (into the cache).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

from agent.sip.pjproject import build as steps
from agent.sip.pjproject.build import HERE, Unavailable, load_pin

REPO = HERE.parents[2]


def cached_wheel(cache: Path, key: str) -> Path | None:
    """The wheel built for `key`, when it is there and matches the sha256 recorded beside it."""
    for wheel in cache.glob(f"pjsua2_python-*+src.{key}-*.whl"):
        stamp = wheel.with_name(wheel.name + ".sha256")
        if stamp.is_file() and stamp.read_text().strip() == steps.sha256_of(wheel):
            return wheel
    return None


def build(cache: Path, key: str) -> Path:
    pin = load_pin()
    config_site = (HERE / "config_site.h").read_text()
    missing = steps.missing_prerequisites()
    if missing:
        raise Unavailable(f"missing build prerequisites: {', '.join(missing)} (make installs them as root)")
    tarball = steps.fetch(pin, cache / "downloads", steps.debian_mirrors())
    log = cache / f"build-{key}.log"
    log.write_text("")
    started = time.monotonic()
    print(f"pjsua2: building pjproject {pin.version} from source (about three minutes on two cores; log: {log})",
          flush=True)
    bindings, module = steps.compile_module(tarball, cache / "work", config_site, log)
    wheel = steps.make_wheel(bindings, module, pin, steps.config_limits(config_site), key, cache)
    wheel.with_name(wheel.name + ".sha256").write_text(steps.sha256_of(wheel) + "\n")
    shutil.rmtree(cache / "work", ignore_errors=True)  # the wheel holds all that is needed
    print(f"pjsua2: built {wheel.name} in {time.monotonic() - started:.0f} s", flush=True)
    return wheel


def installed_version() -> str | None:
    try:
        return metadata.version("pjsua2-python")
    except metadata.PackageNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=REPO / "var" / "build" / "pjsua2")
    parser.add_argument("--require", action="store_true", help="fail when it cannot be built (no fallback)")
    parser.add_argument("--no-install", action="store_true", help="build the wheel into the cache only")
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    key = steps.build_key(load_pin(), (HERE / "config_site.h").read_text())
    try:
        wheel = cached_wheel(args.cache, key) or build(args.cache, key)
    except Unavailable as exc:
        if args.require:
            print(f"pjsua2: not built from source: {exc}", file=sys.stderr)
            return 1
        print(f"pjsua2: not built from source: {exc}; using the PyPI wheel {installed_version() or '(none)'}, "
              "which holds 4 calls", flush=True)
        return 0
    version = wheel.name.split("-")[1]
    if args.no_install or installed_version() == version:
        return 0
    result = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                             "--no-deps", "--force-reinstall", str(wheel)])
    if result.returncode != 0:
        print(f"pjsua2: {wheel.name} did not install", file=sys.stderr)
        return 1
    print(f"pjsua2: installed {version}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
