"""The driver JVM's class-data-sharing archive (spark/class_archive.py): a launch without one records
its classes, a detached dumper makes the archive once that JVM has exited, later launches map it.

Real JVMs throughout: the launches are real sessions in subprocesses, the dumps real
``java -Xshare:dump`` runs. The dumps here use a short class list (a few classes, about 2 s of CPU)
instead of a run's ~14,000 (about 40 s)."""

from __future__ import annotations

import fcntl
import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from dbt.adapters.lancens.spark import class_archive, session

# one of the unit scopes of a minute or more: scheduled first of its folder (tests/conftest.py)
pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).parent / "scripts" / "archive_session.py"
ROOT = Path(__file__).parents[3]
# Enough for the dumper's rule (a JVM that started Spark) and a real dump, in a couple of seconds.
SHORT_LIST = "java/lang/Object\njava/lang/String\norg/apache/spark/SparkContext\n"


@pytest.fixture
def archive_dir(tmp_path: Path) -> str:
    return str(tmp_path / "archives")


@pytest.fixture
def fake_home(tmp_path: Path) -> Path:
    """A Spark home with one jar: enough for naming an archive."""
    home = tmp_path / "spark-home"
    (home / "jars").mkdir(parents=True)
    (home / "jars" / "spark-core.jar").write_bytes(b"jar")
    return home


@pytest.fixture(scope="module")
def driver(spark: Any) -> tuple[str, list[str]]:
    """The classpath and launch options of this process's driver JVM, launched from the same shared
    home as the subprocesses' (what a dump of their archive must use)."""
    runtime = spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
    options = [
        str(option) for option in runtime.getInputArguments() if str(option).startswith(("-Xmx", "--add"))
    ]
    return str(spark._jvm.java.lang.System.getProperty("java.class.path")), options


@pytest.fixture
def recording(archive_dir: str) -> tuple[str, class_archive.ArchiveLaunch]:
    """The shared launch home, and a launch from it that records: its class list holds SHORT_LIST."""
    home = session._launch_home("local[1]", session.default_config(), None)
    assert home is not None
    launch = class_archive.plan_launch(archive_dir, home, "")
    assert launch is not None and launch.class_list is not None
    Path(launch.class_list).write_text(SHORT_LIST)
    return home, launch


def _run_session(directory: str, *flags: str) -> dict[str, Any]:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), directory, *flags], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _dead_pid() -> int:
    finished = subprocess.Popen(["true"])
    finished.wait()
    return finished.pid


