"""The agent's process keeps one malloc arena (agent.heap.keep_heaps_small, run as agent/__main__.py is imported)."""

import subprocess
import sys

from tests.conftest import REPO

MALLOC_INFO = """
import ctypes, tempfile, threading
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p

def malloc_info() -> str:
    with tempfile.NamedTemporaryFile() as report:
        stream = ctypes.c_void_p(libc.fopen(report.name.encode(), b"w"))
        libc.malloc_info(0, stream)
        libc.fclose(stream)
        return open(report.name).read()"""

ARENAS_AFTER_16_THREADS = """
ready = threading.Barrier(16)

def allocate():
    held = bytearray(100_000)  # from malloc, in this thread's arena
    ready.wait()  # all 16 alive at once: none can take over another's arena

threads = [threading.Thread(target=allocate) for _ in range(16)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(malloc_info().count("<heap nr="))
"""

def run(first: str, probe: str) -> int:
    """What `probe` prints in a Python that ran `first` before it."""
    env = {"PATH": "/usr/bin:/bin"}  # no MALLOC_* variable from outside
    done = subprocess.run([sys.executable, "-c", first + MALLOC_INFO + probe], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    return int(done.stdout.split()[-1])


def test_the_agents_process_has_one_arena_where_16_threads_would_make_more():
    assert run("", ARENAS_AFTER_16_THREADS) > 2  # the count is seen: without the limit each thread gets its own
    assert run("import agent.__main__\n", ARENAS_AFTER_16_THREADS) == 1

