"""``okstra_core.malloc``: fewer malloc arenas in the long-running processes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from okstra_core import malloc

PROBE = """
import ctypes, threading
from okstra_core.malloc import fewer_arenas
print(fewer_arenas())
THREADS = 12
together = threading.Barrier(THREADS)
def work():
    # Blocks past pymalloc's 512 bytes come from the C library; a thread's first takes it an arena, which it
    # keeps while it lives: all of them are alive at once.
    held = [bytes(4096) for _ in range(64)]
    together.wait()
    del held
threads = [threading.Thread(target=work) for _ in range(THREADS)]
for t in threads: t.start()
for t in threads: t.join()
ctypes.CDLL(None).malloc_stats()  # to standard error: one "Arena N:" block per arena
"""


def _arenas(env: dict[str, str]) -> tuple[str, int]:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    return done.stdout.strip(), done.stderr.count("Arena ")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_threaded_process_keeps_to_two_arenas_unless_the_user_chose() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    agreed, arenas = _arenas(env)
    assert agreed == "True" and 1 <= arenas <= malloc.ARENAS
    chosen, arenas = _arenas({**env, "MALLOC_ARENA_MAX": "6"})
    assert chosen == "False", "the user's own choice is left as it is"
    assert arenas > malloc.ARENAS, "twelve threads get more arenas where the user allows them"


GIVE_BACK_PROBE = """
from okstra_core.malloc import give_back
def resident():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1])
# 80 MB of blocks past pymalloc's, every fiftieth kept: the heap's free pages lie between live blocks, where
# glibc's own trimming of its top never reaches.
blocks = [bytes(4000) + i.to_bytes(4, "little") for i in range(20000)]
kept = blocks[::50]
del blocks
before = resident()
print(give_back(), before, resident())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim and /proc are Linux's")
def test_what_a_large_reading_freed_is_given_back() -> None:
    out = subprocess.run(
        [sys.executable, "-c", GIVE_BACK_PROBE],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MALLOC_ARENA_MAX": "2"},
    ).stdout.split()
    assert out[0] == "True"
    before, after = int(out[1]), int(out[2])
    assert before - after > 40_000, f"resident {before} kB before, {after} kB after"


LARGE_BLOCKS_PROBE = """
import sys
from okstra_core.malloc import fewer_arenas
if sys.argv[1] == "fixed":
    fewer_arenas()
def resident():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1])
first = bytearray(4 << 20)  # a large reading let go: glibc's own threshold rises past the blocks below
del first
before = resident()
large, small = [], []
for i in range(40):  # 20 MB of large blocks, each followed by a small one that lives on
    large.append(bytearray(512 << 10))
    small.append(bytes(2000) + i.to_bytes(4, "little"))
del large
print(before, resident())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt and /proc are Linux's")
def test_large_blocks_freed_after_a_first_large_reading_are_given_back_at_once() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}

    def kept_kb(mode: str) -> int:
        done = subprocess.run(
            [sys.executable, "-c", LARGE_BLOCKS_PROBE, mode], capture_output=True, text=True, env=env, check=True
        )
        before, after = map(int, done.stdout.split())
        return after - before

    assert kept_kb("default") > 15_000, "glibc's own threshold keeps them (the case this guards against)"
    assert kept_kb("fixed") < 5_000, "the fixed threshold maps each on its own and unmaps it when freed"