def _wait_for(condition: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def test_a_launch_records_then_the_archive_is_used_and_a_changed_jar_gets_another(
    archive_dir: str, fake_home: Path
) -> None:
    first = class_archive.plan_launch(archive_dir, str(fake_home), "-Dsome.setting=1")
    assert first is not None and first.class_list is not None
    assert os.path.dirname(first.class_list) == archive_dir
    assert first.java_option == f"-XX:DumpLoadedClassList={first.class_list}"
    assert os.stat(archive_dir).st_mode & 0o777 == 0o700

    Path(first.archive).write_bytes(b"an archive")
    mapped = class_archive.plan_launch(archive_dir, str(fake_home), "")
    assert mapped is not None and mapped.class_list is None
    assert mapped.java_option == f"-XX:SharedArchiveFile={first.archive}"

    (fake_home / "jars" / "spark-core.jar").write_bytes(b"another jar")
    changed = class_archive.plan_launch(archive_dir, str(fake_home), "")
    assert changed is not None and changed.class_list is not None and changed.archive != first.archive

    (fake_home / "jars" / "missing.jar").symlink_to(fake_home / "nowhere.jar")
    assert class_archive.plan_launch(archive_dir, str(fake_home), "") is None  # Spark reports it, not us


def test_archives_no_launch_maps_for_two_weeks_are_removed_and_a_mapped_one_is_renewed(
    archive_dir: str, fake_home: Path
) -> None:
    """An upgrade names a new archive and leaves the old ~170 MB one: the next launch removes it
    once unused for `UNUSED_SECONDS`, with its lock and failure files; a mapped archive is kept."""
    current = class_archive.plan_launch(archive_dir, str(fake_home), "")
    assert current is not None
    Path(current.archive).write_bytes(b"the archive in use")
    directory = Path(archive_dir)
    old = time.time() - class_archive.UNUSED_SECONDS - 60
    stale = directory / "driver-0000000000000001.jsa"
    recent = directory / "driver-0000000000000002.jsa"
    elsewhere = directory.parent / "driver-0000000000000003.jsa"
    linked = directory / "driver-0000000000000003.jsa"
    for path in (stale, recent, elsewhere, Path(f"{stale}.lock"), Path(f"{stale}.failed")):
        path.write_bytes(b"x")
    linked.symlink_to(elsewhere)  # not a regular file of ours: never touched
    for path in (stale, elsewhere, Path(current.archive)):
        os.utime(path, (old, old))
    younger = time.time() - class_archive.UNUSED_SECONDS + 60  # a minute short of the limit
    os.utime(recent, (younger, younger))

    mapped = class_archive.plan_launch(archive_dir, str(fake_home), "")
    assert mapped is not None and mapped.class_list is None
    archives = sorted(path.name for path in directory.glob("driver-*.jsa"))
    assert archives == sorted([Path(current.archive).name, recent.name, linked.name])
    assert not Path(f"{stale}.lock").exists() and not Path(f"{stale}.failed").exists()
    assert os.stat(current.archive).st_mtime > time.time() - 60  # mapping renewed it
    later = time.time() + 120
    assert class_archive.remove_unused(archive_dir, keep=current.archive, now=later) == [str(recent)]
    assert Path(current.archive).exists() and elsewhere.exists()


def test_the_users_options_the_switch_and_a_shared_directory_turn_it_off(
    archive_dir: str, fake_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for options in (
        "-Xshare:off",
        "-XX:SharedArchiveFile=/opt/app.jsa",
        "-Xmx2g -XX:ArchiveClassesAtExit=a.jsa",
    ):
        assert class_archive.plan_launch(archive_dir, str(fake_home), options) is None
    assert class_archive.plan_launch(None, str(fake_home), "") is None

    monkeypatch.setenv(class_archive.SWITCH, "off")  # what tests/conftest.py sets for the suite
    assert class_archive.default_directory() is None
    monkeypatch.setenv(class_archive.SWITCH, "")
    assert class_archive.default_directory() == os.path.join(
        class_archive.tempfile.gettempdir(), f"dbt-lancens-class-archives-{os.getuid()}"
    )

    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)  # others could plant an archive here: their classes would run in our JVM
    assert class_archive.plan_launch(str(shared), str(fake_home), "") is None
    link = tmp_path / "link"
    link.symlink_to(archive_dir, target_is_directory=False)
    os.makedirs(archive_dir, mode=0o700)
    assert class_archive.plan_launch(str(link), str(fake_home), "") is None


def test_the_session_asks_the_users_driver_options_and_spark_submit_opts(
    archive_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = session._launch_home("local[1]", session.default_config(), None)
    assert session._plan_class_archive(archive_dir, "local[1]", None, home, {}) is not None
    for key in ("spark.driver.extraJavaOptions", "spark.driver.defaultJavaOptions"):
        assert session._plan_class_archive(archive_dir, "local[1]", None, home, {key: "-Xshare:off"}) is None
    monkeypatch.setenv("SPARK_SUBMIT_OPTS", "-Dx=1 -XX:SharedArchiveFile=/opt/mine.jsa")
    assert session._plan_class_archive(archive_dir, "local[1]", None, home, {}) is None
    monkeypatch.delenv("SPARK_SUBMIT_OPTS")
    own_home_per_launch = session._plan_class_archive(
        archive_dir, "local-cluster[2,1,1024]", io.BytesIO(), home, {}
    )
    assert own_home_per_launch is None


def test_no_launch_records_while_a_dump_is_under_way_or_after_one_failed(
    archive_dir: str, fake_home: Path
) -> None:
    launch = class_archive.plan_launch(archive_dir, str(fake_home), "")
    assert launch is not None
    with open(f"{launch.archive}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        assert class_archive.plan_launch(archive_dir, str(fake_home), "") is None
    assert class_archive.plan_launch(archive_dir, str(fake_home), "") is not None

    Path(f"{launch.archive}.failed").write_text("exit 1\n")
    assert class_archive.plan_launch(archive_dir, str(fake_home), "") is None


def test_a_dump_is_renamed_into_place_and_a_launch_maps_it(
    archive_dir: str, recording: tuple[str, class_archive.ArchiveLaunch], driver: tuple[str, list[str]]
) -> None:
    classpath, options = driver
    _, launch = recording

    assert class_archive.dump_after_exit(
        _dead_pid(), launch.class_list, launch.archive, launch.java, classpath, options
    )

    assert sorted(os.listdir(archive_dir)) == sorted(
        [os.path.basename(launch.archive), f"{os.path.basename(launch.archive)}.lock"]
    )
    facts = _run_session(archive_dir)
    assert facts["answer"] == 1
    assert facts["cds_options"] == [f"-XX:SharedArchiveFile={launch.archive}"]
    assert facts["user_option_kept"] is True  # the archive's option never replaces the user's
    assert facts["mapped"] == [launch.archive]  # the JVM accepted it: its classpath and JDK match
    assert facts["class_lists"] == []


def test_a_launch_without_an_archive_records_its_classes_for_a_dumper_that_waits(archive_dir: str) -> None:
    facts = _run_session(archive_dir, "--skip-dump")

    assert facts["answer"] == 1
    (class_list,) = facts["class_lists"]
    assert facts["cds_options"] == [f"-XX:DumpLoadedClassList={class_list}"]
    assert facts["user_option_kept"] is True
    assert facts["mapped"] == []
    assert facts["recorded_spark"] is True
    assert facts["other_launch_while_running"] == "None"  # the dumper held the lock while the JVM ran
    # The JVM has exited: the dumper wakes, finds the archive marked failed, removes the list, ends.
    assert _wait_for(lambda: not os.path.exists(class_list), 120), os.listdir(archive_dir)
    assert not any(name.endswith(".jsa") for name in os.listdir(archive_dir))
    archive = class_list.split(".jsa.")[0] + ".jsa"
    with open(f"{archive}.lock", "a") as lock:
        assert _wait_for(lambda: _can_lock(lock), 30)  # the dumper is gone


def _can_lock(lock: Any) -> bool:
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    fcntl.flock(lock, fcntl.LOCK_UN)
    return True


def test_the_detached_dumper_waits_for_its_jvm_to_exit(
    archive_dir: str, recording: tuple[str, class_archive.ArchiveLaunch], driver: tuple[str, list[str]]
) -> None:
    classpath, options = driver
    home, launch = recording
    killed_dumpers_list = Path(f"{launch.archive}.999.1.classlist")
    killed_dumpers_list.write_text(SHORT_LIST)
    running_jvm = subprocess.Popen(["sleep", "600"])  # stands in for the driver JVM that recorded the list
    try:
        class_archive.start_dumper(launch, running_jvm.pid, classpath, options)
        assert _wait_for(lambda: class_archive.plan_launch(archive_dir, home, "") is None, 30)
        time.sleep(2)
        assert not os.path.exists(launch.archive) and os.path.exists(launch.class_list)
    finally:
        running_jvm.kill()
        running_jvm.wait()

    assert _wait_for(lambda: os.path.exists(launch.archive), 300)
    assert not os.path.exists(launch.class_list) and not killed_dumpers_list.exists()
    assert not [name for name in os.listdir(archive_dir) if name.endswith((".tmp", ".failed"))]
    mapped = class_archive.plan_launch(archive_dir, home, "")
    assert mapped is not None and mapped.class_list is None


def test_a_jvm_that_exited_unreaped_counts_as_gone(
    recording: tuple[str, class_archive.ArchiveLaunch], driver: tuple[str, list[str]]
) -> None:
    """An orphaned JVM is adopted by a subreaper that may never reap it: its zombie must not keep the
    dumper waiting (in the suite, a test process that became a subreaper left such zombies). The
    archive is marked failed first, so the dumper ends as soon as it sees the JVM gone, without a
    dump (whose time depends on the machine's load)."""
    classpath, options = driver
    _, launch = recording
    Path(f"{launch.archive}.failed").write_text("marked by the test\n")
    exited = subprocess.Popen(["true"])  # not waited for: a zombie of this process until the end
    try:
        assert _wait_for(lambda: class_archive._zombie(exited.pid), 30)
        dumping = threading.Thread(
            target=class_archive.dump_after_exit,
            args=(exited.pid, launch.class_list, launch.archive, launch.java, classpath, options),
            daemon=True,
        )
        dumping.start()
        dumping.join(60)
        assert not dumping.is_alive(), "the dumper still waits for a JVM that has exited"
    finally:
        exited.wait()
    assert not os.path.exists(launch.class_list) and not os.path.exists(launch.archive)


def test_no_dump_without_the_memory_it_takes(
    archive_dir: str,
    recording: tuple[str, class_archive.ArchiveLaunch],
    driver: tuple[str, list[str]],
    tmp_path: Path,
) -> None:
    """A machine with less than 1.5 GiB available (by the kernel's MemAvailable) gets no dump and no
    failure mark: a later run records again."""
    small = tmp_path / "meminfo-small"
    small.write_text(
        "MemTotal:        2048000 kB\nMemFree:          300000 kB\nMemAvailable:     900000 kB\n"
    )
    large = tmp_path / "meminfo-large"
    large.write_text("MemTotal:        8192000 kB\nMemAvailable:    4000000 kB\n")
    assert not class_archive.memory_to_spare(str(small))
    assert class_archive.memory_to_spare(str(large))
    assert class_archive.memory_to_spare(str(tmp_path / "no-such-file"))  # not known: dump

    home, launch = recording
    classpath, options = driver
    assert not class_archive.dump_after_exit(
        _dead_pid(), launch.class_list, launch.archive, launch.java, classpath, options, meminfo=str(small)
    )
    assert sorted(os.listdir(archive_dir)) == [f"{os.path.basename(launch.archive)}.lock"]
    assert class_archive.plan_launch(archive_dir, home, "") is not None


def test_a_failed_dump_is_marked_and_a_list_without_spark_is_not_dumped(
    archive_dir: str, recording: tuple[str, class_archive.ArchiveLaunch], driver: tuple[str, list[str]]
) -> None:
    classpath, _ = driver
    home, launch = recording

    Path(launch.class_list).write_text("java/lang/Object\n")  # a JVM that never started Spark
    assert not class_archive.dump_after_exit(
        _dead_pid(), launch.class_list, launch.archive, launch.java, classpath, []
    )
    assert sorted(os.listdir(archive_dir)) == [f"{os.path.basename(launch.archive)}.lock"]

    Path(launch.class_list).write_text(SHORT_LIST)
    too_small_heap = ["-Xmx1k"]
    assert not class_archive.dump_after_exit(
        _dead_pid(), launch.class_list, launch.archive, launch.java, classpath, too_small_heap
    )
    failed = Path(f"{launch.archive}.failed").read_text()
    assert "exit 1" in failed and "Too small" in failed and "-Xshare:dump" in failed
    assert not os.path.exists(launch.archive) and not os.path.exists(launch.class_list)
    assert not [name for name in os.listdir(archive_dir) if name.endswith(".tmp")]
    assert class_archive.plan_launch(archive_dir, home, "") is None


def test_lock_and_failure_files_of_archives_never_made_are_removed_unless_in_use(
    archive_dir: str, fake_home: Path
) -> None:
    """A failed dump's `.failed` and a lock of an archive that was never made (memory too low, a
    killed dumper) are left behind by an upgrade as well: removed once unused for `UNUSED_SECONDS`;
    the current installation's failure file is renewed at each launch, and a held lock is kept."""
    current = class_archive.plan_launch(archive_dir, str(fake_home), "")
    assert current is not None
    directory = Path(archive_dir)
    old = time.time() - class_archive.UNUSED_SECONDS - 60
    failed_alone = directory / "driver-00000000000000a1.jsa.failed"
    lock_alone = directory / "driver-00000000000000a2.jsa.lock"
    held = directory / "driver-00000000000000a3.jsa.lock"
    current_failed = Path(f"{current.archive}.failed")
    for path in (failed_alone, lock_alone, held, current_failed):
        path.write_text("x")
        os.utime(path, (old, old))

    with open(held) as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)  # a dumper of that archive, still waiting for its JVM
        assert class_archive.plan_launch(archive_dir, str(fake_home), "") is None  # its dump failed
        remaining = sorted(path.name for path in directory.iterdir())
    current_lock = Path(f"{current.archive}.lock")  # made by the first launch's check for a dump
    assert remaining == sorted([held.name, current_failed.name, current_lock.name])
    assert current_failed.stat().st_mtime > time.time() - 60  # renewed: still this installation's
    later = time.time() + 120
    assert class_archive.remove_unused(archive_dir, keep=current.archive, now=later) == [
        str(held).removesuffix(".lock")
    ]


def test_a_dumper_whose_lock_file_was_tidied_away_gives_up(
    archive_dir: str,
    recording: tuple[str, class_archive.ArchiveLaunch],
    driver: tuple[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`remove_unused` may unlink the lock between a dumper's open and its flock; a lock on an
    unlinked file keeps no other dumper out, so that dumper must not dump. The race is forced by
    unlinking the lock file just before the real flock takes it."""
    home, launch = recording
    classpath, options = driver
    real_flock = fcntl.flock

    def tidied_then_flock(lock, operation: int) -> None:
        os.remove(f"{launch.archive}.lock")  # the cleaner, between the dumper's open and its flock
        real_flock(lock, operation)

    monkeypatch.setattr(class_archive.fcntl, "flock", tidied_then_flock)
    assert not class_archive.dump_after_exit(
        _dead_pid(), launch.class_list, launch.archive, launch.java, classpath, options
    )
    assert not os.path.exists(launch.archive)  # no dump under a lock nobody else could see
