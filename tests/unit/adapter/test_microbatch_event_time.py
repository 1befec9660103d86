"""A microbatch batch finds the `event_time` column however its config spells it, and a typo fails
with the column named, before anything is written."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from dbt_common.exceptions import CompilationError

from dbt.adapters.lancens.materializations import incremental
from dbt.adapters.lancens.runtime.process import LancensRuntime

FIRST = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
TABLE = ["shop", "events"]


@pytest.fixture
def runtime(spark, tmp_path: Path) -> LancensRuntime:
    runtime = LancensRuntime.shared({"root": str(tmp_path / "root")}, "local[2]", {})
    runtime.namespace.create_namespace(["shop"])
    moments = [FIRST + dt.timedelta(days=day, hours=6) for day in range(3)]
    events = pa.table({"id": [0, 1, 2], "Event_TS": pa.array(moments, pa.timestamp("us", tz="UTC"))})
    runtime.namespace.create_table(TABLE, events)
    return runtime


def _apply_day(runtime: LancensRuntime, event_time: str, day: int, new_id: int) -> None:
    begin, end = FIRST + dt.timedelta(days=day), FIRST + dt.timedelta(days=day + 1)
    spec = incremental.Spec(
        strategy="microbatch",
        event_time=event_time,
        batch_start=begin.strftime("%Y-%m-%d %H:%M:%S"),
        batch_end=end.strftime("%Y-%m-%d %H:%M:%S"),
    )
    runtime.activate()
    frame = runtime.sql(
        f"SELECT CAST({new_id} AS BIGINT) AS id, TIMESTAMP'{begin:%Y-%m-%d} 12:00:00+00:00' AS Event_TS"
    )
    incremental.apply(runtime, TABLE, frame, spec, {})


def _rows(runtime: LancensRuntime) -> lance.LanceDataset:
    return lance.dataset(runtime.namespace.describe_table(TABLE).location)


def test_the_config_may_spell_the_column_in_another_case(runtime: LancensRuntime) -> None:
    _apply_day(runtime, "event_ts", 1, 11)
    assert sorted(_rows(runtime).to_table(columns=["id"])["id"].to_pylist()) == [0, 2, 11]


def test_an_unknown_event_time_column_is_named_and_nothing_is_written(runtime: LancensRuntime) -> None:
    before = _rows(runtime).version
    with pytest.raises(CompilationError, match="event_time column 'event_time_typo' is not a column"):
        _apply_day(runtime, "event_time_typo", 1, 11)
    assert _rows(runtime).version == before
    assert sorted(_rows(runtime).to_table(columns=["id"])["id"].to_pylist()) == [0, 1, 2]
