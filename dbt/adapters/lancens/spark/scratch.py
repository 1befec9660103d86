"""This process's own temporary directory: removed when the process ends, by it or by the next one.

Why: a session needs a Spark warehouse directory (Spark's in-memory catalog still makes a
database's directory there) and the warm-up writes a throwaway Lance table (``warmup.py``). Each
was a directory of its own in the system's temporary directory, and every dbt invocation left one:
the warehouse directory was never removed, and the warm-up's was left whenever the process exited
while the warm-up ran on its background thread (a parse error) or was killed.

One directory per process holds both, and the process is what owns it:

* it removes the directory at exit (``atexit``, which dbt's exit with an error runs too);
* a killed process cannot, so it holds an exclusive ``flock`` on a file inside for its whole life
  (the kernel releases the lock however the process ends), and each process that makes its own
  directory first removes this user's directories whose lock is free. One younger than
  ``_GRACE_SECONDS`` is left alone: its process may not have taken its lock yet.

Standard library only, like the rest of the session's start-up before the JVM runs.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import shutil
import stat
import tempfile
import threading
import time
from typing import IO

PREFIX = "dbt-lancens-process-"
_OWNER = "owner.lock"
_GRACE_SECONDS = 60.0

_lock = threading.Lock()
_directory: str | None = None


def process_directory() -> str:
    """This process's directory in the temporary directory, made on the first call."""
    global _directory
    with _lock:
        if _directory is None:
            base = tempfile.gettempdir()
            remove_abandoned(base)
            _directory = _claim(base)
        return _directory


def _claim(base: str) -> str:
    """Make a directory in ``base``, lock its owner file for this process's life, remove it at exit."""
    path = tempfile.mkdtemp(prefix=PREFIX, dir=base)
    owner = open(os.path.join(path, _OWNER), "w")  # noqa: SIM115 - open (and locked) until the process ends
    fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
    atexit.register(_remove, path, owner, os.getpid())
    return path


def _remove(path: str, owner: IO[str], pid: int) -> None:
    """Remove ``path`` at exit; not in a forked child that exits through ``sys.exit``, whose parent
    still uses the directory."""
    if os.getpid() == pid:
        shutil.rmtree(path, ignore_errors=True)
        owner.close()


def remove_abandoned(base: str, grace_seconds: float = _GRACE_SECONDS) -> None:
    """Remove the directories in ``base`` that a process of this user made and no running process
    holds: one ended without removing its own (killed, or its daemon thread wrote after exit)."""
    now = time.time()
    for name in os.listdir(base):
        path = os.path.join(base, name)
        if not name.startswith(PREFIX):
            continue
        try:
            found = os.lstat(path)
        except OSError:
            continue
        mine = stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid()
        if mine and now - found.st_mtime >= grace_seconds and not _held(path):
            shutil.rmtree(path, ignore_errors=True)


def _held(path: str) -> bool:
    """Whether a running process holds ``path``'s owner lock (a missing owner file: none does)."""
    try:
        with open(os.path.join(path, _OWNER), "rb") as owner:
            fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except FileNotFoundError:
        return False
    except OSError:  # locked (BlockingIOError), or unreadable: leave it
        return True
    return False
