"""A microbatch batch finds the event-time ranges of fragments its process never saw through Spark
tasks: the driver reads no value of the event-time column (issue #48), receives one (min, max)
pair per fragment, and the batch still replaces exactly its window's rows.

The driver is this test's process (Spark's Python workers are processes of their own), so every
Lance scan made here is recorded: one that reads the event-time column (or every column) is a
driver read of the rows' values.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lance
import lance.fragment
import pyarrow as pa
import pytest

from dbt.adapters.lancens.commits.table_write import open_write
from dbt.adapters.lancens.materializations import merge
from dbt.adapters.lancens.runtime.fragment_bounds import FragmentBounds, TimeWindow
from dbt.adapters.lancens.runtime.process import LancensRuntime

DAY = dt.timedelta(days=1)
FIRST = dt.datetime(2024, 1, 1)
EVENT = "event_ts"
TABLE = ["shop", "events"]


def _day(day: int, tag: int) -> pa.Table:
    moments = [FIRST + day * DAY + dt.timedelta(hours=h) for h in (0, 7, 23)]
    return pa.table(
        {
            EVENT: pa.array([m.replace(tzinfo=dt.UTC) for m in moments], pa.timestamp("us", tz="UTC")),
            "tag": [tag] * len(moments),
        }
    )


def _window(day: int) -> TimeWindow:
    return TimeWindow(EVENT, FIRST + day * DAY, FIRST + (day + 1) * DAY)


@pytest.fixture
def runtime(spark: Any, tmp_path: Path) -> LancensRuntime:
    runtime = LancensRuntime.shared({"root": str(tmp_path / "root")}, "local[2]", {})
    runtime.namespace.create_namespace(["shop"])
    return runtime


@pytest.fixture
def driver_scans(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The columns of every Lance scan this process makes (None: every column)."""
    scans: list[Any] = []
    for owner in (lance.LanceDataset, lance.fragment.LanceFragment):
        original = owner.scanner

        def recording(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            scans.append(kwargs.get("columns", args[0] if args else None))
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(owner, "scanner", recording)
    yield scans


def _batch(runtime: LancensRuntime, day: int, tag: int) -> None:
    frame = runtime.spark.createDataFrame(_day(day, tag)).coalesce(1)
    window = _window(day)
    merge.replace_frame(
        open_write(runtime, TABLE, must_exist=True), frame, {}, where=window.lance_filter(), window=window
    )


def test_unknown_ranges_come_from_spark_tasks_not_the_driver(
    runtime: LancensRuntime, driver_scans: list[Any]
) -> None:
    runtime.activate()
    runtime.namespace.create_table(TABLE, _day(0, 0))
    for day in range(1, 6):
        _batch(runtime, day, 0)
    location = runtime.namespace.describe_table(TABLE).location
    assert len(lance.dataset(location).get_fragments()) == 6
    runtime.fragment_bounds = FragmentBounds()  # a new process: no fragment's range is known
    driver_scans.clear()

    _batch(runtime, 3, 1)  # re-run day 3: every fragment's range is unknown

    event_reads = [columns for columns in driver_scans if columns is None or EVENT in columns]
    assert event_reads == [], f"the driver read the event-time column: {event_reads}"
    rows = lance.dataset(location).to_table().sort_by(EVENT)
    days = [(moment.date() - FIRST.date()).days for moment in rows.column(EVENT).to_pylist()]
    assert days == [day for day in range(6) for _ in range(3)]
    tags = dict(zip(days, rows.column("tag").to_pylist(), strict=True))
    assert tags == {day: 1 if day == 3 else 0 for day in range(6)}

    # the tasks' ranges were kept: the next window asks no reader, and only its fragment meets it
    def no_read(*_: Any) -> dict:
        raise AssertionError("every fragment's range is known after the batch")

    dataset = lance.dataset(location)
    candidates = runtime.fragment_bounds.candidates(location, dataset, _window(4), no_read)
    assert candidates is not None
    assert [fragment.fragment_id for fragment in candidates] == [4]
