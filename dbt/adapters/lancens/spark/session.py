"""The one SparkSession of a process, configured for a Lance warehouse.

Why each setting:
- ``spark.sql.catalogImplementation=in-memory``: the Lance namespace is the catalog of record, so
  Spark's catalog is a per-session cache (see ``catalog.py``); Hive/Derby would leave
  ``metastore_db`` and ``spark-warehouse`` in the working directory (the warehouse dir is in the
  process's own temporary directory, ``scratch.py``, removed when the process ends).
- loopback driver host and bind address (and ``SPARK_LOCAL_IP``): nothing listens beyond 127.0.0.1;
  the web UI is off by default for the same reason (pass ``spark.ui.enabled=true`` to turn it on).
- ``spark.sql.ui.explainMode=simple`` while nothing can show a query's plan description (web UI
  and event log off, no ``spark.extraListeners``): Spark renders the description for every query
  even then, and the default ``formatted`` one cost ~5% of the driver JVM's CPU on small queries
  (a microbatch batch, docs/benchmarks.md). Anyone who turns the UI or event log on gets Spark's
  default back, and an explicit ``spark.sql.ui.explainMode`` always wins.
- ``spark.pyspark.python`` = ``sys.executable``: Python workers must be the interpreter that has
  dbt-lancens and pylance installed, even when dbt was started without activating its virtualenv.
- The Python worker daemon stays on (workers are forked from it, which is much cheaper than a new
  interpreter per task). The daemon only imports pyspark; pylance is imported by a forked worker,
  which never forks again, so Lance never lives in a process that forks (docs/spark-datasource.md).

``files_dir`` keeps Spark's own output off the caller's console: the JVM's stdout and stderr
(log4j lines, JVM banners, progress bars, Python workers' stderr) go to ``spark.log`` there. A
``local-cluster`` master's workers keep their working directories (executor logs, about 300 KB a run)
in a temporary directory, never in ``<pyspark>/work`` nor beside the log; ``spark.log`` names it.

The driver JVM is launched from a SPARK_HOME of ours (`_launch_home`): a directory of links to the
real one. With pip-installed PySpark the real home is the ``pyspark`` package, and Spark puts its
``python/lib/pyspark.zip`` first on every Python worker's path; Python cannot cache bytecode for a
zip, so each daemon and worker compiled pyspark from source (0.4 s of CPU per daemon here, one
daemon per kind of worker). Our home leaves ``python`` out, so workers import the same pyspark from
site-packages, compiled once (docs/benchmarks.md).

This module deliberately does not import lance: the driver forks the JVM launcher with a
``preexec_fn``, and pylance warns (rightly) when a process that loaded it forks.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import sys
import tempfile
import warnings
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import Any, BinaryIO

import pyspark
from pyspark import SparkConf, SparkContext
from pyspark.find_spark_home import _find_spark_home
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

from dbt.adapters.lancens.spark import class_archive, scratch
from dbt.adapters.lancens.spark.datasource import register_data_source
from dbt.adapters.lancens.spark.java_classes import java_class

_LOOPBACK = "127.0.0.1"
LOG_FILE = "spark.log"
_SHADOW_HOME_PREFIX = "dbt-lancens-spark-home-"
_SHARED_HOME_PREFIX = "dbt-lancens-shared-spark-home-"
_SUBMIT_OPTIONS = "SPARK_SUBMIT_OPTS"
_EXPLAIN_MODE = "spark.sql.ui.explainMode"
_DRIVER_OPTION_SETTINGS = ("spark.driver.defaultJavaOptions", "spark.driver.extraJavaOptions")


def default_config() -> dict[str, str]:
    """The settings every dbt-lancens session starts from (callers' ``config`` overrides them)."""
    return {
        "spark.sql.catalogImplementation": "in-memory",
        "spark.driver.host": _LOOPBACK,
        "spark.driver.bindAddress": _LOOPBACK,
        "spark.ui.enabled": "false",
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        "spark.executorEnv.PYSPARK_PYTHON": sys.executable,
        "spark.executorEnv.SPARK_LOCAL_IP": _LOOPBACK,
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
    }


def get_or_create_session(
    master: str = "local[*]",
    config: Mapping[str, str] | None = None,
    app_name: str = "dbt-lancens",
    files_dir: str | None = None,
    class_archive_dir: str | None = None,
) -> SparkSession:
    """Return this process's SparkSession, creating it on first call, with ``lance`` registered.

    Idempotent: later calls return the active session (static settings such as the master cannot
    change once the JVM runs; runtime settings in ``config`` are applied to it). ``files_dir``
    (created if missing) takes Spark's console output and working files, see the module docstring.
    ``class_archive_dir`` keeps the driver JVM's class-data-sharing archives (``class_archive.py``);
    None launches the JVM without one.
    """
    os.environ.setdefault("SPARK_LOCAL_IP", _LOOPBACK)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    active = _running_session()
    if active is not None:
        for key, value in (config or {}).items():
            if active.conf.isModifiable(key):
                active.conf.set(key, value)
        register_data_source(active)
        return active
    warehouse = tempfile.mkdtemp(prefix="spark-warehouse-", dir=scratch.process_directory())
    settings = session_settings(config, files_dir, warehouse)
    with warnings.catch_warnings():
        # Starting the JVM forks and immediately execs `java`: nothing of lance runs in the
        # child, so pylance's fork-safety warning (raised by its at-fork hook) does not apply.
        warnings.filterwarnings("ignore", message="lance is not fork-safe")
        _start_jvm(master, app_name, settings, files_dir, class_archive_dir)
        builder = SparkSession.builder.master(master).appName(app_name)
        for key, value in settings.items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
    register_data_source(session)
    return session


def session_settings(
    config: Mapping[str, str] | None, files_dir: str | None, warehouse_dir: str
) -> dict[str, str]:
    """Every setting a new session starts with: ours, then the caller's ``config`` over them."""
    settings = {
        **default_config(),
        "spark.sql.warehouse.dir": warehouse_dir,
        **({"spark.ui.showConsoleProgress": "false"} if files_dir else {}),
        **dict(config or {}),
    }
    if _plan_descriptions_unseen(settings):
        settings.setdefault(_EXPLAIN_MODE, "simple")
    return settings


def _plan_descriptions_unseen(settings: Mapping[str, str]) -> bool:
    """Nothing of this session can show the plan description Spark renders for each query."""
    return (
        str(settings.get("spark.ui.enabled", "true")).strip().lower() == "false"
        and str(settings.get("spark.eventLog.enabled", "false")).strip().lower() != "true"
        and not str(settings.get("spark.extraListeners", "")).strip()
    )


def _running_session() -> SparkSession | None:
    """The process's session if its JVM already runs, asked from any thread.

    `SparkSession.getActiveSession()` is per thread: a session started on dbt's background or model
    threads is not "active" on another, and launching a driver JVM again would leak one JVM per
    thread that asks (each takes hundreds of MB). The builder returns the existing session then."""
    if SparkContext._active_spark_context is None:
        return None
    return SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()


def _start_jvm(
    master: str, app_name: str, settings: Mapping[str, str], files_dir: str | None, archive_dir: str | None
) -> None:
    """Launch the driver JVM from our home (`_launch_home`), its stdout and stderr in
    ``files_dir/spark.log`` when given (else the caller's console), mapping its classes from the
    archive in ``archive_dir`` or recording them for one (``class_archive.py``).

    Launching it here first (the session builder then reuses the gateway) is PySpark's own hook for
    choosing the JVM's output; the builder would launch it the same way, from the caller's home."""
    conf = SparkConf(loadDefaults=False).setMaster(master).setAppName(app_name).setAll(list(settings.items()))
    with ExitStack() as launch:
        log = None
        if files_dir is not None:
            os.makedirs(files_dir, exist_ok=True)
            log = launch.enter_context(open(os.path.join(files_dir, LOG_FILE), "ab"))
        home = _launch_home(master, settings, log)
        archive = _plan_class_archive(archive_dir, master, log, home, settings)
        variables = {"SPARK_HOME": home} if home is not None else {}
        if archive is not None:
            variables[_SUBMIT_OPTIONS] = (
                f"{os.environ.get(_SUBMIT_OPTIONS, '')} {archive.java_option}".strip()
            )
        launch.enter_context(
            _launch_environment(variables, {"SPARK_HOME": _find_spark_home(), _SUBMIT_OPTIONS: ""})
        )
        gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log} if log else None)
    if archive is not None and archive.class_list is not None:
        _start_class_dumper(archive, gateway)
    SparkContext._ensure_initialized(gateway=gateway, conf=conf)


