"""Creating a Lance dataset exactly once, and removing one that this call created.

``lance.write_dataset(mode="create")`` is not exactly-once: two processes that both find no dataset
both write, and the later commit lands as an Overwrite at version 2, replacing the winner's data
(seen on ``__manifest``, where it lost other writers' rows, and on ``<name>.lance`` table
directories). Here the fragments are written first and version 1 is committed with Lance's retries
off, so the put-if-not-exists of the version-1 manifest decides: one creator wins, the others get
``DatasetExistsError`` and remove the data files they wrote.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TypeAlias

import lance
import pyarrow as pa
from lance.lance import _Session as LanceSession

from dbt.adapters.lancens.namespace import layout
from dbt.adapters.lancens.namespace.storage import Storage

_MEMORY_CREATE_LOCK = threading.Lock()
_DATASET_DIRS = (
    layout.DATA_DIR,
    layout.VERSIONS_DIR,
    layout.TRANSACTIONS_DIR,
    layout.DELETIONS_DIR,
    layout.INDICES_DIR,
    layout.REFS_DIR,
)

TableData: TypeAlias = pa.Table | pa.RecordBatchReader


class DatasetExistsError(Exception):
    """Another writer created the dataset first (or it existed already)."""


def create(
    storage: Storage,
    location: str,
    data: TableData,
    storage_options: Mapping[str, str] | None,
    session: LanceSession,
) -> lance.LanceDataset:
    """Version 1 of a new dataset at ``location``; DatasetExistsError when there is one already."""
    options = dict(storage_options) if storage_options else None
    if location.startswith("memory://"):
        return _create_in_memory(location, data, options, session)
    try:
        transaction = lance.fragment.write_fragments(
            data, location, mode="create", return_transaction=True, storage_options=options, session=session
        )
    except (OSError, ValueError) as exc:
        if layout.has_versions(storage, location):  # it existed before this call started
            raise DatasetExistsError(location) from exc
        raise
    assert isinstance(transaction, lance.Transaction)
    try:
        return lance.LanceDataset.commit(
            location, transaction, max_retries=0, storage_options=options, enable_v2_manifest_paths=True
        )
    except (OSError, ValueError) as exc:
        _discard_fragments(storage, location, transaction)
        if layout.has_versions(storage, location):
            raise DatasetExistsError(location) from exc
        raise


def _create_in_memory(
    location: str, data: TableData, options: dict[str, str] | None, session: LanceSession
) -> lance.LanceDataset:
    """memory:// stores live in one process and one Lance session, which ``LanceDataset.commit``
    cannot be given: a process-wide lock makes the existence check and the write one step."""
    with _MEMORY_CREATE_LOCK:
        try:
            lance.dataset(location, storage_options=options, session=session)
        except ValueError:
            return lance.write_dataset(
                data, location, mode="create", storage_options=options, session=session
            )
        raise DatasetExistsError(location)


def _discard_fragments(storage: Storage, location: str, transaction: lance.Transaction) -> None:
    """Remove the data files of a create that lost: they sit in the winner's directory."""
    for fragment in getattr(transaction.operation, "fragments", None) or []:
        for data_file in fragment.files:
            path = f"{location.rstrip('/')}/data/{data_file.path}"
            if storage.exists(path):
                storage.rm(path)


def remove_created(storage: Storage, location: str) -> None:
    """Undo a create whose namespace registration then lost: remove the dataset's own directories,
    keeping any marker file another writer put there (a reservation), then the directory if empty."""
    for name in _DATASET_DIRS:
        path = f"{location.rstrip('/')}/{name}"
        if storage.exists(path):
            storage.rm(path, recursive=True)
    if not storage.has_files(location) and storage.exists(location):
        storage.rm(location, recursive=True)
