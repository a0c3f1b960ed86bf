"""`python -m agent.deploy engine`: start Docker Engine if it is installed and not running; print its version."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent.deploy import engine


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agent.deploy", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser("engine", help="reach Docker Engine, starting it when installed and not running")
    start.add_argument("--log", type=Path, default=Path("var/docker/dockerd.log"), help="dockerd's log, if started")
    args = parser.parse_args(argv)
    try:
        print(f"Docker Engine {engine.ensure(args.log)}")
    except engine.EngineUnavailable as exc:
        print(f"Docker Engine: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
