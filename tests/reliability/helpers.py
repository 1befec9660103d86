"""Real dbt processes against a real namespace root, and the checks every fault test ends with.

Each `dbt` call is a separate OS process (its own JVM), so a SIGKILL really kills a writer and two
processes really race on one root. After a fault, `check_namespace` proves what the README table
promises: the namespace lists, every table opens at a committed version, no object id is
registered twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lance
import yaml

from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.reliability.dbt_many import MARKER

REPO = Path(__file__).parents[2]
SAMPLE = REPO / "sample_project"
DBT = str(Path(sys.executable).parent / "dbt")
PROFILE = "jaffle_lance"
# Every table the sample project's `dbt build` makes, as namespace object ids.
SAMPLE_TABLES = frozenset(
    {
        "analytics.raw.raw_customers",
        "analytics.raw.raw_orders",
        "analytics.raw.raw_payments",
        "analytics.staging.stg_orders",
        "analytics.marts.orders",
        "analytics.marts.customers",
        "analytics.marts.customer_segments",
        "analytics.marts.fct_orders_daily",
        "analytics.marts.documents",
        "analytics.snapshots.customers_snapshot",
    }
)


# The driver JVMs of the dbt processes the tests start live seconds to a few minutes: the C2
# compiler's threads cost them more CPU than its code gives back (`dbt run` of one model: about a
# quarter less CPU for the machine and 20-40 % less wall with C1 alone, the class archive still
# mapped; the sample project's `dbt build` 52, 60 s against 70, 65 s). Tests only, and only their
# child processes: a user's JVM, the test process's own and the Spark Connect servers keep the
# default. SPARK_SUBMIT_OPTS is where the session adds its class archive option too.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1"


def dbt_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment for a dbt child: loopback only, this interpreter for Spark's Python workers, a
    driver JVM with `TEST_JVM_OPTIONS`."""
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "AWS_EC2_METADATA_DISABLED": "true",
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "PYTHONUNBUFFERED": "1",
        "SPARK_SUBMIT_OPTS": f"{os.environ.get('SPARK_SUBMIT_OPTS', '')} {TEST_JVM_OPTIONS}".strip(),
    }
    env.update(extra or {})
    return env


