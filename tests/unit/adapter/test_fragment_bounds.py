"""A microbatch delete scans only fragments whose range of the event-time column meets the window,
and never skips one that Lance's own filter finds a row in."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import lance
import lance.fragment
import pyarrow as pa
import pytest
from pyspark.sql import DataFrame

from dbt.adapters.lancens.commits.table_write import open_write
from dbt.adapters.lancens.materializations import merge
from dbt.adapters.lancens.runtime import fragment_bounds
from dbt.adapters.lancens.runtime.fragment_bounds import FragmentBounds, TimeWindow
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.spark.fragment_ranges import Range, fragment_range

DAY = dt.timedelta(days=1)
FIRST = dt.datetime(2022, 1, 1)
TYPES = [
    pa.timestamp("us", tz="UTC"),
    pa.timestamp("us"),
    pa.timestamp("ns", tz="UTC"),
    pa.timestamp("s"),
    pa.timestamp("ms", tz="UTC"),
    pa.timestamp("us", tz="+00:00"),
    pa.timestamp("us", tz="Etc/UTC"),
]


def _moments(day: int) -> list[dt.datetime | None]:
    """Rows of one fragment: both edges of day `day` to the second (and the next day's first
    instant), plus a null."""
    start = FIRST + day * DAY
    return [start, start + DAY - dt.timedelta(seconds=1), start + DAY, None]


def _table(tmp_path: Path, arrow_type: pa.DataType, days: list[int]) -> lance.LanceDataset:
    uri = str(tmp_path / f"events-{str(arrow_type).replace(' ', '')}.lance")
    for index, day in enumerate(days):
        moments = _moments(day)
        if arrow_type.tz is not None:
            moments = [m.replace(tzinfo=dt.UTC) if m else None for m in moments]
        rows = pa.table({"event_ts": pa.array(moments, arrow_type), "n": [day] * len(moments)})
        lance.write_dataset(rows, uri, mode="append" if index else "create")
    return lance.dataset(uri)


def _read(dataset: lance.LanceDataset, column: str, fragment_ids: list[int]) -> dict[int, Range]:
    """The ranges as the Spark tasks compute them (`fragment_range`), here in the test's process."""
    return {
        fragment_id: fragment_range(dataset.get_fragment(fragment_id), column) for fragment_id in fragment_ids
    }


def _found_by_lance(dataset: lance.LanceDataset, where: str) -> set[int]:
    matched = dataset.to_table(columns=[], filter=where, with_row_address=True)
    return {address >> 32 for address in matched.column("_rowaddr").to_pylist()}


@pytest.mark.parametrize("arrow_type", TYPES, ids=str)
def test_candidates_hold_every_fragment_lance_matches_and_skip_the_rest(
    tmp_path: Path, arrow_type: pa.DataType
) -> None:
    dataset = _table(tmp_path, arrow_type, [0, 2, 5, 9])
    bounds = FragmentBounds()
    pruned = 0
    for first_day in range(-1, 12):
        for length in (1, 2):
            window = TimeWindow("event_ts", FIRST + first_day * DAY, FIRST + (first_day + length) * DAY)
            candidates = bounds.candidates(dataset.uri, dataset, window, _read)
            assert candidates is not None
            scanned = {fragment.fragment_id for fragment in candidates}
            found = _found_by_lance(dataset, window.lance_filter())
            assert found <= scanned, (window, found, scanned)
            pruned += len(dataset.get_fragments()) - len(scanned)
            # a fragment spans its day and the next day's first instant: exactly those meet the window
            days = {0: 0, 1: 2, 2: 5, 3: 9}
            expected = {fid for fid, day in days.items() if day + 1 >= first_day and day < first_day + length}
            assert scanned == expected, (window, scanned, expected)
    assert pruned > 0


def test_a_window_between_second_edges(tmp_path: Path) -> None:
    """Windows that start on a row's exact instant and end one second after it."""
    dataset = _table(tmp_path, pa.timestamp("us", tz="UTC"), [0, 3])
    bounds = FragmentBounds()
    for moment in [m for day in (0, 3) for m in _moments(day) if m is not None]:
        for window in (
            TimeWindow("event_ts", moment, moment + dt.timedelta(seconds=1)),
            TimeWindow("event_ts", moment - dt.timedelta(seconds=1), moment),
        ):
            candidates = bounds.candidates(dataset.uri, dataset, window, _read)
            assert candidates is not None
            assert _found_by_lance(dataset, window.lance_filter()) <= {f.fragment_id for f in candidates}


@pytest.mark.parametrize(
    "arrow_type", [pa.date32(), pa.string(), pa.timestamp("us", tz="Europe/Paris"), pa.int64()], ids=str
)
def test_other_column_types_are_scanned_whole(tmp_path: Path, arrow_type: pa.DataType) -> None:
    uri = str(tmp_path / "other.lance")
    values = {
        "date32[day]": [dt.date(2022, 1, 1)],
        "string": ["2022-01-01 00:00:00"],
        "int64": [1],
    }.get(str(arrow_type), [dt.datetime(2022, 1, 1, tzinfo=dt.UTC)])
    dataset = lance.write_dataset(pa.table({"event_ts": pa.array(values, arrow_type)}), uri)
    window = TimeWindow("event_ts", FIRST, FIRST + DAY)
    assert FragmentBounds().candidates(uri, dataset, window, _read) is None


