"""The proxy process's C heap: memory freed by one request kept for the next.

Every request body is a fresh block of its size (the bytes joined from its chunks, the chunks
themselves). glibc gives a block over 128 KB its own mapping and unmaps it when freed, or
trims the top of the heap back to the system, so each 1 MB body faults in 256 new pages:
measured, about a third of the CPU the proxy spends carrying a valid 1 MB request. Raising
both thresholds keeps freed blocks in the heap, where the next body of that size finds them.
"""

from __future__ import annotations

import ctypes
import sys

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's largest on 64-bit: a larger block is mapped
# free heap kept before its top goes back to the system: a few large bodies' worth (measured,
# 64 MB costs a sequence of 10 MB requests no more CPU than 256 MB)
TRIM_THRESHOLD = 64 * 1024 * 1024


def keep_freed_blocks() -> bool:
    """Sets the thresholds where the C library is glibc; whether it did."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # another C library (musl has no mallopt)
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