@dataclass
class Project:
    """A dbt project directory with its own profiles.yml pointing at `root`."""

    path: Path
    root: str
    storage_options: dict[str, str]

    def write(self, relative: str, text: str) -> None:
        target = self.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    def remove(self, relative: str) -> None:
        (self.path / relative).unlink()

    def command(self, *args: str) -> list[str]:
        return [DBT, *args, "--profiles-dir", str(self.path), "--project-dir", str(self.path)]

    def run(self, *args: str, timeout: float = 420, env: Mapping[str, str] | None = None) -> Run:
        """Run dbt to completion and collect its output and run_results.json."""
        done = subprocess.run(
            self.command(*args),
            cwd=self.path,
            env=dbt_env(env),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return Run(done.returncode, done.stdout + done.stderr, self.results())

    def start(
        self, *args: str, env: Mapping[str, str] | None = None, log: str = "dbt.out"
    ) -> subprocess.Popen:
        """Start dbt in its own process group (so a kill reaches the JVM too), output to `log`."""
        out = open(self.path / log, "w")  # noqa: SIM115 - owned by the child for its lifetime
        return subprocess.Popen(
            self.command(*args),
            cwd=self.path,
            env=dbt_env(env),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def results(self) -> dict[str, dict]:
        """run_results.json by node name: {status, message}; {} when dbt wrote none."""
        path = self.path / "target" / "run_results.json"
        if not path.exists():
            return {}
        data = json.loads(path.read_text())
        return {
            r["unique_id"].split(".")[-1]: {"status": r["status"], "message": r.get("message") or ""}
            for r in data["results"]
        }

    def namespace(self) -> DirectoryNamespace:
        return DirectoryNamespace.from_properties(namespace_properties(self.root, self.storage_options))


def run_many(plan: Sequence[Sequence[str]], cwd: Path, timeout: float = 1200) -> list[dict[str, Any]]:
    """Run each ``[project dir, *dbt args]`` of ``plan`` in ONE dbt process (``dbt_many.py``: one JVM
    for all), in order; their outcomes: success, exception text, node results, logged text."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).parent / "dbt_many.py"), json.dumps([list(p) for p in plan])],
        env=dbt_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARKER)]
    assert lines, done.stdout[-3000:] + done.stderr[-3000:]
    outcomes: list[dict[str, Any]] = json.loads(lines[-1][len(MARKER) :])
    return outcomes


class DbtSession:
    """ONE dbt process (``dbt_many.py --serve``: one JVM, or one Spark Connect client) that runs the
    invocations a test sends it, one at a time, so the test can look at the root between two of
    them without a process start per invocation. Only where a cold process is not the point and no
    other writer moves what the session has already used between two of its invocations: the
    session's Spark catalog keeps what earlier invocations registered. Use as a context manager;
    the process ends when the block does."""

    def __init__(self, cwd: Path, timeout: float = 1200) -> None:
        self.timeout = timeout
        self._stderr_path = cwd / "dbt_session.err"
        self._stderr = open(self._stderr_path, "w")  # noqa: SIM115 - closed in close()
        self._process = subprocess.Popen(
            [sys.executable, str(Path(__file__).parent / "dbt_many.py"), "--serve"],
            cwd=cwd,
            env=dbt_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            start_new_session=True,
        )
        # dbt prints its console log to stdout too: a thread drains it, passing on the outcome lines
        self._outcomes: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            if line.startswith(MARKER):
                self._outcomes.put(line[len(MARKER) :])
        self._outcomes.put(None)  # the process exited

    def invoke(self, project: Path, *args: str) -> dict[str, Any]:
        """One dbt invocation of `project` in the session's process: its outcome (as ``run_many``)."""
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps([str(project), *args]) + "\n")
        self._process.stdin.flush()
        try:
            line = self._outcomes.get(timeout=self.timeout)
        except queue.Empty:
            raise AssertionError(f"dbt {args} gave no outcome in {self.timeout} s") from None
        if line is None:
            stderr = self._stderr_path.read_text()[-3000:]
            raise AssertionError(
                f"the dbt session exited ({self._process.poll()}) during dbt {args}: {stderr}"
            )
        outcome: dict[str, Any] = json.loads(line)[0]
        return outcome

    def succeed(self, plan: Sequence[Sequence[str]]) -> list[dict[str, Any]]:
        """Each ``[project dir, *dbt args]`` of ``plan`` in turn, asserted to succeed; their outcomes."""
        outcomes = []
        for project, *args in plan:
            outcome = self.invoke(Path(project), *args)
            assert outcome["success"], (args, outcome["exception"], outcome["log"][-4000:])
            outcomes.append(outcome)
        return outcomes

    def close(self) -> None:
        """Close stdin (the process's loop ends); SIGKILL its group if it has not exited by then."""
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            kill_group(self._process)
        self._stderr.close()

    def __enter__(self) -> DbtSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class Run:
    returncode: int
    output: str
    results: dict[str, dict]


def namespace_properties(root: str, storage_options: Mapping[str, str]) -> dict[str, str]:
    return {"root": root, **{f"storage.{k}": v for k, v in storage_options.items()}}


def make_project(
    directory: Path,
    root: str,
    storage_options: Mapping[str, str] | None = None,
    *,
    sample: bool = True,
    master: str | None = "local[2]",
    threads: int = 2,
    schema: str = "analytics",
    extra: Mapping[str, object] | None = None,
) -> Project:
    """A copy of the sample project (or an empty one) whose profile targets `root`.

    `master=None` leaves Spark to the profile's `extra` keys (a Spark Connect `remote`)."""
    directory.mkdir(parents=True, exist_ok=True)
    if sample:
        for name in ("models", "seeds", "tests", "snapshots", "macros", "analyses"):
            if (SAMPLE / name).exists():
                shutil.copytree(SAMPLE / name, directory / name)
        shutil.copy(SAMPLE / "dbt_project.yml", directory / "dbt_project.yml")
    else:
        (directory / "dbt_project.yml").write_text(
            yaml.safe_dump(
                {
                    "name": PROFILE,
                    "version": "1.0.0",
                    "config-version": 2,
                    "profile": PROFILE,
                    "models": {PROFILE: {"+materialized": "table"}},
                }
            )
        )
    output: dict[str, object] = {
        "type": "lancens",
        "root": root,
        "schema": schema,
        "threads": threads,
    }
    if master is not None:
        output["master"] = master
    if storage_options:
        output["storage_options"] = dict(storage_options)
    output.update(extra or {})
    profile = {PROFILE: {"target": "t", "outputs": {"t": output}}}
    (directory / "profiles.yml").write_text(yaml.safe_dump(profile))
    return Project(directory, root, dict(storage_options or {}))


def manifest_object_ids(ns: DirectoryNamespace) -> list[str]:
    """Every object_id row of `__manifest` at its latest version (duplicates included)."""
    location = ns.root.rstrip("/") + "/__manifest"
    dataset = lance.dataset(location, storage_options=ns.storage_options or None)
    return dataset.to_table(columns=["object_id"]).column("object_id").to_pylist()


def check_namespace(ns: DirectoryNamespace) -> dict[tuple[str, ...], int]:
    """The README's after-fault guarantees; returns {table id: row count} of every table.

    Lists every namespace recursively, opens every table at the version the namespace reports and
    reads it, and checks that no object id has two `__manifest` rows."""
    ids = manifest_object_ids(ns)
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates, f"duplicate __manifest rows: {duplicates}"
    counts: dict[tuple[str, ...], int] = {}
    pending: list[list[str]] = [[]]
    while pending:
        namespace_id = pending.pop()
        pending.extend([*namespace_id, child] for child in ns.list_namespaces(namespace_id).items)
        for name in ns.list_tables(namespace_id).items:
            table_id = [*namespace_id, name]
            info = ns.describe_table(table_id)
            if info.declared_only:
                continue
            dataset = lance.dataset(
                info.location, version=info.version, storage_options=ns.storage_options or None
            )
            counts[tuple(table_id)] = dataset.to_table().num_rows
        for view in ns.list_views(namespace_id).items:
            assert ns.describe_view([*namespace_id, view]).sql
    return counts


def tree(root: str) -> dict[str, str]:
    """Every file under `root` with its content hash: 'changes nothing' means this is equal."""
    files: dict[str, str] = {}
    if os.path.isfile(root):
        return {root: hashlib.sha256(Path(root).read_bytes()).hexdigest()}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            files[os.path.relpath(path, root)] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return files


def wait_for(predicate, what: str, timeout: float = 240, process: subprocess.Popen | None = None) -> None:
    """Poll until `predicate()` holds; fail naming `what` if `process` exits first or time runs out."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if process is not None and process.poll() is not None:
            raise AssertionError(f"dbt exited ({process.returncode}) before {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL dbt and everything it started (JVM, Python workers): no handler, no cleanup runs."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=60)