def test_a_range_is_never_used_for_another_state_of_its_fragment(tmp_path: Path) -> None:
    """After a delete the fragment's range shrinks; restoring the version before the delete brings
    the deleted rows back, and the window over them must scan the fragment again."""
    dataset = _table(tmp_path, pa.timestamp("us", tz="UTC"), [0])
    uri, before = dataset.uri, dataset.version
    bounds = FragmentBounds()
    late = TimeWindow("event_ts", FIRST + DAY, FIRST + 2 * DAY)  # holds only the fragment's last row
    assert bounds.candidates(uri, dataset, late, _read)
    dataset.delete(late.lance_filter())
    dataset = lance.dataset(uri)
    assert bounds.candidates(uri, dataset, late, _read) == []  # the live rows no longer reach the window
    lance.dataset(uri, version=before).restore()
    dataset = lance.dataset(uri)
    assert dataset.count_rows(late.lance_filter()) == 1
    assert [f.fragment_id for f in bounds.candidates(uri, dataset, late, _read) or []] == [0]


def _kept_states(bounds: FragmentBounds) -> set:
    (column,) = bounds._columns.values()
    return set(column.live) | set(column.written)


def _states(dataset: lance.LanceDataset) -> set:
    return {fragment_bounds._state(fragment.metadata) for fragment in dataset.get_fragments()}


def test_the_kept_ranges_follow_the_live_fragments(tmp_path: Path) -> None:
    """A process that lives long keeps the states of the fragments it last saw, not every state:
    a fragment's state before a delete and fragments compacted away are forgotten."""
    dataset = _table(tmp_path, pa.timestamp("us", tz="UTC"), [0, 2, 5, 9])
    uri = dataset.uri
    bounds = FragmentBounds()
    window = TimeWindow("event_ts", FIRST + 2 * DAY, FIRST + 3 * DAY)
    for change in ("none", "delete", "compact"):
        if change == "delete":
            dataset.delete(window.lance_filter())
        elif change == "compact":
            dataset.optimize.compact_files(target_rows_per_fragment=1_000)
        dataset = lance.dataset(uri)
        candidates = bounds.candidates(uri, dataset, window, _read)
        assert candidates is not None
        assert _found_by_lance(dataset, window.lance_filter()) <= {f.fragment_id for f in candidates}
        assert _kept_states(bounds) == _states(dataset), change
    assert len(dataset.get_fragments()) == 1


