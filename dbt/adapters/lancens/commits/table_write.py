"""One write to one table, from where its data files go to the version it lands as.

`open_write` is where a write starts: it takes the runtime's `landing` (committed at once, or
staged by the atomic-publish run in progress: `runtime/landing.py`), which the write keeps to its
end. It settles the location (a new table is reserved first, `Landing.reserve`) and the version the
write builds on. `TableWrite.commit` lands the operation through the landing and then refreshes
Spark's catalog through the runtime; if anything fails before the commit lands, the data files the
write made are deleted and a declaration it made is withdrawn, so no empty table and no stray file
is left behind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import lance
import pyarrow as pa
from lance.fragment import FragmentMetadata

from dbt.adapters.lancens.namespace import TableInfo, errors
from dbt.adapters.lancens.namespace.commit import StagedCommit
from dbt.adapters.lancens.runtime.landing import Landing
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.spark.writer import discard_uncommitted


@dataclass
class TableWrite:
    """A write in progress: its table, where its files go, and the version it builds on."""

    runtime: LancensRuntime
    table_id: list[str]
    location: str
    dataset: lance.LanceDataset | None  # the version the write builds on; None: no data yet
    landing: Landing
    declared_here: bool = False
    staged_tip: StagedCommit | None = None  # a further write of a table this run staged already
    branch: str | None = None  # the Lance branch it lands on (a branch target: runtime/branch_landing.py)

    @property
    def read_version(self) -> int | None:
        return self.dataset.version if self.dataset is not None else None

    @property
    def current(self) -> lance.LanceDataset:
        """The version a change to an existing table is computed against."""
        if self.dataset is None:
            raise errors.TableNotFoundError(f"table {'.'.join(self.table_id)} has no data to change")
        return self.dataset

    @property
    def schema(self) -> pa.Schema | None:
        return self.dataset.schema if self.dataset is not None else None

    @property
    def storage_options(self) -> dict[str, str]:
        return self.runtime.namespace.storage_options

    def write_fragments(
        self, data: pa.Table | pa.RecordBatchReader, schema: pa.Schema, mode: str = "append"
    ) -> list[FragmentMetadata]:
        """Data files for Arrow `data` at the table's location, not yet part of any version.

        Appended files are made against the version the write builds on, not the location's latest
        committed one: in an atomic-publish run that is a staged version, whose schema (a column
        `on_schema_change` added) and field ids the files must carry."""
        destination = self.dataset if self.dataset is not None and mode == "append" else self.location
        return lance.fragment.write_fragments(
            data, destination, schema=schema, mode=mode, storage_options=self.storage_options or None
        )

    def commit(
        self,
        operation: lance.LanceOperation.BaseOperation,
        properties: dict[str, str],
        written: Sequence[FragmentMetadata] = (),
    ) -> int:
        """Land `operation` (made of `written`, the fragments this write created) and return the
        version; Spark's catalog then reads it (or the staged version, in an atomic-publish run)."""
        try:
            version = self.landing.land(
                self.runtime.namespace,
                self.table_id,
                operation,
                self.read_version,
                properties,
                location=self.location,
                staged_tip=self.staged_tip,
            )
        except Exception:
            self.abandon(written)  # the engine raises only before its commit point
            raise
        except BaseException:
            # interrupted: the commit may have landed, so its files stay (unreferenced: garbage)
            self.abandon()
            raise
        self.runtime.refresh_table(self.table_id, committed=self._committed(version), built_on=self.dataset)
        return version

    def _committed(self, version: int) -> tuple[str, lance.LanceDataset] | None:
        """Where the version this write committed lives, and that version, as of its commit: the
        engine remembers the dataset it committed (no request on S3), and Spark's reads still find
        the latest version themselves when they plan. None (ask the namespace) in an atomic-publish
        run, or when the version cannot be opened by its number (a managed commit whose finishing
        steps were left to the next reader)."""
        if not self.landing.visible_at_once:
            return None
        try:
            return self.location, self.runtime.namespace.dataset_at(self.location, version)
        except (OSError, ValueError):
            return None

    def refuse_if_moved_since(self, seen: int | None) -> None:
        """Fail (14) when the table's version is no longer `seen`, the one the run's query read.

        A run that reads its own table (`{{ this }}`) and then writes plans its rows on what it
        read; the write's `read_version` is only taken afterwards, so a commit that landed while
        the query ran (another run's append, a restore) would not conflict in Lance: rows were
        lost or written twice. None: not checked (a new table, an atomic-publish run)."""
        if seen is None or self.read_version == seen:
            return
        raise self._moved(seen, self.read_version)

    def refuse_if_moved(self, written: Sequence[FragmentMetadata] = ()) -> None:
        """Fail (14) when the table's version is no longer the one this write builds on, deleting
        the `written` files first.

        For rows Spark tasks wrote from the model's query, which may read the table (`{{ this }}`)
        while they run, after `refuse_if_moved_since`: Lance would let their Append land on some
        commits made meanwhile (a delete, another append), so rows would be lost or written twice.
        Not checked in an atomic-publish run (the publish checks the run's tables).

        Only the table's own versions are looked at (one request on S3; the catalog too under table
        version management): a drop or a move of the table in the catalog meanwhile is refused by
        the commit's own catalog check."""
        if not self.landing.visible_at_once or self.read_version is None:
            return
        latest = self.runtime.namespace.latest_version_at(self.location, self.table_id, self.branch)
        if latest == self.read_version:
            return
        self.abandon(written)
        raise self._moved(self.read_version, latest)

    def _moved(self, read: int | None, now: int | None) -> errors.ConcurrentModificationError:
        """The refusal (14) of a write whose table moved from `read` to `now` under its query."""
        return errors.ConcurrentModificationError(
            f"table {'.'.join(self.table_id)} changed from version {read} to {now} while "
            "the model's query read it (another writer committed); nothing was committed: run again"
        )

    def abandon(self, written: Sequence[FragmentMetadata] = ()) -> None:
        """Undo what the write left before its commit landed: the `written` files, and a
        declaration of its own that is still declared only."""
        if written:
            discard_uncommitted(self.location, self.storage_options, written)
        if not self.declared_here:
            return
        namespace = self.runtime.namespace
        try:
            if namespace.describe_table(
                self.table_id
            ).declared_only:  # unless a concurrent writer gave it data
                namespace.drop_table(self.table_id)
        except errors.NamespaceError:
            pass  # already gone


