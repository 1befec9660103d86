"""A class-data-sharing archive of the driver JVM's classes, made once and used by later launches.

Why: starting the driver JVM loads and verifies ~14,000 classes of Spark, Scala and their
libraries, the largest cost before a run's first model (docs/benchmarks.md). The JDK can map such
classes from an archive instead (CDS); measured here, session start 4.4-5.1 s against 7.2-8.3 s
and the first query 1.1 s against 2.4 s.

The life cycle, built so that no run pays for making the archive and no run trusts a bad one:

1. A launch with no archive yet records the classes its JVM loads (``-XX:DumpLoadedClassList``,
   cheap) and starts a dumper: this file run as a script, in its own session, at the lowest CPU
   priority. It waits for that JVM to exit, so the list is complete and the dump (~40 s of CPU,
   ~0.9 GB of memory, a ~170 MB file) never overlaps the run that recorded it.
2. The dumper takes a lock (one dump at a time per archive). Once the JVM has exited, and only
   when the machine has 1.5 GiB of memory available (else a later run records again), it runs
   ``java -Xshare:dump`` with the JVM's classpath into a temporary file and renames it into place
   only when the dump succeeded: a later launch sees a complete archive or none. A failed dump
   leaves a ``.failed`` file with the JDK's output, and no launch records or dumps for that archive
   again (delete it to retry).
3. Later launches add ``-XX:SharedArchiveFile``. The JVM checks the archive's JDK build and every
   classpath entry's size and time itself, and silently runs without sharing on any mismatch;
   the archive's name is a hash of the ``java`` binary, the Spark home and every jar's size and
   time, so a changed installation gets a new archive instead of a stale one.

4. Each launch that maps an archive renews its time; archives no launch has mapped for 14 days
   are removed by the next launch (an upgraded JDK or Spark names a new archive and leaves the old
   ~170 MB one unused; two installations in use keep theirs).

Archives live in a directory of this user's only (mode 0700): classes mapped from a file someone
else could write would be their code in our JVM. A user's own CDS options in the driver's
Java options (``-Xshare:off``, ``-XX:SharedArchiveFile``, ...) win, and
``DBT_LANCENS_CLASS_ARCHIVE=off`` turns the archive off (the test suite does, so that its many
short-lived JVMs never start dumps beside the tests).

This module imports only the standard library: the dumper runs it as a script, which must not pay
for importing pyspark, pyarrow or dbt.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import math
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

SWITCH = "DBT_LANCENS_CLASS_ARCHIVE"
_DIRECTORY_PREFIX = "dbt-lancens-class-archives-"
# A user's own class-data-sharing options: with any of them the launch is left as the user made it.
_USER_CDS_OPTIONS = (
    "-Xshare",
    "SharedArchiveFile",
    "DumpLoadedClassList",
    "ArchiveClassesAtExit",
    "SharedClassListFile",
)
_SPARK_STARTED = "org/apache/spark/SparkContext"  # in a list, the mark of a JVM that started Spark
# The driver's options that the dump must share with the launches that map the archive: the heap
# size (the archived heap objects depend on it) and the modules added to the boot layer.
_SHARED_OPTION_PREFIXES = ("-Xmx", "--add-modules")
_WAIT_SECONDS = 1.0
_DUMP_MEMORY_BYTES = 3 << 29  # 1.5 GiB: the dump's ~0.9 GB peak and room for everything else
_LOCK_SUFFIX = ".lock"
_FAILED_SUFFIX = ".failed"
UNUSED_SECONDS = 14 * 86_400  # an archive no launch mapped for this long belongs to no installation


def default_directory() -> str | None:
    """Where this user's archives live (``<tmp>/dbt-lancens-class-archives-<uid>``), None when
    ``DBT_LANCENS_CLASS_ARCHIVE=off`` or on a platform without POSIX users."""
    if os.environ.get(SWITCH, "").strip().lower() == "off" or os.name != "posix":
        return None
    return os.path.join(tempfile.gettempdir(), f"{_DIRECTORY_PREFIX}{os.getuid()}")


@dataclass(frozen=True)
class ArchiveLaunch:
    """What one driver launch does about the archive: map it, or record classes for it."""

    archive: str
    java: str
    class_list: str | None  # set when this launch records its classes for a dump

    @property
    def java_option(self) -> str:
        """The driver JVM's option: map the archive, or record the classes for one."""
        if self.class_list is None:
            return f"-XX:SharedArchiveFile={self.archive}"
        return f"-XX:DumpLoadedClassList={self.class_list}"


