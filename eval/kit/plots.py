"""Plots as PNG files, drawn without a display (the runners' and eval.bench's figures)."""

from __future__ import annotations

from pathlib import Path


def pyplot():
    """matplotlib's pyplot on its file-only backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path: Path) -> None:
    """Write `fig` to `path` as a PNG and let it go."""
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    pyplot().close(fig)