def _plan_class_archive(
    archive_dir: str | None, master: str, log: BinaryIO | None, home: str | None, settings: Mapping[str, str]
) -> class_archive.ArchiveLaunch | None:
    """What this launch does about the class archive (``class_archive.py``). A per-launch home's
    classpath is never the same twice, so it gets none. The JVM option goes in ``SPARK_SUBMIT_OPTS``,
    which Spark's launcher puts before the driver options of the settings and of
    ``spark-defaults.conf``: none of the user's is replaced, and a CDS option of theirs wins."""
    if _own_home_per_launch(master, log):
        return None
    user_options = " ".join(
        (os.environ.get(_SUBMIT_OPTIONS, ""), *(settings.get(key, "") for key in _DRIVER_OPTION_SETTINGS))
    )
    return class_archive.plan_launch(archive_dir, home or _find_spark_home(), user_options)


def _start_class_dumper(archive: class_archive.ArchiveLaunch, gateway: Any) -> None:
    """Start the dumper of the class list the JVM behind ``gateway`` records, with that JVM's own
    classpath and options (the archive must match them to be mapped)."""
    jvm = gateway.jvm
    classpath = str(java_class(jvm, "java.lang.System").getProperty("java.class.path"))
    runtime_bean = java_class(jvm, "java.lang.management.ManagementFactory").getRuntimeMXBean()
    options = [str(option) for option in runtime_bean.getInputArguments()]
    class_archive.start_dumper(archive, gateway.proc.pid, classpath, options)


