"""What the benchmark scripts share: timing one command run as a fresh process."""

from __future__ import annotations

import subprocess
import time


def timed_run(cmd: list[str], ok: tuple[int, ...] = (0, 1)) -> tuple[float, str]:
    """Run *cmd*; its wall time in seconds and its standard output. Any other exit status stops the benchmark."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd[:3])} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, proc.stdout
