"""Keeping the native memory the models use from piling up over a long call.

The model libraries (onnxruntime, CTranslate2) allocate and free large buffers of a different size for every
utterance and every reply, from many threads. glibc, left to itself, keeps what a thread frees in that thread's
arena for its next allocation, and gives a thread that finds the arenas busy a new one (up to eight per core),
each with its own high-water mark: a long call's resident memory climbs towards every arena's high-water mark and
stays there after the call.

So `python -m agent` first of all limits the arenas to ARENAS, and the model workers hand the free pages back
(malloc_trim) when none of them has work, so no caller waits behind it. One arena, the main one, because
malloc_trim returns the free space at the top of the main arena's heap but not at the top of another arena's: there
glibc gives it back only when a later free leaves more than its trim threshold on top, which it raises with the
biggest mapped block freed (up to 64 MiB), so tens of MiB stayed resident for minutes after a reply. eval.long_call
measures what this does to a long call's memory. (Mapping every block from 256 KiB up apart kept the heaps flatter
still, but doubled Whisper's time per turn in eval.replay: its buffers were mapped and faulted in afresh for every
decode.)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
_trim = getattr(_libc, "malloc_trim", None)  # glibc only; elsewhere there is nothing to do
_mallopt = getattr(_libc, "mallopt", None)
M_ARENA_MAX = -8
"""mallopt's parameter for the most arenas (malloc.h)."""
ARENAS = 1


def release_free_memory() -> None:
    """Return freed heap pages to the system (nothing to do where the C library is not glibc)."""
    if _trim is not None:
        _trim(0)


def keep_heaps_small() -> None:
    """At most ARENAS malloc arenas in this process, unless MALLOC_ARENA_MAX says otherwise. glibc fixes its own
    limit for good once a process has more than eight arenas, so this runs before the libraries start threads."""
    if _mallopt is not None and "MALLOC_ARENA_MAX" not in os.environ:
        _mallopt(M_ARENA_MAX, ARENAS)
