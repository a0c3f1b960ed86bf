"""A thread's name as the operating system sees it: what `top -H`, `ps -L` and /proc/<pid>/task/*/comm show.

Python names its threads for itself only: to the kernel every one of them is "python", so a thread's CPU cannot
be told from another's (eval.listening_cost and eval.load read it by thread name). A thread takes its OS name from
the thread that started it, so a model loaded under a name (`named`) gives it to the threads its library starts
then (CTranslate2's workers, onnxruntime's pools), and a model's CPU is read apart from the event loop's.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
import threading
from collections.abc import Iterator

_PR_SET_NAME, _PR_GET_NAME = 15, 16
_KERNEL_LIMIT = 15  # bytes of a name the kernel keeps


def _prctl(option: int, buffer: ctypes.Array | ctypes.c_char_p) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(option, buffer, 0, 0, 0)


def name_native(name: str | None = None) -> None:
    """Give the calling thread `name` (default: its Python name) as its OS name, where the OS has one."""
    if sys.platform.startswith("linux"):
        text = (name or threading.current_thread().name).encode("ascii", "replace")[:_KERNEL_LIMIT]
        _prctl(_PR_SET_NAME, ctypes.c_char_p(text))


@contextlib.contextmanager
def named(name: str) -> Iterator[None]:
    """The calling thread's OS name is `name` inside the block, and what it was after it."""
    if not sys.platform.startswith("linux"):
        yield
        return
    before = ctypes.create_string_buffer(_KERNEL_LIMIT + 1)
    _prctl(_PR_GET_NAME, before)
    name_native(name)
    try:
        yield
    finally:
        _prctl(_PR_SET_NAME, before)
