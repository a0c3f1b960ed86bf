"""`python -m agent.deploy engine`: start Docker Engine if it is installed and not running; print its version.
`python -m agent.deploy images [--line]`: the same, then build the agent's and the bundled Asterisk's images (with
--line, the line overlay's Kamailio and PostgreSQL too)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent.deploy import engine, images


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agent.deploy", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("engine", help="reach Docker Engine, starting it when installed and not running")
    images_ = commands.add_parser("images", help="build the agent's and the bundled Asterisk's images (kept when "
                                  "their content is unchanged)")
    images_.add_argument("--line", action="store_true", help="also the line overlay's (docker-compose.line.yml)")
    images_.add_argument("--rebuild", action="store_true", help="build even when an image of the same content is there")
    args = parser.parse_args(argv)
    try:
        print(f"Docker Engine {engine.ensure(Path('var/docker/dockerd.log'))}")
        if args.command == "images":
            for image in images.LINE if args.line else images.STACK:
                print(f"{images.build(image, rebuild=args.rebuild)} ready", flush=True)
    except engine.EngineUnavailable as exc:
        print(f"Docker Engine: {exc}", file=sys.stderr)
        return 1
    except RuntimeError as exc:  # a docker command that failed: its own message says why
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
