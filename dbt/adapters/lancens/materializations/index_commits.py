"""Where a build's index changes land: the version `indexes.apply_indexes` plans on, and its commits.

The runtime's landing (`runtime/landing.py`) decides both. Without atomic publish the indexes are
planned on the table's latest version and each operation becomes its next version; an index
missing rows is optimised by Lance (`optimize_indices` commits by itself, through the engine:
`open_for_commits`). In an atomic-publish run they are planned on the run's staged version of the
table, where the run reads it, and each operation is staged on top of it, so the indexes become
visible in the run's one publish commit together with the rows they index, or not at all; Lance's
`optimize_indices` has no uncommitted form, so an index missing rows is rebuilt there instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import lance
from lance.dataset import Index

from dbt.adapters.lancens.metadata.engine_dataset import latest, open_for_commits
from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.runtime.landing import DIRECT, IndexTarget, Landing


class IndexCommits:
    """The version indexes are planned on, and how their changes land after it."""

    def __init__(
        self,
        namespace: DirectoryNamespace,
        landing: Landing,
        target: IndexTarget,
        table_id: Sequence[str],
        properties: dict[str, str],
    ):
        self._namespace = namespace
        self._landing = landing
        self._target = target
        self._table = list(table_id)
        self._properties = properties
        self._version = target.version

    @property
    def dataset(self) -> lance.LanceDataset:
        return self._target.dataset

    @property
    def optimizes(self) -> bool:
        """Whether an index missing rows can be optimised (else it is rebuilt)."""
        return self._target.optimizes

    def adopt(self, index: Index) -> tuple[Index, list[str]]:
        """An index built on `dataset`, made ready to commit to the table; and its files there."""
        return self._landing.adopt_index(self._namespace, self._target, index)

    def commit(self, operation: lance.LanceOperation.BaseOperation, files: Sequence[str] = ()) -> int:
        """Land `operation` after the last one; returns the table version it makes (or will make)."""
        self._version = self._landing.land_index(
            self._namespace, self._target, self._table, operation, self._version, self._properties, files
        )
        return self._version

    def optimize(self, names: list[str]) -> int:
        """Add the rows indexes `names` miss (only when `optimizes`); returns the new version."""
        if not self.optimizes:
            raise NotImplementedError("staged index changes rebuild instead of optimising")
        open_for_commits(self._namespace, self._table, self._properties).optimize.optimize_indices(
            index_names=names
        )
        self._version = latest(self._namespace, self._table).version
        return self._version


def index_commits(
    namespace: DirectoryNamespace,
    table_id: Sequence[str],
    properties: dict[str, str],
    landing: Landing = DIRECT,
) -> IndexCommits | None:
    """Where the table's index changes land; None when there is no table (nothing was built)."""
    target = landing.index_target(namespace, table_id)
    if target is None:
        return None
    return IndexCommits(namespace, landing, target, table_id, properties)