def plan_launch(directory: str | None, spark_home: str, user_options: str) -> ArchiveLaunch | None:
    """What the launch of a driver JVM from ``spark_home`` does about the archive, None for nothing:
    switched off, the user's own CDS options, no ``java``, a directory that is not privately ours,
    a dump of this archive that failed, or one that is under way (its list is being recorded or
    dumped already). Never raises for the file system: an archive only makes a start faster."""
    if directory is None or any(option in user_options for option in _USER_CDS_OPTIONS):
        return None
    java = _java()
    if java is None or not _private_directory(directory):
        return None
    try:
        archive = os.path.join(directory, f"driver-{_key(java, spark_home)}.jsa")
    except OSError:  # an unreadable jars directory or a dangling link in it: Spark will say so itself
        return None
    remove_unused(directory, keep=archive)
    if _is_ours(archive):
        _renew(archive)
        return ArchiveLaunch(archive, java, class_list=None)
    if os.path.lexists(_failed(archive)):
        _renew(_failed(archive))  # still this installation's: its failure is not left for tidying
        return None
    if _dump_under_way(archive):
        return None
    recording = f"{os.path.basename(archive)}.{os.getpid()}.{time.time_ns()}.classlist"
    class_list = os.path.join(directory, recording)
    return ArchiveLaunch(archive, java, class_list=class_list)


def start_dumper(launch: ArchiveLaunch, jvm_pid: int, classpath: str, jvm_options: Sequence[str]) -> None:
    """Start the dumper for ``launch``'s class list: a detached process that waits for the JVM
    ``jvm_pid`` to exit, then makes the archive (see the module docstring)."""
    if launch.class_list is None:
        return
    shared = [option for option in jvm_options if option.startswith(_SHARED_OPTION_PREFIXES)]
    # -I: isolated, so this file's directory (which holds a `types.py`) is not put before the stdlib.
    command = [sys.executable, "-I", os.path.abspath(__file__), str(jvm_pid), launch.class_list,
               launch.archive, launch.java, classpath, *shared]  # fmt: skip
    try:
        subprocess.Popen(  # noqa: S603 - our own interpreter and script
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C of dbt does not stop a dump that is under way
            close_fds=True,
        )
    except OSError:
        _remove(launch.class_list)  # nobody would dump it; the JVM writes on into the unlinked file


