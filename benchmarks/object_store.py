"""Object-store requests per dbt step on S3, next to what pylance alone needs for the same commit.

    python benchmarks/object_store.py              # every step, a few minutes
    python benchmarks/object_store.py --detail     # plus where each step's requests went
    python benchmarks/object_store.py --curve 0,300,1000,2000   # the start of a run as the root grows
    python benchmarks/object_store.py --spark-connector python  # the same on the Python read path

On S3 a request costs tens of milliseconds, so the number of requests a step makes, not its CPU
time, is what a user waits for. The counts are exact and repeatable (unlike timings on this shared
machine): moto's S3 server runs in this process on 127.0.0.1 behind a WSGI middleware that logs
every request, and each step is one ``dbt`` process (its JVM and Python workers included) whose
requests are counted from its start to its exit.

Steps, on a project whose seed has 100 rows:

- ``table model, next version``: a ``table`` model built a second time (a new version of an
  existing table); floor: ``lance.write_dataset(mode="overwrite")`` of the same rows;
- ``incremental append``: an ``append`` incremental model run a second time; floor: one
  ``mode="append"`` write;
- ``8 new tables``: one ``dbt run`` of 8 table models that do not exist yet; floor: 8 ``mode="create"``
  writes;
- ``dbt debug`` and ``dbt docs generate`` with 12 tables in the namespace (no floor);
- then the root grown through the engine by ``--grow`` one-row tables in 10 other namespaces, and
  ``dbt debug`` twice and the table model's next version again: the first ``dbt debug`` is this
  machine's first read of the grown catalog (the catalog cache, in the project's folder here,
  holds none of it), the later steps read only what changed since.

Printed: per step the requests, the floor, the difference, and the seconds the requests alone
would take at ``--latency`` (30 ms) each.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import yaml
from harness import dbt_executable, machine, run_measured
from moto.moto_server.threaded_moto_server import MotoRequestHandler, ThreadedMotoServer
from moto.server import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import make_server

BUCKET = "lancens-requests"
SEED_ROWS = 100
NEW_TABLES = 8
GROW_NAMESPACES = 10
LATENCY = 0.030


@dataclass
class RequestLog:
    """Every request the server received since the last ``reset``: (method, key, query)."""

    requests: list[tuple[str, str, dict[str, list[str]]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()

    def count(self) -> int:
        with self.lock:
            return len(self.requests)

    def middleware(self, app: Callable[..., Any]) -> Callable[..., Any]:
        """``app`` with every request logged before moto answers it."""

        def logged(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
            key = environ.get("PATH_INFO", "").lstrip("/").partition("/")[2]
            query = parse_qs(environ.get("QUERY_STRING", ""))
            with self.lock:
                self.requests.append((environ.get("REQUEST_METHOD", "?"), key, query))
            return app(environ, start_response)

        return logged

    def breakdown(self) -> list[tuple[str, int]]:
        """Counts by kind of request: method (LIST for a bucket listing) and the area of the key."""
        with self.lock:
            kinds = Counter(_kind(method, key, query) for method, key, query in self.requests)
        return kinds.most_common()


def _kind(method: str, key: str, query: dict[str, list[str]]) -> str:
    if method == "GET" and not key:
        method, key = "LIST", query.get("prefix", [""])[0]
    parts = [part for part in key.split("/") if part]
    area = "?"
    for i, part in enumerate(parts):
        if part == "__manifest" or part.endswith(".lance") or "$" in part or part.startswith("_"):
            area = ("__manifest/" if part == "__manifest" else "<table>/") + "/".join(parts[i + 1 : i + 2])
            break
    else:
        area = "root: " + "/".join(parts[1:]) if len(parts) > 1 else "root"
    if parts and parts[-1] == "latest_version_hint.json":
        area += "/latest_version_hint.json"
    return f"{method} {area}"


class LoggedMotoServer(ThreadedMotoServer):
    """moto's threaded S3 server with every request recorded in ``log``."""

    def __init__(self, port: int, log: RequestLog) -> None:
        super().__init__(ip_address="127.0.0.1", port=port, verbose=False)
        self.log = log

    def _server_entry(self) -> None:
        app = self.log.middleware(DomainDispatcherApplication(create_backend_app))
        self._server = make_server(
            self._ip_address, self._port, app, True, request_handler=MotoRequestHandler
        )
        self._server_ready_event.set()
        self._server.serve_forever()


