"""Which fragments of a table can hold rows of a time window, without reading them all.

A microbatch batch replaces the target's rows in its `event_time` window, so it must find them:
one Lance scan of the whole table took 0.08 s at 1,000 fragments, and a backfill's batch k scanned
the k fragments the batches before it wrote (quadratic over the backfill). The smallest and
largest value of the column over a fragment's rows bound what any window can match there, so only
fragments whose range meets the window are scanned.

A range is kept for one column (its Lance field id: a renamed column keeps its files, not its
meaning) and one exact state of a fragment: its data files, its deletion file and no overlays.
Lance writes every data file once under a new name, a deletion file only removes rows and a
restored version names its older deletion file, so a range stays true for that state; any other
state is a new key. Ranges come from the rows a batch writes (a superset of the rows its fragments
keep) and, for fragments this process has not seen, from the caller's `RangeReader`: the adapter's
has Spark tasks read each fragment's column and send back one (min, max) pair per fragment
(spark/fragment_ranges.py), so no value of a row reaches the driver.

What is kept stays small in a process that lives long: per column, the states of the fragments of
the version last looked at, plus the last `WRITTEN_KEPT` states written and not yet seen in a
version (a concurrent batch's, or a failed commit's). A state that is forgotten costs only one read
of that fragment's column if it is needed again.

Only timestamps without a time zone or in UTC are bounded, compared as integers of the column's
own unit with a window given in whole seconds of UTC wall-clock time, which is how Lance
compares such a column with `TIMESTAMP '<start>'`; any other type is scanned whole, as before.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import lance
import pyarrow as pa
import pyarrow.compute as pc
from lance.fragment import FragmentMetadata

from dbt.adapters.lancens.text.quoting import quote

_UNITS_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_UTC_NAMES = (None, "UTC", "Etc/UTC", "+00:00")
_EPOCH = dt.datetime(1970, 1, 1)
_BOUND_FORMAT = "%Y-%m-%d %H:%M:%S"  # how the microbatch macro passes a batch's bounds

WRITTEN_KEPT = 64  # written fragment states kept per column until a version shows them

# table location, Lance field id: a renamed column keeps its files, not its values' meaning
_Column = tuple[str, int]
_State = tuple[tuple[str, ...], str | None]  # a fragment's data files and deletion file
_Range = tuple[int, int] | None  # None: the column holds no value there
RangeReader = Callable[[lance.LanceDataset, str, list[int]], dict[int, _Range]]
"""(dataset, column, fragment ids) -> each fragment's range of the column over its live rows, as
integers of the column's unit (a fragment left out: no value there)."""


@dataclass(frozen=True)
class TimeWindow:
    """Rows whose `column` (as the table spells it) is in [start, end), both naive datetimes in UTC
    and whole seconds."""

    column: str
    start: dt.datetime
    end: dt.datetime

    def lance_filter(self) -> str:
        """The window as a Lance SQL filter: the comparison the ranges here are proven against."""
        start, end = (moment.strftime(_BOUND_FORMAT) for moment in (self.start, self.end))
        return f"{quote(self.column)} >= TIMESTAMP '{start}' AND {quote(self.column)} < TIMESTAMP '{end}'"