def dump_after_exit(
    jvm_pid: int,
    class_list: str,
    archive: str,
    java: str,
    classpath: str,
    jvm_options: Sequence[str],
    meminfo: str = "/proc/meminfo",
) -> bool:
    """Wait for ``jvm_pid`` to exit, then dump ``class_list`` into ``archive``; whether an archive
    is in place afterwards. The archive's lock is held from the start, so launches meanwhile do not
    record lists of their own; the list is removed in every case; a failed dump leaves ``.failed``.
    ``meminfo`` is where the machine's available memory is read (`memory_to_spare`)."""
    try:
        with open(_lock(archive), "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False  # another dumper makes this archive
            if not _holds(lock, _lock(archive)):
                return False  # tidied away meanwhile: the next launch records again
            while _alive(jvm_pid):
                time.sleep(_WAIT_SECONDS)
            if _is_ours(archive) or os.path.lexists(_failed(archive)):
                return _is_ours(archive)
            if not _spark_started(class_list) or not memory_to_spare(meminfo):
                return False  # not marked failed: a later run records again
            return _dump(class_list, archive, java, classpath, jvm_options)
    finally:
        _remove(class_list)


def memory_to_spare(meminfo: str = "/proc/meminfo") -> bool:
    """Whether the machine has the memory a dump takes (~0.9 GB at its peak) with room to spare,
    by the kernel's ``MemAvailable``; True where that is not known. A dump that pushed a small
    machine (a CI container) into swapping or the OOM killer would cost the user's next run far more
    than the archive saves."""
    try:
        with open(meminfo) as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 >= _DUMP_MEMORY_BYTES
    except (OSError, ValueError, IndexError):
        pass
    return True


def remove_unused(directory: str, keep: str, now: float | None = None) -> list[str]:
    """Remove the archives in ``directory`` other than ``keep``, with their lock and failure files,
    that no launch has used for ``UNUSED_SECONDS``; the archive paths removed. A lock or failure
    file whose archive was never made goes the same way (an upgrade leaves those behind too). A JVM
    that maps an archive meanwhile keeps its mapping (or, not finding it, runs without sharing); a
    dumper holding the lock keeps it all."""
    cutoff = (time.time() if now is None else now) - UNUSED_SECONDS
    pattern = os.path.join(glob.escape(directory), "driver-*.jsa")
    archives = set(glob.glob(pattern))
    for suffix in (_LOCK_SUFFIX, _FAILED_SUFFIX):
        archives.update(path.removesuffix(suffix) for path in glob.glob(pattern + suffix))
    removed = []
    for archive in sorted(archives - {keep}):
        if _last_used(archive) < cutoff and _remove_unless_dumping(archive):
            removed.append(archive)
    return removed


def _last_used(archive: str) -> float:
    """When a launch last used ``archive``: mapped it (its time, renewed at each mapping); for an
    archive never made, found its dump failed (the failure file's time, renewed likewise) or began
    its dump (the lock's). An archive that is not a regular file of ours counts as in use, so it is
    never touched."""
    try:
        found = os.lstat(archive)
    except OSError:
        found = None
    if found is not None:
        return found.st_mtime if _is_ours(archive) else math.inf
    times = []
    for path in (_lock(archive), _failed(archive)):
        try:
            times.append(os.lstat(path).st_mtime)
        except OSError:
            continue
    return max(times, default=math.inf)


def _remove_unless_dumping(archive: str) -> bool:
    """Remove ``archive`` and its lock and failure files unless a dumper holds its lock; whether
    they were removed. Never fails a launch over files it only meant to tidy away."""
    try:
        with open(_lock(archive), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            for path in (archive, _failed(archive), _lock(archive)):
                _remove(path)
    except OSError:  # held by a dumper (BlockingIOError), or not ours to remove
        return False
    return True


def _holds(lock: IO[str], path: str) -> bool:
    """Whether the file locked through ``lock`` is still the one at ``path``: `remove_unused` may
    unlink the lock file between a dumper's open and its flock, and a lock on an unlinked file
    keeps no other dumper out."""
    try:
        return os.path.samestat(os.fstat(lock.fileno()), os.stat(path))
    except FileNotFoundError:
        return False


def _renew(path: str) -> None:
    """Mark an archive (or its failure file) as used now (its time; the JVM checks the jars' times,
    not the archive's)."""
    try:
        os.utime(path)
    except OSError:
        pass


def _spark_started(class_list: str) -> bool:
    """Whether the JVM that recorded ``class_list`` got as far as starting Spark: a JVM that failed
    at start-up leaves a list of the JDK's own classes, which the JDK already shares."""
    with open(class_list) as recorded:
        return any(line.split(" ", 1)[0].strip() == _SPARK_STARTED for line in recorded)


def _dump(class_list: str, archive: str, java: str, classpath: str, jvm_options: Sequence[str]) -> bool:
    staged = f"{archive}.{os.getpid()}.tmp"
    command = [java, "-Xshare:dump", f"-XX:SharedClassListFile={class_list}",
               f"-XX:SharedArchiveFile={staged}", *jvm_options, "-cp", classpath]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, check=False)  # noqa: S603
    if result.returncode == 0 and os.path.isfile(staged):
        os.rename(staged, archive)
        for leftover in glob.glob(f"{glob.escape(archive)}.*.classlist"):  # of dumpers killed earlier
            _remove(leftover)
        return True
    _remove(staged)
    with open(_failed(archive), "w") as failed:
        failed.write(f"{shlex.join(command)}\nexit {result.returncode}\n")
        failed.write(result.stdout[-4000:] + result.stderr[-4000:])
    return False


def _java() -> str | None:
    """The ``java`` Spark's launcher runs (``$JAVA_HOME/bin/java``, else the first on ``PATH``)."""
    java_home = os.environ.get("JAVA_HOME")
    found = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    return os.path.realpath(found) if found and os.path.isfile(found) else None


def _key(java: str, spark_home: str) -> str:
    """A name for the archive of this JDK and classpath: any changed jar or JDK makes another."""
    digest = hashlib.sha256()

    def stamp(shown: str, path: str) -> None:
        found = os.stat(path)  # follows a linked jar to the file the JVM reads
        digest.update(f"{shown}\0{found.st_size}\0{found.st_mtime_ns}\n".encode())

    stamp(java, java)
    jars = os.path.join(spark_home, "jars")
    resolved = os.path.realpath(jars)  # once: a realpath per jar (~280) was 12 ms of every start
    for name in sorted(os.listdir(jars)) if os.path.isdir(jars) else []:
        stamp(os.path.join(resolved, name), os.path.join(jars, name))
    digest.update(os.path.realpath(spark_home).encode())
    return digest.hexdigest()[:16]


def _private_directory(directory: str) -> bool:
    """Whether ``directory`` is (made if missing) a real directory of this user that only they use."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        found = os.lstat(directory)
    except OSError:
        return False
    return stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid() and not found.st_mode & 0o077


def _is_ours(path: str) -> bool:
    """Whether ``path`` is a regular file (not a link) of this user."""
    try:
        found = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(found.st_mode) and found.st_uid == os.getuid()


def _dump_under_way(archive: str) -> bool:
    """Whether a dumper holds the archive's lock (it waits for its JVM, or dumps)."""
    try:
        with open(_lock(archive), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:  # held (BlockingIOError), or no lock file can be made: do not start either way
        return True
    return False


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs. A zombie has exited: its parent (whoever adopted the orphaned JVM,
    which need not be init) may never reap it, and waiting for it would keep the list forever."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            # The state follows the command name, which is in parentheses and may hold spaces.
            return stat.read().rpartition(")")[2].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def _lock(archive: str) -> str:
    return f"{archive}{_LOCK_SUFFIX}"


def _failed(archive: str) -> str:
    return f"{archive}{_FAILED_SUFFIX}"


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def main(argv: Sequence[str]) -> int:
    """The dumper's entry: ``<jvm pid> <class list> <archive> <java> <classpath> [jvm options...]``."""
    os.nice(19)  # a dump never competes with the user's next run for the CPU
    jvm_pid, class_list, archive, java, classpath, *jvm_options = argv
    return 0 if dump_after_exit(int(jvm_pid), class_list, archive, java, classpath, jvm_options) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
