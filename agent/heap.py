"""Giving the native memory the models free back to the system.

glibc keeps what a thread frees in that thread's arena for its next allocation. The model libraries
(onnxruntime, CTranslate2) allocate and free large buffers of a different size for every utterance and every
reply, from many threads, so a long call's resident memory climbs towards each arena's high-water mark and
stays there after the call. malloc_trim(0) hands the free pages of every arena back; the model workers run it
when none of them has work, so no caller waits behind it.
"""

from __future__ import annotations

import ctypes
import ctypes.util

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
_trim = getattr(_libc, "malloc_trim", None)  # glibc only; elsewhere there is nothing to do


def release_free_memory() -> None:
    """Return freed heap pages to the system (nothing to do where the C library is not glibc)."""
    if _trim is not None:
        _trim(0)