def version_read(runtime: LancensRuntime, table_id: Sequence[str]) -> int | None:
    """The table's version a query planned now reads, for `TableWrite.refuse_if_moved_since`;
    None in an atomic-publish run (the run reads its staged versions; the publish checks them)."""
    return runtime.landing.version_read(runtime.namespace, table_id)


@dataclass(frozen=True)
class TableSeen:
    """The model's table as the catalog state its query was planned in showed it: `info` when it
    has data there, else None (a new table, or one declared only)."""

    info: TableInfo | None


def table_seen(runtime: LancensRuntime, table_id: Sequence[str]) -> TableSeen | None:
    """The table in the caller's catalog state, for `open_write(seen=...)`; None when the write
    will build on a version the run staged (`open_write` takes it from the landing)."""
    if runtime.landing.staged_tip(table_id) is not None:
        return None
    try:
        info = runtime.namespace.describe_table(list(table_id))
    except (errors.TableNotFoundError, errors.NamespaceNotFoundError):  # the latter: a branch's schema
        return TableSeen(None)
    return TableSeen(None if info.declared_only or info.version is None else info)


def open_write(
    runtime: LancensRuntime,
    table_id: Sequence[str],
    *,
    must_exist: bool = False,
    seen: TableSeen | None = None,
) -> TableWrite:
    """Start a write to the table at its latest version (a later commit is pinned to it, so a
    concurrent writer's commit makes this one fail with 14 rather than be lost). `must_exist`:
    a change to an existing table, which fails (4) rather than declare a new one. `seen`:
    `table_seen` in the catalog state the model's query was planned in, which the write builds on
    without describing the table again; a table without data there is declared (the declaration
    plans on the latest catalog state, and shares another writer's made meanwhile)."""
    namespace = runtime.namespace
    landing = runtime.landing
    tip = landing.staged_tip(table_id)
    if tip is not None:
        return _further_staged_write(runtime, table_id, landing, tip)
    landing.claim(table_id)
    runtime.forget_committed(table_id)
    declared_here = False
    if seen is not None:
        info = seen.info
    else:
        try:
            info = namespace.describe_table(list(table_id))
        except (errors.TableNotFoundError, errors.NamespaceNotFoundError):
            if must_exist and landing.read_target(table_id) is None:  # else: only a branch has it
                raise
            info = None
    if info is None:
        info, declared_here = landing.reserve(namespace, table_id)
    if info is None:  # a location of its own, the table declared when the run publishes
        location = namespace.table_location(list(table_id))
    else:
        if not info.declared_only:
            info = landing.write_target(namespace, table_id, info)  # a branch target's branch
        location = info.location
    dataset = None
    if info is not None and not info.declared_only and info.version is not None:
        dataset = namespace.dataset_at(location, info.version)  # the version the describe opened
    branch = info.branch if info is not None else None
    return TableWrite(runtime, list(table_id), location, dataset, landing, declared_here, branch=branch)


def _further_staged_write(
    runtime: LancensRuntime, table_id: Sequence[str], landing: Landing, tip: StagedCommit
) -> TableWrite:
    """A write of a table this atomic-publish run already staged (a microbatch model's later batch):
    it builds on the run's staged content, where the run reads it, and writes its files there
    (the table's own location, or a new table's scratch copy); `stage_chained` stages it next."""
    target = landing.read_target(table_id)
    dataset = landing.staged_dataset(runtime.namespace, table_id)
    if target is None or dataset is None:
        raise errors.InternalError(f"atomic publish: {'.'.join(table_id)} has no staged content to read")
    return TableWrite(runtime, list(table_id), target.path, dataset, landing, staged_tip=tip)
