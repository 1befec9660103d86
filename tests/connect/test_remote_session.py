"""The Spark Connect session of the `lance` data source layer, against real local servers.

Each client runs in a child process: a process that opens a Connect session is a Connect client
for good (see conftest.py)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.connect.server import ConnectServer

CLIENT = """
import json, sys
from dbt.adapters.lancens.spark.remote import RemoteSessionError, check_workers, connect_session, is_remote

spark = connect_session(sys.argv[1])
try:
    workers = check_workers(spark)
except RemoteSessionError as exc:
    print(exc, file=sys.stderr)
    sys.exit(3)
path = sys.argv[2]
spark.range(5).selectExpr("id", "id * 2 as twice").write.format("lance").mode("overwrite").save(path)
rows = spark.read.format("lance").load(path).where("id > 2").orderBy("id").collect()
print(json.dumps({"remote": is_remote(spark), "python": workers.python, "rows": [list(r) for r in rows]}))
"""


def run_client(server: ConnectServer, path: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CLIENT, server.url, path], capture_output=True, text=True, timeout=600
    )


def test_a_connect_session_writes_and_reads_lance_on_the_server(
    connect_server: ConnectServer, tmp_path
) -> None:
    done = run_client(connect_server, str(tmp_path / "t.lance"))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["remote"] is True
    assert report["python"] == sys.executable  # the server's workers run the test interpreter
    assert report["rows"] == [[3, 6], [4, 8]]
    import lance

    assert lance.dataset(str(tmp_path / "t.lance")).to_table().num_rows == 5  # written by the server


def test_a_server_without_the_package_is_named_at_connection(
    bare_connect_server: ConnectServer, tmp_path
) -> None:
    done = run_client(bare_connect_server, str(tmp_path / "t.lance"))
    assert done.returncode == 3, done.stderr[-3000:]
    message = done.stderr.strip().splitlines()[-1]
    assert "Python workers cannot import dbt-lancens (ModuleNotFoundError: No module named 'dbt" in message
    assert "install dbt-lancens" in message and "PYSPARK_PYTHON" in message
    assert bare_connect_server.token not in done.stderr
    assert not (tmp_path / "t.lance").exists()
