"""The sample project on S3 (moto's real HTTP server on 127.0.0.1), and secrets kept out of everything.

One `dbt build` exercises every materialization of the sample project (seeds, views, SQL and Python
tables, tests) with `root: s3://...`; a failing model in the same run shows an error path. Then
`dbt debug` on that root and on a missing bucket. The secret key is a distinctive value, and no
output, artifact or log may contain it.
"""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow.csv as pacsv
import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lancens.metadata.debug import probe_root
from tests.reliability.helpers import SAMPLE, check_namespace, make_project

pytestmark = pytest.mark.s3

SECRET = "lancensSecretValue-9f3c1e77"
ACCESS_KEY = "lancensAccessKey-41d2"


def _options(s3_server) -> dict[str, str]:
    return {**s3_server.storage_options, "access_key_id": ACCESS_KEY, "secret_access_key": SECRET}


def _leaks(directory: Path, outputs: list[str]) -> list[str]:
    """Every place the secret (or access key id) shows up: process output or any file dbt wrote."""
    found = [f"output #{i}" for i, text in enumerate(outputs) if SECRET in text or ACCESS_KEY in text]
    for folder in ("target", "logs"):
        for path in (directory / folder).rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                if SECRET.encode() in data or ACCESS_KEY.encode() in data:
                    found.append(str(path.relative_to(directory)))
    return found


def _csv_rows(name: str) -> int:
    options = pacsv.ParseOptions(newlines_in_values=True)
    return pacsv.read_csv(SAMPLE / "seeds" / name, parse_options=options).num_rows


def test_sample_project_on_s3_and_no_secret_anywhere(s3_server, tmp_path: Path) -> None:
    options = _options(s3_server)
    project = make_project(tmp_path / "proj", s3_server.uri("sample"), options)
    project.write("models/broken.sql", "select * from {{ source('nowhere', 'missing') }}")
    project.write(
        "models/sources.yml",
        "version: 2\nsources:\n  - name: nowhere\n    schema: nowhere\n    tables: [{name: missing}]\n",
    )

    build = project.run("build")
    assert build.results["broken"]["status"] == "error", build.output[-3000:]
    assert "missing" in build.results["broken"]["message"].lower()
    failed = {
        name: r
        for name, r in build.results.items()
        if name != "broken" and r["status"] not in ("success", "pass")
    }
    assert not failed, (failed, build.output[-4000:])

    counts = check_namespace(project.namespace())
    customers, orders = _csv_rows("raw_customers.csv"), _csv_rows("raw_orders.csv")
    assert counts[("analytics", "raw", "raw_customers")] == customers
    assert counts[("analytics", "raw", "raw_orders")] == orders
    assert counts[("analytics", "marts", "orders")] == orders
    assert counts[("analytics", "marts", "customers")] == customers
    assert counts[("analytics", "marts", "customer_segments")] == customers
    # the documents model's indexes are built on S3 too, and serve a full-text search there
    namespace = project.namespace()
    documents = lance.dataset(
        namespace.describe_table(["analytics", "marts", "documents"]).location,
        storage_options=namespace.storage_options or None,
    )
    assert {index.name for index in documents.describe_indices()} == {
        "embedding_ivf_flat",
        "body_fts",
        "topic_bitmap",
    }
    assert sorted(documents.to_table(full_text_query="refund", columns=["id"])["id"].to_pylist()) == [5, 6, 7]
    assert ("analytics", "nowhere", "missing") not in counts and ("analytics", "broken") not in counts
    assert project.namespace().list_views(["analytics", "staging"]).items

    debug = project.run("debug")
    assert debug.returncode == 0, debug.output[-3000:]
    assert "reachable and writable" in debug.output
    assert "secret_access_key': '****'" in debug.output

    leaks = _leaks(project.path, [build.output, debug.output])
    assert not leaks, leaks
    assert (project.path / "logs" / "dbt.log").exists()
    assert (project.path / "target" / "manifest.json").exists()


def test_debug_probe_names_an_unreachable_bucket_without_the_secret(s3_server) -> None:
    """What `dbt debug` runs after its query (debug.probe_root), against a bucket that does not exist."""
    with pytest.raises(DbtRuntimeError) as failure:
        probe_root("s3://no-such-bucket-lancens/x", _options(s3_server))
    message = str(failure.value)
    assert "no-such-bucket-lancens" in message and "not writable" in message
    assert SECRET not in message and ACCESS_KEY not in message


def test_run_on_a_missing_bucket_fails_naming_it(s3_server, tmp_path: Path) -> None:
    """A listing in a missing bucket is empty (the connection's read check passes), so the first
    write, the schema's namespace, meets the missing bucket: a dbt error, not a crash."""
    root = "s3://no-such-bucket-lancens/x"
    project = make_project(tmp_path / "proj", root, _options(s3_server), sample=False)
    project.write("models/one.sql", "select 1 as id")
    run = project.run("run")
    # dbt ends a run whose schemas cannot be created as for any database error before the first
    # node (exit 2, as dbt-postgres with a refused connection); the message is one line, no traceback
    assert run.returncode == 2, run.output[-3000:]
    assert "Database Error" in run.output and "Traceback" not in run.output
    assert "bucket of the namespace root 's3://no-such-bucket-lancens/x' does not exist" in run.output
    assert not _leaks(project.path, [run.output])