def _launch_home(master: str, settings: Mapping[str, str], log: BinaryIO | None) -> str | None:
    """The SPARK_HOME to launch the driver JVM from (None: the caller's), see the module docstring.

    * ``local-cluster`` with a log (`_own_home_per_launch`): a home of this launch with its own
      ``work`` directory, named in ``log``. Its in-process standalone workers write executor logs to
      ``$SPARK_HOME/work`` (no setting moves it), which for a pip-installed PySpark is inside
      site-packages.
    * otherwise, when workers would import pyspark from the package's zip although this interpreter
      has the same pyspark installed: one home shared by every launch of this user and PySpark.
    """
    real = _find_spark_home()
    workers_import_installed = _bundled_with_interpreter(real, settings)
    if log is not None and _own_home_per_launch(master, log):
        home = tempfile.mkdtemp(prefix=_SHADOW_HOME_PREFIX)
        _link_home(real, home, keep_python=not workers_import_installed)
        os.makedirs(os.path.join(home, "work"))
        log.write(f"dbt-lancens: local-cluster workers' directories are in {home}/work\n".encode())
        log.flush()
        return home
    if workers_import_installed:
        return _shared_home(real)
    return None


def _own_home_per_launch(master: str, log: BinaryIO | None) -> bool:
    """Whether the launch gets a home of its own (`_launch_home`)."""
    return master.startswith("local-cluster") and log is not None


def _bundled_with_interpreter(real: str, settings: Mapping[str, str]) -> bool:
    """Whether Spark's home is the pyspark package this interpreter imports, and Python workers run
    this interpreter: only then is the package's ``pyspark.zip`` the very pyspark of site-packages
    (a separate Spark distribution's zip may be another version, and another worker Python may
    have no pyspark installed). POSIX only: the home is made of symbolic links."""
    if os.name != "posix" or settings.get("spark.pyspark.python", sys.executable) != sys.executable:
        return False
    package = os.path.dirname(pyspark.__file__)
    bundled_zip = os.path.join(real, "python", "lib", "pyspark.zip")
    return os.path.isfile(bundled_zip) and os.path.samefile(real, package)


def _shared_home(real: str) -> str | None:
    """This user's home of links for ``real`` and this PySpark version, made once and reused.

    Made under a temporary name and renamed into place, so concurrent launches agree on one; a
    directory of that name that is not ours (another user's, or damaged) is not used."""
    key = hashlib.sha256(f"{real}\0{pyspark.__version__}".encode()).hexdigest()[:16]
    home = os.path.join(tempfile.gettempdir(), f"{_SHARED_HOME_PREFIX}{os.getuid()}-{key}")
    if not _is_home_of(home, real):
        staged = tempfile.mkdtemp(prefix=_SHARED_HOME_PREFIX)
        _link_home(real, staged, keep_python=False)
        try:
            os.rename(staged, home)
        except OSError:  # another launch renamed its copy first, or a foreign directory is there
            shutil.rmtree(staged, ignore_errors=True)
    return home if _is_home_of(home, real) else None


def _is_home_of(home: str, real: str) -> bool:
    """Whether ``home`` is a complete home of links to ``real``: a directory (not a link to one)
    owned by this user."""
    try:
        found = os.lstat(home)
    except OSError:
        return False
    owned = stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid()
    return owned and all(
        os.path.realpath(os.path.join(home, entry)) == os.path.realpath(os.path.join(real, entry))
        for entry in _linked_entries(real, keep_python=False)
    )


def _link_home(real: str, home: str, *, keep_python: bool) -> None:
    """Fill ``home`` with links to the entries of ``real`` it shares (`_linked_entries`)."""
    for entry in _linked_entries(real, keep_python=keep_python):
        os.symlink(os.path.join(real, entry), os.path.join(home, entry))


def _linked_entries(real: str, *, keep_python: bool) -> list[str]:
    """The entries of ``real`` a home of ours links (bin, jars, ...): never its ``work``, which a
    launch owns, and its ``python`` (the workers' pyspark.zip) only when ``keep_python``."""
    return [entry for entry in os.listdir(real) if entry != "work" and (keep_python or entry != "python")]


@contextmanager
def _launch_environment(variables: Mapping[str, str], absent: Mapping[str, str]) -> Iterator[None]:
    """``variables`` set in the process environment while the JVM is launched (PySpark's launcher
    reads only ``os.environ``), then put back. One that was unset is put back as its ``absent``
    value, which means the same to Spark, and never deleted: the session starts on a background
    thread while dbt parses, and a thread iterating ``os.environ`` (dbt scans it for secrets
    whenever it builds an exception) gets a KeyError for a key deleted during its iteration."""
    previous = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in previous.items():
            os.environ[name] = absent[name] if value is None else value
