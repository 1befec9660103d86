"""Concurrent microbatch batches of one table, as dbt runs them on its threads, in one process.

Each batch deletes its day's rows (deletion vectors) and appends the new ones. When the table's
rows share a fragment, two such changes computed on the same version conflict in Lance (14), so
this process's writers of one table take turns (`LancensRuntime.writing`): every batch lands.
"""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.materializations import incremental
from dbt.adapters.lancens.runtime.process import LancensRuntime

DAYS = 6
FIRST = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


@pytest.fixture
def runtime(spark, tmp_path: Path) -> LancensRuntime:
    runtime = LancensRuntime.shared({"root": str(tmp_path / "root")}, "local[2]", {})
    runtime.namespace.create_namespace(["shop"])
    # ten rows a day, all in one fragment: every batch changes that fragment
    moments = [FIRST + dt.timedelta(days=i % DAYS, hours=i // DAYS) for i in range(DAYS * 10)]
    events = pa.table(
        {"id": list(range(DAYS * 10)), "event_ts": pa.array(moments, pa.timestamp("us", tz="UTC"))}
    )
    runtime.namespace.create_table(["shop", "events"], events)
    return runtime


def _batch(
    runtime: LancensRuntime, day: int, start: threading.Barrier, failures: list[BaseException]
) -> None:
    """dbt's batch `day`: the model's rows of that day replace the table's rows of that day."""
    begin, end = FIRST + dt.timedelta(days=day), FIRST + dt.timedelta(days=day + 1)
    spec = incremental.Spec(
        strategy="microbatch",
        event_time="event_ts",
        batch_start=begin.strftime("%Y-%m-%d %H:%M:%S"),
        batch_end=end.strftime("%Y-%m-%d %H:%M:%S"),
    )
    try:
        runtime.activate()
        frame = runtime.sql(
            f"SELECT CAST({1000 + day} AS BIGINT) AS id, "
            f"TIMESTAMP'{begin.strftime('%Y-%m-%d')} 12:00:00+00:00' AS event_ts"
        )
        start.wait()
        incremental.apply(runtime, ["shop", "events"], frame, spec, {})
    except BaseException as exc:  # reported by the test, whatever it is
        failures.append(exc)


def test_concurrent_batches_of_one_table_all_land(runtime: LancensRuntime) -> None:
    before = lance.dataset(runtime.namespace.describe_table(["shop", "events"]).location).version
    start = threading.Barrier(DAYS)
    failures: list[BaseException] = []
    threads = [threading.Thread(target=_batch, args=(runtime, day, start, failures)) for day in range(DAYS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    table = lance.dataset(runtime.namespace.describe_table(["shop", "events"]).location)
    assert table.version == before + DAYS  # one version per batch
    assert sorted(table.to_table(columns=["id"])["id"].to_pylist()) == [1000 + day for day in range(DAYS)]