@dataclass
class FragmentBounds:
    """The column ranges of the fragment states this process has seen lately (the live ones of each
    table column it looked at, and those written since); one per runtime."""

    _columns: dict[_Column, _ColumnRanges] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def candidates(
        self, location: str, dataset: lance.LanceDataset, window: TimeWindow, read: RangeReader
    ) -> list[lance.LanceFragment] | None:
        """The fragments of `dataset` that may hold rows in `window`; None: every fragment (the
        column's type is not one whose ranges are kept). `read` gives the ranges of the fragments
        whose state is not known here."""
        column = _bounded_column(dataset, window.column)
        if column is None:
            return None
        name, field_id, unit = column
        low, high = _ticks(window.start, unit), _ticks(window.end, unit)
        fragments = dataset.get_fragments()
        states = {f.fragment_id: _state(f.metadata) for f in fragments}
        with self._lock:
            ranges = self._column(location, field_id).lookup(states)
        unknown = [f.fragment_id for f in fragments if f.fragment_id not in ranges]
        if unknown:
            read_ranges = read(dataset, name, unknown)
            ranges.update({fragment_id: read_ranges.get(fragment_id) for fragment_id in unknown})
        with self._lock:
            self._column(location, field_id).keep_live(states, ranges)
        return [
            f for f in fragments if f.fragment_id not in ranges or _meets(ranges[f.fragment_id], low, high)
        ]

    def learn_written(
        self,
        location: str,
        dataset: lance.LanceDataset,
        fragments: Sequence[FragmentMetadata],
        rows: pa.Table,
        column_name: str,
    ) -> None:
        """Keep the range of `rows` for the new `fragments` they were written to with `dataset`'s
        schema."""
        column = _bounded_column(dataset, column_name)
        if column is None:
            return
        name, field_id, _ = column
        found = pc.min_max(rows.column(name).cast(pa.int64()))
        value_range = None if found["min"].as_py() is None else (found["min"].as_py(), found["max"].as_py())
        with self._lock:
            kept = self._column(location, field_id)
            for fragment in fragments:
                state = _state(fragment)
                if state is not None:
                    kept.learn_written(state, value_range)

    def _column(self, location: str, field_id: int) -> _ColumnRanges:
        """The ranges kept for one column of one table (the caller holds the lock)."""
        return self._columns.setdefault((location, field_id), _ColumnRanges())


@dataclass
class _ColumnRanges:
    """The ranges of one column of one table, by fragment state."""

    live: dict[_State, _Range] = field(default_factory=dict)  # the last version looked at
    written: OrderedDict[_State, _Range] = field(default_factory=OrderedDict)  # newest last

    def lookup(self, states: dict[int, _State | None]) -> dict[int, _Range]:
        """The known ranges of the fragments with these `states` (fragment id -> state)."""
        found: dict[int, _Range] = {}
        for fragment_id, state in states.items():
            if state is None:
                continue
            if state in self.live:
                found[fragment_id] = self.live[state]
            elif state in self.written:
                found[fragment_id] = self.written[state]
        return found

    def keep_live(self, states: dict[int, _State | None], ranges: dict[int, _Range]) -> None:
        """Keep the ranges of one version's fragments and forget the states it no longer has."""
        self.live = {
            state: ranges[fragment_id]
            for fragment_id, state in states.items()
            if state is not None and fragment_id in ranges
        }
        for state in self.live:
            self.written.pop(state, None)

    def learn_written(self, state: _State, value_range: _Range) -> None:
        self.written[state] = value_range
        self.written.move_to_end(state)
        while len(self.written) > WRITTEN_KEPT:
            self.written.popitem(last=False)


def parse_window_bound(text: str) -> dt.datetime:
    """A batch bound as the macro passes it (`YYYY-MM-DD HH:MM:SS`, UTC)."""
    return dt.datetime.strptime(text, _BOUND_FORMAT)


def _bounded_column(dataset: lance.LanceDataset, name: str) -> tuple[str, int, int] | None:
    """The name, Lance field id and units per second of `dataset`'s column `name` when its ranges
    can be kept, else None."""
    index = dataset.schema.get_field_index(name)  # -1: no such column (or two)
    if index < 0:
        return None
    column = dataset.schema.field(index)
    if not pa.types.is_timestamp(column.type) or column.type.tz not in _UTC_NAMES:
        return None
    lance_field = dataset.lance_schema.field(column.name)
    if lance_field is None:
        return None
    return column.name, lance_field.id(), _UNITS_PER_SECOND[column.type.unit]


def _state(fragment: FragmentMetadata) -> _State | None:
    """The fragment state a range belongs to; None for fragments with overlays (never kept)."""
    if fragment.overlays:
        return None
    deletion = fragment.deletion_file
    deletion_key = None if deletion is None else f"{deletion.read_version}-{deletion.id}-{deletion.file_type}"
    return (tuple(sorted(f.path for f in fragment.files)), deletion_key)


def _ticks(moment: dt.datetime, units_per_second: int) -> int:
    """`moment` (naive, UTC, whole seconds) in the column's units since the epoch, exactly."""
    delta = moment - _EPOCH
    if delta.microseconds:
        raise ValueError(f"a window bound must be a whole second, got {moment.isoformat()}")
    return (delta.days * 86_400 + delta.seconds) * units_per_second


def _meets(value_range: _Range, low: int, high: int) -> bool:
    """A fragment whose values lie in `value_range` can hold a value in [low, high)."""
    return value_range is not None and value_range[1] >= low and value_range[0] < high
