"""How `make test` shares the tests among its worker processes (pytest-xdist): every test file runs whole on one
worker, so a module's agent starts once, and tests/deploy runs whole on one worker, first.

The deployment tests share one Docker engine: its image builds, and the fixed subnet of the compose file's
network, which one project holds while it is up. Started first, the longest unit does not finish alone at the
end while the other workers wait; they meanwhile take the other files one after another.
"""

from __future__ import annotations

import os

from xdist.scheduler import LoadScopeScheduling

TOGETHER = ("tests/deploy/",)
"""Folders whose tests run one after another on one worker."""


class FilesAndFoldersTogether(LoadScopeScheduling):
    """xdist's per-file scheduling, with each folder of TOGETHER one unit of work."""

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        return next((folder for folder in TOGETHER if path.startswith(folder)), path)


def first_together(items: list) -> None:
    """Collected tests reordered, in place, so the TOGETHER folders come first; the rest keep their order."""
    items.sort(key=lambda item: not any(item.nodeid.startswith(folder) for folder in TOGETHER))


def worker() -> tuple[int, int]:
    """This process's worker number and the number of workers (0 of 1 outside xdist)."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(name.removeprefix("gw")), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