@contextmanager
def s3_server() -> Iterator[tuple[RequestLog, dict[str, str]]]:
    """A logging moto server on a free 127.0.0.1 port with one bucket; yields the log and the
    storage options (Lance's names) that reach it."""
    import logging
    import socket

    import boto3

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # the log is counted, not printed

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = RequestLog()
    server = LoggedMotoServer(port, log)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    options = {
        "endpoint": endpoint,
        "region": "us-east-1",
        "access_key_id": "testing",
        "secret_access_key": "testing",
        "allow_http": "true",
    }
    boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    ).create_bucket(Bucket=BUCKET)
    try:
        yield log, options
    finally:
        server.stop()


# ----------------------------------------------------------------------------- the dbt project
_TABLE = "{{ config(materialized='table') }}\nselect * from {{ ref('raw_rows') }}\n"
_APPEND = (
    "{{ config(materialized='incremental', incremental_strategy='append') }}\n"
    "select * from {{ ref('raw_rows') }}\n"
)


@dataclass
class Project:
    """The measured dbt project: a 100-row seed, a table model, an append model, 8 new tables."""

    path: Path
    root: str
    options: dict[str, str]

    @classmethod
    def write(
        cls, path: Path, root: str, options: dict[str, str], spark_connector: str | None = None
    ) -> Project:
        (path / "seeds").mkdir(parents=True)
        (path / "models").mkdir()
        rows = "\n".join(f"{i},name {i},{i * 1.5}" for i in range(SEED_ROWS))
        (path / "seeds" / "raw_rows.csv").write_text(f"id,name,amount\n{rows}\n")
        (path / "models" / "table_model.sql").write_text(_TABLE)
        (path / "models" / "other_model.sql").write_text(_TABLE)
        (path / "models" / "append_model.sql").write_text(_APPEND)
        for i in range(NEW_TABLES):
            (path / "models" / f"new_{i}.sql").write_text(_TABLE)
        project = {"name": "requests", "version": "1.0.0", "config-version": 2, "profile": "requests"}
        (path / "dbt_project.yml").write_text(yaml.safe_dump(project))
        output = {"type": "lancens", "root": root, "schema": "bench", "threads": 1, "master": "local[1]"}
        output["storage_options"] = options
        if spark_connector is not None:
            output["spark_connector"] = spark_connector
        profile = {"requests": {"target": "t", "outputs": {"t": output}}}
        (path / "profiles.yml").write_text(yaml.safe_dump(profile))
        return cls(path, root, options)

    def dbt(self, *args: str) -> None:
        command = [dbt_executable(), *args, "--profiles-dir", str(self.path), "--project-dir", str(self.path)]
        # The catalog cache (on for S3 roots) starts empty in the project, not the user's cache.
        environment = {
            "DBT_LANCENS_CLASS_ARCHIVE": "off",
            "AWS_EC2_METADATA_DISABLED": "true",
            "DBT_LANCENS_CACHE_DIR": str(self.path / "cache"),
        }
        run_measured(command, self.path, environment)


# ----------------------------------------------------------------------------- pylance's floor
def _floor(options: dict[str, str], uri: str, modes: list[str], log: RequestLog) -> int:
    """Requests of pylance's own writes of the seed's rows (``create`` first when it is not one of
    the measured modes), counting only the measured ones."""
    import lance
    import pyarrow as pa

    table = pa.table(
        {
            "id": list(range(SEED_ROWS)),
            "name": [f"name {i}" for i in range(SEED_ROWS)],
            "amount": [i * 1.5 for i in range(SEED_ROWS)],
        }
    )
    if modes[0] != "create":
        lance.write_dataset(table, uri, mode="create", storage_options=options)
    log.reset()
    for i, mode in enumerate(modes):
        target = f"{uri}_{i}" if mode == "create" else uri
        lance.write_dataset(table, target, mode=mode, storage_options=options)
    return log.count()


@dataclass
class Step:
    name: str
    requests: int
    floor: int | None
    breakdown: list[tuple[str, int]]


def grow(project: Project, tables: int, start: int = 0) -> None:
    """Add one-row tables `start` to `tables` - 1 to the root through the engine (in this process,
    not the measured ones), spread over other namespaces (created with the first)."""
    import pyarrow as pa

    from dbt.adapters.lancens.namespace import DirectoryNamespace

    namespace = DirectoryNamespace(project.root, storage_options=project.options)
    if start == 0:
        for n in range(GROW_NAMESPACES):
            namespace.create_namespace([f"grown_{n}"])
    for i in range(start, tables):
        namespace.create_table([f"grown_{i % GROW_NAMESPACES}", f"t_{i}"], pa.table({"id": [i]}))


