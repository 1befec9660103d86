"""The ``__manifest`` Lance table: schema, cached reads and exactly-once inserts.

Writes are merge-inserts keyed on ``object_id`` (the spec's primary-key de-duplication), never the
whole-table Overwrite native uses, so unknown columns and concurrent writers' rows survive. Inserts
use ``when_matched_fail``: pylance 14 detects a concurrent commit, re-runs the merge against the new
version and then fails on the row the other writer inserted, so of two writers racing on one id
exactly one commits; writers on different ids are both retried to success (see README "The namespace engine").
Reads are cached per manifest version, which Lance resolves cheaply through a shared ``Session``.
"""

from __future__ import annotations

import datetime
import json
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import lance
import pyarrow as pa

from dbt.adapters.lancens.namespace import errors
from dbt.adapters.lancens.namespace.storage import Storage

PRIMARY_KEY_METADATA = {b"lance-schema:unenforced-primary-key:position": b"0"}
SCHEMA = pa.schema(
    [
        pa.field("object_id", pa.string(), nullable=False, metadata=PRIMARY_KEY_METADATA),
        pa.field("object_type", pa.string(), nullable=False),
        pa.field("location", pa.string()),
        pa.field("metadata", pa.string()),
        pa.field("base_objects", pa.list_(pa.field("object_id", pa.string()))),
    ]
)
INDEXES = (
    ("object_id", "BTREE", "object_id_btree"),
    ("object_type", "BITMAP", "object_type_bitmap"),
    ("base_objects", "LABEL_LIST", "base_objects_label_list"),
)
READER_FLAGS = "lance.namespace.manifest.reader_feature_flags"
WRITER_FLAGS = "lance.namespace.manifest.writer_feature_flags"
_CONFLICT_RETRIES = 50
_RETRY_TIMEOUT = datetime.timedelta(seconds=120)
_COMPACT_AT_FRAGMENTS = 64


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _check_flags(metadata: Mapping[str, str], key: str, action: str) -> None:
    """Refuse manifests that declare features we do not understand, as native does (known flags: 0)."""
    raw = metadata.get(key)
    if raw is None:
        return
    if raw.strip() != "0":
        raise errors.UnsupportedOperationError(
            f"__manifest declares {key}={raw!r}; this engine cannot {action} it (known flags: 0)"
        )


