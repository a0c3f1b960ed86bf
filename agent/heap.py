"""Keeping the native memory the models use from piling up over a long call.

The model libraries (onnxruntime, CTranslate2) allocate and free large buffers of a different size for every
utterance and every reply, from many threads. glibc, left to itself, keeps what a thread frees in that thread's
arena for its next allocation, gives a thread that finds the arenas busy a new one (up to eight per core, each
with its own high-water mark), and raises the size from which it maps a block apart each time such a block is
freed, so ever larger buffers come from the heaps and leave holes there. A long call's resident memory then climbs
towards every arena's high-water mark and stays there after the call.

So `python -m agent` first of all limits the arenas to ARENAS and fixes that size at MAP_APART_BYTES: a model's
big buffers are mapped and unmapped whole, and go back the moment they are freed. What is left in the heaps,
malloc_trim(0) hands back; the model workers run it when none of them has work, so no caller waits behind it.
eval.long_call measures what this does to a long call's memory.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
_trim = getattr(_libc, "malloc_trim", None)  # glibc only; elsewhere there is nothing to do
_mallopt = getattr(_libc, "mallopt", None)
M_MMAP_THRESHOLD, M_ARENA_MAX = -3, -8
"""mallopt's parameters (malloc.h)."""
ARENAS = 2
MAP_APART_BYTES = 256 * 1024


def release_free_memory() -> None:
    """Return freed heap pages to the system (nothing to do where the C library is not glibc)."""
    if _trim is not None:
        _trim(0)


def keep_heaps_small() -> None:
    """At most ARENAS malloc arenas, and blocks from MAP_APART_BYTES up mapped apart, in this process; either is
    left as it is where its MALLOC_ARENA_MAX or MALLOC_MMAP_THRESHOLD_ variable sets it. glibc fixes its own arena
    limit for good once a process has more than eight, so this runs before the libraries start their threads."""
    if _mallopt is None:
        return
    if "MALLOC_ARENA_MAX" not in os.environ:
        _mallopt(M_ARENA_MAX, ARENAS)
    if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        _mallopt(M_MMAP_THRESHOLD, MAP_APART_BYTES)
