"""Where a build's index changes land: as the table's next versions, or staged with the run's rows.

`indexes.apply_indexes` plans on the dataset one of these gives it and lands its operations there:

* `DirectIndexCommits` (no atomic publish): the table's latest version. Each operation becomes the
  table's next version through `runtime.landing.land`; an index missing rows is optimised by
  Lance (`optimize_indices` commits by itself, through the engine: `open_for_commits`).
* `StagedIndexCommits` (an atomic-publish run): the run's staged version of the table, read where
  the run reads it (`RunPublisher.read_target`). Each operation is staged on top of it
  (`RunPublisher.stage_next`), so the indexes become visible in the run's one publish commit,
  together with the rows they index, or not at all. Lance's `optimize_indices` has no uncommitted
  form, so an index missing rows is rebuilt on all of them instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol

import lance
from lance.dataset import Index

from dbt.adapters.lancens.metadata.engine_dataset import latest, open_for_commits
from dbt.adapters.lancens.namespace import DirectoryNamespace, errors
from dbt.adapters.lancens.namespace.layout import INDICES_DIR
from dbt.adapters.lancens.runtime.landing import land
from dbt.adapters.lancens.runtime.staging import RunPublisher


class IndexCommits(Protocol):
    """The version indexes are planned on, and how their changes land after it."""

    @property
    def dataset(self) -> lance.LanceDataset: ...

    @property
    def optimizes(self) -> bool:
        """Whether an index missing rows can be optimised (else it is rebuilt)."""
        ...

    def adopt(self, index: Index) -> tuple[Index, list[str]]:
        """An index built on `dataset`, made ready to commit to the table; and its files there."""
        ...

    def commit(self, operation: lance.LanceOperation.BaseOperation, files: Sequence[str] = ()) -> int:
        """Land `operation` after the last one; returns the table version it makes (or will make)."""
        ...

    def optimize(self, names: list[str]) -> int:
        """Add the rows indexes `names` miss (only when `optimizes`); returns the new version."""
        ...


class DirectIndexCommits:
    """Index changes as the table's next versions, each visible when committed."""

    optimizes = True

    def __init__(self, namespace: DirectoryNamespace, table_id: Sequence[str], properties: dict[str, str]):
        self._namespace = namespace
        self._table = list(table_id)
        self._properties = properties
        # Read only here (plans, uncommitted index builds): the engine's dataset of the described
        # version, which it serves from memory when this process opened or committed it.
        info = namespace.describe_table(self._table)
        if info.version is None:
            raise errors.TableNotFoundError(f"table {'.'.join(self._table)} has no data")
        self.dataset = namespace.dataset_at(info.location, info.version)
        self._version = self.dataset.version

    def adopt(self, index: Index) -> tuple[Index, list[str]]:
        return index, []  # built in the table's own directory, on its latest version

    def commit(self, operation: lance.LanceOperation.BaseOperation, files: Sequence[str] = ()) -> int:
        self._version = land(self._namespace, self._table, operation, self._version, self._properties)
        return self._version

    def optimize(self, names: list[str]) -> int:
        open_for_commits(self._namespace, self._table, self._properties).optimize.optimize_indices(
            index_names=names
        )
        self._version = latest(self._namespace, self._table).version
        return self._version


class StagedIndexCommits:
    """Index changes staged on top of the run's staged version of the table (atomic publish).

    A table the run has not written (nothing else stages it) gets its index changes staged on its
    latest published version instead, as the run's version of that table."""

    optimizes = False

    def __init__(
        self,
        namespace: DirectoryNamespace,
        publisher: RunPublisher,
        table_id: Sequence[str],
        properties: dict[str, str],
    ):
        self._namespace = namespace
        self._publisher = publisher
        self._table = list(table_id)
        self._properties = properties
        tip, target = publisher.staged_tip(table_id), publisher.read_target(table_id)
        staged = publisher.staged_dataset(namespace, table_id)
        if tip is None or target is None or staged is None:
            self.dataset = latest(namespace, self._table)
            self._location = namespace.describe_table(self._table).location.rstrip("/")
            self._read_path, self._version = self._location, self.dataset.version
            return
        self.dataset = staged
        self._location = tip.location.rstrip("/")
        self._read_path, self._version = target.path.rstrip("/"), tip.version

    def adopt(self, index: Index) -> tuple[Index, list[str]]:
        """A new table's staged rows are read from a scratch copy, where its index was built: copy
        the index files to the table. Either way the index names the staged version it covers
        (the copy's version numbers are not the table's)."""
        destination = f"{self._location}/{INDICES_DIR}/{index.uuid}"
        source = f"{self._read_path}/{INDICES_DIR}/{index.uuid}"
        if source != destination:
            storage = self._namespace.storage
            for relative in storage.files(source):
                storage.copy(f"{source}/{relative}", f"{destination}/{relative}")
        return dataclasses.replace(index, dataset_version=self._version), [destination]

    def commit(self, operation: lance.LanceOperation.BaseOperation, files: Sequence[str] = ()) -> int:
        if self._publisher.staged_tip(self._table) is None:
            self._version = self._publisher.stage(
                self._namespace, self._table, operation, self._version, self._properties, self._location
            )
            self._publisher.discard_unpublished(self._table, files)
        else:
            self._version = self._publisher.stage_next(
                self._namespace, self._table, operation, self._properties, files
            )
        return self._version

    def optimize(self, names: list[str]) -> int:
        raise NotImplementedError("staged index changes rebuild instead of optimising")


def index_commits(
    namespace: DirectoryNamespace,
    table_id: Sequence[str],
    properties: dict[str, str],
    staging: RunPublisher | None = None,
) -> IndexCommits | None:
    """Where the table's index changes land; None when there is no table (nothing was built)."""
    if staging is not None and staging.staged_tip(table_id) is not None:
        return StagedIndexCommits(namespace, staging, table_id, properties)
    with namespace.consistent_reads():  # "exists?" and the latest version: one catalog check
        if not namespace.table_exists(list(table_id)):
            return None
        if staging is not None:
            return StagedIndexCommits(namespace, staging, table_id, properties)
        return DirectIndexCommits(namespace, table_id, properties)