class ManifestTable:
    """Access to one root's ``__manifest``; created lazily by the first write."""

    def __init__(
        self, uri: str, storage_options: Mapping[str, str], session: lance.Session, storage: Storage
    ) -> None:
        self.uri = uri
        self._storage = storage
        self._hint_path = f"{uri}/_versions/latest_version_hint.json"
        # None rather than {}: Lance keys its memory:// store by the options, and {} misses it
        self._storage_options = dict(storage_options) or None
        self._session = session
        self._cached_version = -1
        self._rows: pa.Table = SCHEMA.empty_table()
        self._by_id: dict[str, dict[str, Any]] = {}
        self._metadata: dict[str, str] = {}
        self._handle: lance.LanceDataset | None = None
        # One namespace serves several threads (dbt runs models in parallel): the cache is shared
        # under a lock, while a snapshot pin belongs to the thread that took it.
        self._lock = threading.RLock()
        self._local = threading.local()

    @property
    def _pinned(self) -> bool:
        return getattr(self._local, "pinned", False)

    @_pinned.setter
    def _pinned(self, value: bool) -> None:
        self._local.pinned = value

    @property
    def _pinned_fresh(self) -> bool:
        return getattr(self._local, "pinned_fresh", False)

    @_pinned_fresh.setter
    def _pinned_fresh(self, value: bool) -> None:
        self._local.pinned_fresh = value

    # ----------------------------------------------------------------- reading
    def _open(self) -> lance.LanceDataset | None:
        # The hint is read BEFORE opening: a version it names was committed before this open began,
        # so the open must see it unless its file is gone. (Reading it after the open would race
        # with a concurrent writer's commit and report damage that is not there.)
        hinted = self._hinted_version()
        dataset = self._open_latest()
        if dataset is None:
            self._check_truly_absent(hinted)
            return None
        if hinted > dataset.version:
            raise errors.InternalError(
                f"__manifest at {self.uri} is damaged: its latest_version_hint.json names version "
                f"{hinted} but the newest readable version is {dataset.version}; refusing to read or "
                "write a rolled-back namespace (restore the missing _versions/ file)"
            )
        # A memory:// store lives only while a dataset references it: keep the latest handle.
        self._handle = dataset
        return dataset

    def _open_latest(self) -> lance.LanceDataset | None:
        try:
            return lance.dataset(self.uri, storage_options=self._storage_options, session=self._session)
        except ValueError as exc:
            if "not found" in str(exc).lower():
                return None
            raise errors.InternalError(f"__manifest at {self.uri} cannot be read: {exc}") from exc
        except OSError as exc:
            raise errors.InternalError(f"__manifest at {self.uri} cannot be read: {exc}") from exc

    def _hinted_version(self) -> int:
        """The version Lance's `latest_version_hint.json` names (0 when there is none to read).

        Lance writes the hint after each commit, so a hint ahead of the newest readable version
        means a version file was lost; opening "latest" would silently roll the namespace back.
        """
        try:
            return int(json.loads(self._storage.read_bytes(self._hint_path))["version"])
        except (FileNotFoundError, KeyError, ValueError, TypeError):
            return 0

    def _check_truly_absent(self, hinted: int) -> None:
        """No readable version: fine for a new root, damage when Lance's hint names a version.

        Data files alone prove nothing: a writer creating `__manifest` writes them before its
        first version file, and a concurrent reader must not mistake that for damage.
        """
        if hinted > 0:
            raise errors.InternalError(
                f"__manifest at {self.uri} has no readable version file although its "
                "latest_version_hint.json names one: refusing to start a new, empty namespace over "
                "existing tables (restore __manifest/_versions/)"
            )

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Within the block, reads use one manifest version, opened once.

        One operation looks several ids up (parent namespace, the id itself, ...); without this each
        lookup re-opens ``__manifest`` to find the latest version. Inside the block they also agree
        with each other. Our own writes still advance or invalidate the cache as usual; writes need
        no snapshot (inserts are exactly-once by merge-insert, whatever the snapshot said)."""
        if self._pinned:
            yield
            return
        self._pinned, self._pinned_fresh = True, False
        try:
            yield
        finally:
            self._pinned = False

    def _refresh(self, dataset: lance.LanceDataset | None = None) -> None:
        """Bring the cache to ``dataset``'s version, or to the latest one (opened here) when None."""
        if dataset is None:
            if self._pinned and self._pinned_fresh and self._cached_version >= 0:
                return
            dataset = self._open()
            self._pinned_fresh = self._pinned
        version = dataset.version if dataset is not None else 0
        with self._lock:
            # Never step back: another thread may already have cached a newer version.
            if version == self._cached_version or (dataset is not None and version < self._cached_version):
                return
            if dataset is None:
                rows, metadata = SCHEMA.empty_table(), {}
            else:
                metadata = dict(dataset.metadata)
                _check_flags(metadata, READER_FLAGS, "read")
                rows = dataset.to_table()
            self._rows = rows
            self._by_id = {row["object_id"]: row for row in rows.to_pylist()}
            self._metadata = metadata
            self._cached_version = version

    @property
    def version(self) -> int:
        """Latest committed manifest version (0 when ``__manifest`` does not exist yet)."""
        self._refresh()
        return self._cached_version

    def rows(self) -> pa.Table:
        self._refresh()
        return self._rows

    def by_id(self) -> dict[str, dict[str, Any]]:
        """All rows keyed by object_id, from the same cached snapshot as ``rows()``."""
        self._refresh()
        return self._by_id

    def get(self, object_id: str) -> dict[str, Any] | None:
        return self.by_id().get(object_id)

    def metadata(self) -> dict[str, str]:
        self._refresh()
        return dict(self._metadata)

    # ----------------------------------------------------------------- writing
    def _writable(self) -> lance.LanceDataset:
        dataset = self._open() or self._create()
        _check_flags(dict(dataset.metadata), READER_FLAGS, "read")
        _check_flags(dict(dataset.metadata), WRITER_FLAGS, "write")
        return dataset

    def _create(self) -> lance.LanceDataset:
        """Create the empty manifest with the spec's three indexes; a racing creator simply wins."""
        try:
            dataset = lance.write_dataset(
                SCHEMA.empty_table(),
                self.uri,
                mode="create",
                storage_options=self._storage_options,
                session=self._session,
            )
        except (OSError, ValueError) as exc:
            if "exist" not in str(exc).lower():
                raise
            existing = self._open()
            if existing is None:
                raise
            return existing
        self._handle = dataset
        for column, index_type, name in INDEXES:
            dataset.create_scalar_index(column, index_type, name=name)
        return self._open() or dataset

    def _table(self, rows: Iterable[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
        """Rows in the manifest's current schema: unknown columns are kept and filled with nulls."""
        return pa.Table.from_pylist([dict(row) for row in rows], schema=schema)

    def insert(self, rows: list[dict[str, Any]]) -> int:
        """Insert rows in one commit; raise DuplicateObjectIdError if any object_id exists or races."""
        ids = [row["object_id"] for row in rows]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise errors.DuplicateObjectIdError(repeated)
        dataset = self._writable()
        self._refresh(dataset)  # the handle we write with is the latest version: no second open
        existing = self._existing(ids)
        if existing:
            raise errors.DuplicateObjectIdError(existing)
        builder = (
            dataset.merge_insert("object_id")
            .when_matched_fail()
            .when_not_matched_insert_all()
            .conflict_retries(_CONFLICT_RETRIES)
            .retry_timeout(_RETRY_TIMEOUT)
        )
        base_version = self._cached_version
        try:
            result = builder.execute(self._table(rows, dataset.schema))
        except OSError as exc:
            if "found matching row" not in str(exc):
                raise
            raise errors.DuplicateObjectIdError(self._existing(ids) or ids, concurrent=True) from exc
        self._apply_own_commit(dataset, base_version, rows)
        self._compact_if_fragmented(dataset)
        return int(result["num_inserted_rows"])

    def _compact_if_fragmented(self, dataset: lance.LanceDataset) -> None:
        """Every merge-insert adds a fragment; merge them once there are many so reads stay fast.

        Compaction rewrites only the fragments it read, so it commutes with concurrent inserts; if it
        loses a race with a delete it is simply skipped until the next insert tries again.
        """
        if len(dataset.get_fragments()) < _COMPACT_AT_FRAGMENTS:
            return
        try:
            dataset.optimize.compact_files()
        except OSError as exc:
            if "conflict" not in str(exc).lower():
                raise

    def _apply_own_commit(self, dataset: lance.LanceDataset, base_version: int, rows: list[dict]) -> None:
        """Advance the cache without a re-read when our commit directly followed the cached version."""
        with self._lock:
            if dataset.version != base_version + 1 or self._cached_version != base_version:
                return
            schema_names = self._rows.schema.names
            added = [{name: row.get(name) for name in schema_names} for row in rows]
            self._rows = pa.concat_tables([self._rows, pa.Table.from_pylist(added, schema=self._rows.schema)])
            self._by_id = {**self._by_id, **{row["object_id"]: row for row in added}}
            self._cached_version = dataset.version

    def _existing(self, ids: list[str]) -> list[str]:
        current = self.by_id()
        return [i for i in ids if i in current]

    def upsert(self, rows: list[dict[str, Any]]) -> None:
        """Insert or replace rows by object_id in one commit (used for metadata updates)."""
        dataset = self._writable()
        try:
            (
                dataset.merge_insert("object_id")
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .conflict_retries(_CONFLICT_RETRIES)
                .retry_timeout(_RETRY_TIMEOUT)
                .execute(self._table(rows, dataset.schema))
            )
        finally:
            self._cached_version = -1

    def delete(self, object_ids: Iterable[str]) -> int:
        """Delete rows by primary key; returns how many of them existed just before."""
        ids = list(dict.fromkeys(object_ids))
        if not ids:
            return 0
        dataset = self._open()
        if dataset is None:
            return 0
        self._refresh(dataset)
        present = self._existing(ids)
        if not present:
            return 0
        try:
            dataset.delete("object_id IN (" + ", ".join(_sql_string(i) for i in present) + ")")
        finally:
            self._cached_version = -1
        return len(present)

    def set_metadata(self, updates: Mapping[str, str], removals: Iterable[str] = ()) -> None:
        """Set/remove keys of the __manifest Lance table metadata (root namespace properties)."""
        changes: dict[str, str | None] = {key: None for key in removals}
        changes.update({key: str(value) for key, value in updates.items()})
        if not changes:
            return
        dataset = self._writable()
        try:
            dataset.update_metadata(changes)
        finally:
            self._cached_version = -1