def test_written_states_not_seen_in_a_version_are_kept_up_to_a_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ranges learnt from written fragments wait for a version that has them (a failed commit's
    never comes): only the newest `WRITTEN_KEPT` wait, and a committed one is then used."""
    monkeypatch.setattr(fragment_bounds, "WRITTEN_KEPT", 2)
    dataset = _table(tmp_path, pa.timestamp("us", tz="UTC"), [0])
    uri = dataset.uri
    bounds = FragmentBounds()
    written = []
    for day in (10, 11, 12):
        rows = pa.table({"event_ts": pa.array([FIRST + day * DAY], pa.timestamp("us", tz="UTC")), "n": [day]})
        fragments = lance.fragment.write_fragments(rows, uri, schema=dataset.schema)
        bounds.learn_written(uri, dataset, fragments, rows, "event_ts")
        written.append((fragments, rows))
    newest = {fragment_bounds._state(fragment) for fragments, _ in written[1:] for fragment in fragments}
    assert _kept_states(bounds) == newest
    fragments, _ = written[2]  # commit the newest: its range is known, only fragment 0 is read
    append = lance.LanceOperation.Append(fragments)
    dataset = lance.LanceDataset.commit(uri, append, read_version=dataset.version)
    read: list[int] = []

    def recording_read(data: lance.LanceDataset, column: str, unknown: list[int]) -> dict:
        read.extend(unknown)
        return _read(data, column, unknown)

    day_12 = TimeWindow("event_ts", FIRST + 12 * DAY, FIRST + 13 * DAY)
    candidates = bounds.candidates(uri, dataset, day_12, recording_read)
    assert [f.fragment_id for f in candidates or []] == [1]
    assert read == [0]
    waiting = {fragment_bounds._state(fragment) for fragment in written[1][0]}
    assert _kept_states(bounds) == _states(dataset) | waiting


def _frame(runtime: LancensRuntime, rows: pa.Table) -> DataFrame:
    """`rows` as a Spark DataFrame, as the model's frame reaches `merge.replace_frame`: in one
    partition, so each batch is written as one fragment."""
    runtime.activate()
    return runtime.spark.createDataFrame(rows).coalesce(1)


@pytest.fixture
def runtime(spark, tmp_path: Path) -> LancensRuntime:
    runtime = LancensRuntime.shared({"root": str(tmp_path / "root")}, "local[2]", {})
    runtime.namespace.create_namespace(["shop"])
    return runtime


def _batch(day: int, tag: int) -> pa.Table:
    moments = [FIRST + day * DAY + dt.timedelta(hours=h) for h in (0, 12, 23)]
    return pa.table(
        {
            "event_ts": pa.array([m.replace(tzinfo=dt.UTC) for m in moments], pa.timestamp("us", tz="UTC")),
            "tag": [tag] * 3,
        }  # fmt: skip
    )


def test_a_backfill_rerun_replaces_each_window_and_scans_only_its_fragments(runtime: LancensRuntime) -> None:
    """Batches of a backfill written through `merge.replace_frame` with their windows; re-running two of
    them replaces exactly their rows, and after the first batch's read the written fragments'
    ranges are known, so later deletes scan only the fragments of their own window."""
    table_id = ["shop", "events"]
    runtime.namespace.create_table(table_id, _batch(0, 0))

    def run_batch(day: int, tag: int) -> None:
        window = TimeWindow("event_ts", FIRST + day * DAY, FIRST + (day + 1) * DAY)
        rows = _batch(day, tag)
        merge.replace_frame(
            open_write(runtime, table_id, must_exist=True),
            _frame(runtime, rows),
            {},
            where=window.lance_filter(),
            window=window,
        )

    for day in range(1, 8):
        run_batch(day, 0)
    location = runtime.namespace.describe_table(table_id).location
    dataset = lance.dataset(location)
    window = TimeWindow("event_ts", FIRST + 3 * DAY, FIRST + 4 * DAY)
    candidates = runtime.fragment_bounds.candidates(location, dataset, window, _read)
    assert candidates is not None and len(candidates) == 1 < len(dataset.get_fragments()) == 8

    run_batch(3, 1)
    run_batch(7, 1)
    rows = lance.dataset(location).to_table().sort_by("event_ts")
    days = [(moment.date() - FIRST.date()).days for moment in rows.column("event_ts").to_pylist()]
    assert days == [day for day in range(8) for _ in range(3)]
    tags = dict(zip(days, rows.column("tag").to_pylist(), strict=True))
    assert tags == {day: 1 if day in (3, 7) else 0 for day in range(8)}


def test_a_renamed_column_is_not_judged_by_the_old_column_s_ranges(tmp_path: Path) -> None:
    """Renaming keeps a fragment's files; the ranges belong to the column, not to its name."""
    uri = str(tmp_path / "renamed.lance")
    moments = {"event_ts": [FIRST], "other": [FIRST + 400 * DAY]}
    rows = pa.table({name: pa.array(values, pa.timestamp("us")) for name, values in moments.items()})
    dataset = lance.write_dataset(rows, uri)
    bounds = FragmentBounds()
    later = TimeWindow("event_ts", FIRST + 400 * DAY, FIRST + 401 * DAY)
    assert bounds.candidates(uri, dataset, later, _read) == []
    dataset.alter_columns({"path": "event_ts", "name": "old"})
    dataset = lance.dataset(uri)
    dataset.alter_columns({"path": "other", "name": "event_ts"})
    dataset = lance.dataset(uri)
    assert dataset.count_rows(later.lance_filter()) == 1
    assert [f.fragment_id for f in bounds.candidates(uri, dataset, later, _read) or []] == [0]


@pytest.mark.parametrize(
    "arrow_type", [pa.date32(), pa.timestamp("us", tz="Europe/Paris"), pa.timestamp("us", tz="UTC")], ids=str
)
def test_a_rerun_batch_replaces_its_rows_whatever_the_column_type(
    runtime: LancensRuntime, arrow_type: pa.DataType
) -> None:
    """Types whose ranges are not kept are scanned whole: re-running a batch still deletes its
    window's rows before appending (no duplicates)."""
    table_id = ["shop", "typed"]

    def day_rows(day: int, tag: int) -> pa.Table:
        moment = FIRST + day * DAY + dt.timedelta(hours=12)
        value = moment.date() if pa.types.is_date(arrow_type) else moment.replace(tzinfo=dt.UTC)
        return pa.table({"event_ts": pa.array([value], arrow_type), "tag": [tag]})

    runtime.namespace.create_table(table_id, day_rows(0, 0))
    for attempt, day in enumerate((1, 2, 1, 1, 2)):
        window = TimeWindow("event_ts", FIRST + day * DAY, FIRST + (day + 1) * DAY)
        merge.replace_frame(
            open_write(runtime, table_id, must_exist=True),
            _frame(runtime, day_rows(day, attempt)),
            {},
            where=window.lance_filter(),
            window=window,
        )
    table = lance.dataset(runtime.namespace.describe_table(table_id).location).to_table().sort_by("event_ts")
    assert table.column("tag").to_pylist() == [0, 3, 4]
