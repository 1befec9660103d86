"""Fixtures shared by every test package.

Everything that listens binds to loopback: Spark's driver and executors (SPARK_LOCAL_IP) and the
moto S3 server. One SparkSession per test process, created on first use.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from moto.server import ThreadedMotoServer

# dbt-tests-adapter's fixtures (project, profiles, unique schema) for tests/functional; pytest only
# accepts plugins from the top-level conftest.
pytest_plugins = ["dbt.tests.fixtures.project"]

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
# Spark's Python workers are separate processes: let them import test helpers (`tests.unit.spark.hooks`).
_PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_PROJECT_ROOT, os.environ.get("PYTHONPATH")) if p)
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
# A dbt process that finds no driver class archive records its classes and leaves a dump (~40 s of
# CPU) to run once its JVM exits (spark/class_archive.py): the dbt processes the tests start must
# never leave dumps running beside the suite. So it is off, unless scripts/test.sh made the archive
# before the suite and turned it on (every launch then maps it). The archive's own tests pass their
# own directory.
os.environ.setdefault("DBT_LANCENS_CLASS_ARCHIVE", "off")
# The catalog cache (on by default for S3 roots) of this test process and the dbt processes it
# starts: never the user's, and empty at the start, so request counts do not depend on earlier runs.
if "DBT_LANCENS_CACHE_DIR" not in os.environ:
    os.environ["DBT_LANCENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="lancens-test-cache-")
    atexit.register(shutil.rmtree, os.environ["DBT_LANCENS_CACHE_DIR"], True)
# moto and botocore must never look for real credentials or instance metadata.
os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")


def _connector_on_every_jvm() -> None:
    """Put the JVM connector's jars on the class path of every JVM this test process starts.

    A test process has one SparkSession, made by whichever test comes first: `spark` below, or a
    dbt run in this process, whose profile may add no class path (`spark_connector: python`).
    Spark's launcher appends `SPARK_DIST_CLASSPATH` to each JVM's class path (after Spark's own jars),
    so the connector's tests hold whichever test made the session. Without a built connector nothing
    is added, and tests/unit/spark/test_jvm_connector.py fails saying so."""
    from dbt.adapters.lancens.spark import jvm_connector

    try:
        entries = jvm_connector.class_path()
    except jvm_connector.ConnectorUnavailable:
        return
    own = os.environ.get("SPARK_DIST_CLASSPATH")
    os.environ["SPARK_DIST_CLASSPATH"] = os.pathsep.join([*([own] if own else []), *entries])


_connector_on_every_jvm()


# The order in which scripts/test.sh's two xdist workers get the suite's scopes (`--dist loadscope
# --no-loadscope-reorder`): the folders whose tests each start dbt processes, servers or kills first,
# the many short in-process tests last. xdist's own reorder (scopes with the most tests first) sent
# the one-test modules of tests/reliability (2-3 minutes each) last, and a worker asks for its next
# scope while it still has two tests to run, so one worker could be left running three of them
# while the other had finished: longest first, the last scopes are unit modules of seconds.
_FOLDER_ORDER = ("tests/connect/", "tests/reliability/", "tests/functional/", "tests/interop/")


# Folders whose modules all start the same per-worker servers: one scope, so one worker runs them
# all. Every module of tests/connect uses the worker's Spark Connect servers (`connect_server`,
# `bare_connect_server`: a Spark JVM each, kept up until the worker ends); as scopes of their own
# they went to both workers, which then started four servers where two serve.
_SHARED_SCOPES = ("tests/connect/",)


def _scope(nodeid: str) -> str:
    """The scope `--dist loadscope` keeps on one worker: a folder of `_SHARED_SCOPES`, else the
    class, else the module."""
    shared = next((prefix for prefix in _SHARED_SCOPES if nodeid.startswith(prefix)), None)
    return shared if shared is not None else nodeid.rsplit("::", 1)[0]


def _scope_rank(scope: str, items: list[pytest.Item]) -> tuple[int, int, int]:
    folder = next(
        (i for i, prefix in enumerate(_FOLDER_ORDER) if scope.startswith(prefix)), len(_FOLDER_ORDER)
    )
    slow = any(item.get_closest_marker("slow") for item in items)
    return folder, 0 if slow else 1, -len(items)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order the scopes by `_FOLDER_ORDER`, then the scopes marked `slow` (tests/unit's that start
    processes for a minute or more: ranked by their number of tests, they were the last scopes of
    the suite, one worker running them while the other had finished), then (as xdist did) the
    scopes with the most tests first; a scope's tests stay together and in their order. Every
    worker sorts the same items the same way, so their collections still agree."""
    scopes: dict[str, list[pytest.Item]] = {}
    for item in items:
        scopes.setdefault(_scope(item.nodeid), []).append(item)
    ordered = sorted(scopes.items(), key=lambda entry: _scope_rank(*entry))
    items[:] = [item for _, scoped in ordered for item in scoped]


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """`--dist loadscope` with this file's scopes (`_scope`) instead of xdist's module or class
    (optional: a plain `pytest -p no:xdist` has no such hook)."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedScopeScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _scope(nodeid)

    return SharedScopeScheduling(config, log)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass(frozen=True)
class S3Endpoint:
    """A running moto S3 server and the options that reach it from fsspec and from Lance."""

    endpoint: str
    bucket: str
    storage_options: dict[str, str]

    def uri(self, prefix: str) -> str:
        return f"s3://{self.bucket}/{prefix.strip('/')}"


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Endpoint]:
    """moto's real HTTP S3 server on 127.0.0.1, with one bucket."""
    from moto.server import ThreadedMotoServer

    port = free_port()
    yield from serve_s3(
        ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False), port, "lancens-test"
    )


def serve_s3(server: ThreadedMotoServer, port: int, bucket: str) -> Iterator[S3Endpoint]:
    """Start `server` (moto's threaded S3 server, or one with a layer of a test's own in front of
    it, listening on 127.0.0.1:`port`), make `bucket`, yield the endpoint, stop the server."""
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    options = {
        "endpoint": endpoint,
        "region": "us-east-1",
        "access_key_id": "testing",
        "secret_access_key": "testing",
        "allow_http": "true",
    }
    import boto3

    boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    ).create_bucket(Bucket=bucket)
    try:
        yield S3Endpoint(endpoint=endpoint, bucket=bucket, storage_options=options)
    finally:
        server.stop()


@pytest.fixture(scope="session")
def spark():
    """The one SparkSession of this test process (embedded default: local master, in-memory catalog),
    with the JVM connector's jars on its class path, so either reader can be tested in it (without
    them, tests/unit/spark/test_jvm_connector.py fails saying why)."""
    from dbt.adapters.lancens.spark import get_or_create_session, jvm_connector

    try:
        config = jvm_connector.spark_settings()
    except jvm_connector.ConnectorUnavailable:
        config = {}
    return get_or_create_session(master="local[2]", config=config)


@pytest.fixture(autouse=True)
def _forget_standalone_dbt_adapters(request: pytest.FixtureRequest) -> Iterator[None]:
    """Unregister the adapter a test's own `run_dbt --project-dir …` left behind.

    dbt keeps one adapter per type for the process and `register_adapter` keeps an existing one, so
    a later class's `project` fixture would silently get the previous test's adapter, profile and
    namespace root. Tests on the `project` fixture are cleaned up by that fixture instead.
    """
    yield
    # dbt-tests-adapter's `project` and `adapter` fixtures are class-scoped and unregister their own.
    if not {"project", "adapter"} & set(request.fixturenames):
        from dbt.adapters.factory import reset_adapters

        reset_adapters()