def curve(project: Project, log: RequestLog, sizes: list[int]) -> None:
    """The start of a run as the root grows: at each size (tables added by `grow`; printed: the
    table rows of `__manifest`), `dbt debug` twice (this machine's first read of the grown
    catalog, then the next run's) and the table model's next version, each one process; with the
    files of `__manifest` a full read fetches."""
    import lance

    from dbt.adapters.lancens.namespace import maintenance

    project.dbt("seed")
    project.dbt("run", "-s", "table_model")
    header = f"{'added':>7}{'tables':>8}{'debug, first':>14}{'debug, next':>13}{'table model':>13}"
    print(f"\n{header}  __manifest files")
    grown = 0
    for size in sizes:
        if size > grown:
            grow(project, size, grown)
            grown = size
        counts = []
        for args in (("debug",), ("debug",), ("run", "-s", "table_model")):
            log.reset()
            project.dbt(*args)
            counts.append(log.count())
        manifest = lance.dataset(f"{project.root}/__manifest", storage_options=project.options)
        files = maintenance.files(manifest)
        tables = manifest.count_rows(filter="object_type = 'table'")
        print(f"{size:>7}{tables:>8}{counts[0]:>14}{counts[1]:>13}{counts[2]:>13}  {files}", flush=True)


def measure(project: Project, log: RequestLog, grown: int) -> list[Step]:
    """Build the warehouse up to each step, then count the step alone."""
    steps: list[Step] = []

    def step(name: str, floor: Callable[[], int] | None, *args: str) -> None:
        log.reset()
        project.dbt(*args)
        requests, breakdown = log.count(), log.breakdown()
        steps.append(Step(name, requests, floor() if floor else None, breakdown))
        print(f"  {name}: {requests} requests", flush=True)

    root, options = project.root, project.options
    project.dbt("seed")
    project.dbt("run", "-s", "table_model", "append_model", "other_model")
    step("table model, next version", lambda: _floor(options, f"{root}_floor/t", ["overwrite"], log),
         "run", "-s", "table_model")  # fmt: skip
    step("incremental append", lambda: _floor(options, f"{root}_floor/a", ["append"], log),
         "run", "-s", "append_model")  # fmt: skip
    step(f"{NEW_TABLES} new tables", lambda: _floor(options, f"{root}_floor/n", ["create"] * NEW_TABLES, log),
         "run", "-s", "new_*")  # fmt: skip
    step("dbt debug, 12 tables", None, "debug")
    step("docs generate, 12 tables", None, "docs", "generate")
    if grown:
        grow(project, grown)
        # The engine grew the catalog in another process: the first read here fetches it whole.
        step(f"dbt debug, {grown + 12} tables, first", None, "debug")
        step(f"dbt debug, {grown + 12} tables", None, "debug")
        step(f"table model, {grown + 12} tables", None, "run", "-s", "table_model")
    return steps


def report(steps: list[Step], latency: float, detail: bool) -> None:
    at = f"at {latency * 1000:.0f} ms"
    print(f"\n{'step':<28}{'requests':>9}{'pylance':>9}{'beyond':>8}{at:>10}")
    for s in steps:
        floor = "-" if s.floor is None else str(s.floor)
        beyond = "-" if s.floor is None else str(s.requests - s.floor)
        print(f"{s.name:<28}{s.requests:>9}{floor:>9}{beyond:>8}{s.requests * latency:>9.1f}s")
    if detail:
        for s in steps:
            print(f"\n{s.name}:")
            for kind, count in s.breakdown:
                print(f"  {count:>5}  {kind}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latency", type=float, default=LATENCY, help="seconds per request (projection)")
    parser.add_argument("--detail", action="store_true", help="where each step's requests went")
    parser.add_argument("--grow", type=int, default=300, help="tables added before the last steps")
    parser.add_argument(
        "--curve",
        type=lambda text: [int(size) for size in text.split(",")],
        help="instead of the steps: the start of a run at these numbers of added tables (0,300,1000,2000)",
    )
    parser.add_argument(
        "--spark-connector",
        choices=("auto", "jvm", "python"),
        help="the profile's read path (default: the profile's default, auto)",
    )
    args = parser.parse_args()
    print(machine(), flush=True)
    with tempfile.TemporaryDirectory(prefix="lancens-object-store-") as work, s3_server() as (log, options):
        project = Project.write(
            Path(work) / "project", f"s3://{BUCKET}/warehouse", options, args.spark_connector
        )
        if args.curve:
            curve(project, log, args.curve)
        else:
            report(measure(project, log, args.grow), args.latency, args.detail)


if __name__ == "__main__":
    sys.exit(main())
