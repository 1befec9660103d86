"""The benchmarks' subprocess protocol: a worker prints its result as JSON on its last stdout line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path


def worker_result(command: list[str], cwd: Path, what: str, timeout: float | None = None) -> dict | None:
    """Run one worker (each adapter in its own process and directory); None when it timed out."""
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        raise SystemExit(f"{what} worker failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
