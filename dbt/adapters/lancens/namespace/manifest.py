"""The ``__manifest`` Lance table: schema, cached reads and exactly-once commits.

**Reads** come from a ``ManifestSnapshot`` of the latest version. Finding the latest version is a
cheap open through the shared ``lance.Session``; the rows are read again only when it changed, and
the engine's own commits patch the snapshot instead. Inside ``snapshot()`` one operation's lookups
all use one version. With a ``FragmentCache`` a full read takes the fragments this machine already
read from local disk (``fragment_cache``: the files of a version, never which version is latest).

**Writes** are one merge keyed on ``object_id`` per commit (``ManifestChange``: insert new ids,
replace whole rows, delete ids, or insert and delete together for a rename), never the
whole-table Overwrite native uses, so unknown columns and other writers' rows survive. ``commit``
makes each one exactly-once under concurrency:

1. the caller's *plan* checks the change against the latest version (the id is free, the row is
   still there ...) and raises the spec error if not;
2. the merge runs with Lance's own retries off and without the scalar index on ``object_id``
   (an insert or replace also carries the rows of ``__manifest``'s short unindexed tail along
   unchanged, which keeps its fragments few: ``maintenance.carried_rows``);
3. any commit conflict sends it back to 1 against the new latest version.

Lance detects the conflicts that matter: two commits deleting or replacing the same row, and (by
the inserted-keys filter it records for a primary-key merge) two commits inserting the same id.
Re-planning instead of letting Lance re-run the merge is what makes deletes and renames
exactly-once: Lance's retry would silently delete nothing and report success. The index is
bypassed because pylance 14's indexed merge records no inserted-keys filter (two writers could
then insert one id twice); the merge then scans ``object_id``, a small column.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import lance
import pyarrow as pa
from lance.lance import _Session as LanceSession

from dbt.adapters.lancens.namespace import (
    datasets,
    errors,
    ids,
    kinds,
    layout,
    maintenance,
    ownership,
    unreadable,
)
from dbt.adapters.lancens.namespace.fragment_cache import FragmentCache
from dbt.adapters.lancens.namespace.snapshot import ManifestSnapshot, Row
from dbt.adapters.lancens.namespace.storage import Storage

_logger = logging.getLogger(__name__)

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
READER_FLAGS = "lance.namespace.manifest.reader_feature_flags"
WRITER_FLAGS = "lance.namespace.manifest.writer_feature_flags"
RETRY_SECONDS = 120.0
HINT_PROBES = 16
"""How many versions past ``latest_version_hint.json`` an open looks for before it lets Lance list
``_versions/`` (Lance rewrites the hint after every commit, so it is rarely more than one behind)."""
_CONFLICT_WORDS = ("conflict", "concurrent", "preempted", "incompatible transaction", "found matching row")


@dataclass(frozen=True)
class ManifestChange:
    """One ``__manifest`` commit. ``insert``: rows with new ids (a present id fails the commit);
    ``replace``: whole rows for present ids (pass the full row so unknown columns survive);
    ``delete``: ids to remove. Only ``insert`` and ``delete`` may be combined (a rename)."""

    insert: Sequence[Row] = ()
    replace: Sequence[Row] = ()
    delete: Sequence[str] = ()
    guard: Sequence[Row] = ()
    """With ``insert``: rows written back unchanged (``parent_guard``), so that a concurrent commit
    deleting or changing one of them conflicts with this one."""
    update: Sequence[Row] = ()
    """With ``insert``: whole rows for present ids, changed in the same commit (a publish that
    replaces views together with the table versions it inserts)."""

    def __post_init__(self) -> None:
        if self.replace and (self.insert or self.delete):
            raise ValueError("a manifest change replaces rows, or inserts and/or deletes them")
        if (self.guard or self.update) and not self.insert:
            raise ValueError("only an insert guards or updates rows")


_NAMESPACE_CHILDREN = ("namespace", "table")
"""Object types whose rows live in a namespace (views are ``table`` rows with a marker)."""


def parent_guard(view: ManifestView, rows: Sequence[Row]) -> list[Row]:
    """The rows of the child namespaces the new ``rows`` go into, to be written back unchanged in
    the same commit; 1 when one of them is gone.

    Checking the parent before the insert is not enough: a concurrent DropNamespace deletes the
    parent's row while this commit inserts a child's, the two touch different rows, and Lance
    rebases one on the other, leaving the child under a namespace that no longer exists (spec
    002 forbids both halves: DropNamespace of a namespace with children, CreateX under a missing
    one). Rewriting the parent's row makes Lance see the two commits conflict, and the loser plans
    again: the drop then finds the child (3), or the create finds no parent (1)."""
    inserted = {row["object_id"] for row in rows}
    parents = sorted(
        {
            ids.object_id(ids.split(row["object_id"])[:-1])
            for row in rows
            if row["object_type"] in _NAMESPACE_CHILDREN and ids.DELIMITER in row["object_id"]
        }
        - inserted
    )
    guard = []
    for parent in parents:
        row = view.get(parent)
        if row is None or row["object_type"] != "namespace":
            raise errors.NamespaceNotFoundError(
                f"namespace {ids.display(ids.split(parent))} not found: it was dropped concurrently"
            )
        guard.append(row)
    return guard


POINT_LOOKUP_ROWS = 1000
"""From this many rows on, a lookup by id in a version that is not in memory is an indexed query
(the BTREE on ``object_id``) rather than a read of the whole version: measured ~2-4 ms against
~50 ms at 10,000 rows, and about even at 100 rows, where reading everything then serves the
next lookups too."""


class ManifestView:
    """``__manifest`` at one version, read as lazily as the caller's questions allow.

    A lookup by id comes from the in-memory snapshot when that version is cached; in a large
    manifest that is not, it is an indexed point query (remembered for this view); listings and
    the full row map read the whole version into the shared cache."""

    def __init__(
        self, table: ManifestTable, dataset: lance.LanceDataset | None, shared: bool = False
    ) -> None:
        self._table = table
        self._dataset = dataset
        self.shared = shared
        """Held for the blocks of every thread (``ManifestTable.share``): tables' versions are not
        kept in it, so a table's version is always found anew while the catalog rows stay one state."""
        self.version = dataset.version if dataset is not None else 0
        self.metadata: dict[str, str] = dict(dataset.metadata) if dataset is not None else {}
        _check_flags(self.metadata, READER_FLAGS, "read")
        self._found: dict[str, Row | None] = {}
        self._large: bool | None = None
        self.listings: dict[str, tuple[bool, int | None]] = {}
        """Per table location, whether it has data and its newest version, as found once while this
        view is pinned (``NamespaceContext.latest_data``): one instant for the table too."""

    def snapshot(self) -> ManifestSnapshot:
        return self._table._snapshot_at(self._dataset)

    def _in_memory(self) -> ManifestSnapshot | None:
        cached = self._table._cached_at(self.version)
        if cached is not None or self._dataset is None:
            return cached or ManifestSnapshot.empty()
        if self._large is None:
            self._large = self._dataset.count_rows() >= POINT_LOOKUP_ROWS
        return None if self._large else self.snapshot()

    def get(self, object_id: str) -> Row | None:
        """The row of ``object_id``, or None. A point query also fetches the rows of the namespaces
        above it, which the caller checks next (one indexed query instead of one per level)."""
        snapshot = self._in_memory()
        if snapshot is not None:
            return snapshot.get(object_id)
        if object_id not in self._found:
            assert self._dataset is not None
            wanted = ids.with_ancestors(object_id)
            listed = ", ".join(_sql_string(i) for i in wanted)
            try:
                rows = self._dataset.to_table(filter=f"object_id IN ({listed})").to_pylist()
            except unreadable.READ_FAILURES as exc:
                raise unreadable.read_failure(ids.MANIFEST_NAME, self._table.uri, self._dataset, exc) from exc
            found = {row["object_id"]: row for row in rows}
            self._found.update({i: found.get(i) for i in wanted})
        return self._found[object_id]

    @property
    def by_id(self) -> dict[str, Row]:
        return self.snapshot().by_id

    def children(self, parent_id: str, kind: str) -> list[str]:
        return self.snapshot().children(parent_id, kind)


Plan = Callable[[ManifestView, bool], ManifestChange | None]
"""Given the latest version and whether a concurrent commit was seen, the change to commit (None:
nothing to do), or raise the spec error that the snapshot shows."""


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def is_conflict(exc: BaseException) -> bool:
    """Whether a Lance error means another writer committed first (then: re-plan and retry)."""
    text = str(exc).lower()
    return isinstance(exc, OSError | ValueError) and any(word in text for word in _CONFLICT_WORDS)


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
    """Access to one root's ``__manifest``; created lazily (and exactly once) by the first write."""

    def __init__(
        self,
        uri: str,
        storage_options: Mapping[str, str],
        session: LanceSession,
        storage: Storage,
        fragments: FragmentCache | None = None,
        allow_foreign_root: bool = False,
    ) -> None:
        self.uri = uri
        self._allow_foreign_root = allow_foreign_root
        # Where a full read takes the fragments this machine already read (None: from the store).
        self._fragments = fragments
        self._storage = storage
        self._hint_path = f"{uri}/_versions/latest_version_hint.json"
        # None rather than {}: Lance keys its memory:// store by the options, and {} misses it
        self._storage_options = dict(storage_options) or None
        self._session = session
        self._cached = ManifestSnapshot.empty()
        self._handle: lance.LanceDataset | None = None
        # On S3 (``_open_listed``): the newest version this process has seen, for the rollback check.
        self._known = 0
        # One namespace serves several threads (dbt runs models in parallel): the cache is shared
        # under a lock, while a snapshot pin belongs to the thread that took it.
        self._lock = threading.RLock()
        self._local = threading.local()
        # The version ``share`` holds for ``snapshot(shared=True)`` blocks of every thread, or None.
        self._shared: ManifestView | None = None

    # ----------------------------------------------------------------- reading
    def _open(self, private: bool = False) -> lance.LanceDataset | None:
        """The latest version. ``private``: a dataset object of the caller's own, for a commit
        (a merge moves the object it runs on to the new version, so a shared one must never see a
        merge); otherwise, on S3, the shared handle when the version did not change."""
        if self._storage.lists_in_order:
            return self._open_listed(private)
        # The hint is read BEFORE opening: a version it names was committed before this open began,
        # so the open must see it unless its file is gone. (Reading it after the open would race
        # with a concurrent writer's commit and report damage that is not there.)
        hinted = self._hinted_version()
        dataset = self._open_from_hint(hinted) or self._open_latest()
        if dataset is None:
            if hinted > 0:
                raise errors.InternalError(
                    f"__manifest at {self.uri} has no readable version file although its "
                    "latest_version_hint.json names one: refusing to start a new, empty namespace over "
                    "existing tables (restore __manifest/_versions/)"
                )
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

    def _open_listed(self, private: bool) -> lance.LanceDataset | None:
        """On S3: the latest version by Lance's own open, which lists ONE page of ``_versions/``
        (V2 names count down, so the newest sorts first) and takes the manifest's size from that
        listing: one LIST, plus one GET when the version is not in the session's cache. (pylance
        14 writes no ``latest_version_hint.json`` there, so reading the hint cost a HEAD and s3fs's
        fallback LIST for nothing; listing ourselves and opening by version added a HEAD.)

        A version names immutable content, so the shared handle serves while the listing still
        names its version: the rows are read again only when the version changed. The listing
        replaces the hint as the rollback check within this process: a newest version below one
        this process already saw means its file was lost (``_known`` is read before the listing
        starts, so another thread's newer open is no false alarm). A fresh process has nothing to
        compare with on S3 (docs/namespace-engine.md)."""
        with self._lock:
            known, shared = self._known, self._handle
        dataset = self._open_latest()
        if dataset is not None and shared is not None and shared.version == dataset.version and not private:
            dataset = shared
        newest = dataset.version if dataset is not None else 0
        if newest < known:
            raise errors.InternalError(
                f"__manifest at {self.uri} is damaged: this process read version {known} but the newest "
                f"readable version is now {newest}; refusing to read or write a rolled-back namespace "
                "(restore the missing _versions/ file)"
            )
        if dataset is not None and not private:
            with self._lock:
                if self._handle is None or self._handle.version <= newest:
                    self._handle = dataset
        with self._lock:
            self._known = max(self._known, newest)
        return dataset

    def _open_from_hint(self, hinted: int) -> lance.LanceDataset | None:
        """The latest version, found from the hint without listing ``_versions/``; None to let Lance
        list (no hint, a hint too far behind, an unexpected file name).

        Lance finds "latest" by listing ``_versions/``, which holds one manifest per commit: at
        3,000 commits that listing made every open 25 times slower (1.4 ms against 0.06 ms). The
        hint names a committed version; the versions after it, if any, are found by checking for
        their (computable) file names, and that version is opened directly."""
        if hinted <= 0:
            return None
        schemes = [s for s in ("V2", "V1") if self._storage.exists(self._version_file(hinted, s))]
        if not schemes:
            return None
        version = hinted
        for _ in range(HINT_PROBES):
            if not self._storage.exists(self._version_file(version + 1, schemes[0])):
                break
            version += 1
        else:
            return None
        try:
            return lance.dataset(
                self.uri, version=version, storage_options=self._storage_options, session=self._session
            )
        except (OSError, ValueError):
            return None  # the listing path below decides what is wrong

    def _private(self, dataset: lance.LanceDataset) -> lance.LanceDataset:
        """``dataset``'s version in an object of the caller's own on S3, where views may share the
        handle (a commit's merge moves the object it runs on); one HEAD, the manifest is in the
        session's cache."""
        if not self._storage.lists_in_order:
            return dataset
        return lance.dataset(
            self.uri, version=dataset.version, storage_options=self._storage_options, session=self._session
        )

    def _version_file(self, version: int, scheme: str) -> str:
        return f"{self.uri}/{layout.VERSIONS_DIR}/{layout.manifest_name(version, scheme)}"

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
        Data files alone prove nothing: a writer creating `__manifest` writes them before its
        first version file.
        """
        try:
            return int(json.loads(self._storage.read_bytes(self._hint_path))["version"])
        except (FileNotFoundError, KeyError, ValueError, TypeError):
            return 0

    def _snapshot_at(self, dataset: lance.LanceDataset | None) -> ManifestSnapshot:
        """The whole version ``dataset`` is at: the cached snapshot, or read now (and cached)."""
        version = dataset.version if dataset is not None else 0
        with self._lock:
            cached = self._cached
        if cached.version == version:
            return cached
        if dataset is None:
            snapshot = ManifestSnapshot.empty()
        else:
            try:
                rows = self._fragments.read(dataset) if self._fragments is not None else dataset.to_table()
            except unreadable.READ_FAILURES as exc:
                raise unreadable.read_failure(ids.MANIFEST_NAME, self.uri, dataset, exc) from exc
            snapshot = ManifestSnapshot.from_table(version, rows, dict(dataset.metadata))
        with self._lock:
            if snapshot.version > self._cached.version:  # never step back: another thread may be ahead
                self._cached = snapshot
        return snapshot

    def _cached_at(self, version: int) -> ManifestSnapshot | None:
        with self._lock:
            return self._cached if self._cached.version == version else None

    def share(self) -> None:
        """Read the latest version now and hold it for ``snapshot(shared=True)`` blocks of every
        thread until ``unshare`` or this process's next ``commit``, which moves the catalog on.

        For a batch of reads that a caller spreads over several threads and calls, such as dbt
        filling its relation cache at the start of a run, that must agree with each other and need
        not each find the latest version again (a request on S3 each). Another process's commit
        made meanwhile is seen by the first read after the sharing ends, as if it had come after
        them. Reads that do not ask for it always find the latest version."""
        view = ManifestView(self, self._open(), shared=True)
        with self._lock:
            self._shared = view

    def unshare(self) -> None:
        """End ``share``: every read finds the latest version again."""
        with self._lock:
            self._shared = None

    @contextmanager
    def snapshot(self, shared: bool = False) -> Iterator[ManifestView]:
        """Within the block, every read of this thread uses one manifest version, opened once.

        One operation looks several ids up (parent namespace, the id itself, ...); without this each
        lookup re-opens ``__manifest`` to find the latest version, and inside the block they agree
        with each other. Writes do not rely on it: ``commit`` plans against the latest version, and
        moves the block on to the version it last planned on, its own when it lands, so the thread
        reads what it wrote (or what made its plan refuse). ``shared``: the version ``share``
        holds, if it holds one (a block already open on this thread keeps its own)."""
        pinned: ManifestView | None = getattr(self._local, "pinned", None)
        if pinned is not None:
            yield pinned
            return
        with self._lock:
            held = self._shared if shared else None
        self._local.pinned = held if held is not None else ManifestView(self, self._open())
        try:
            yield self._local.pinned
        finally:
            self._local.pinned = None

    def pinned(self) -> ManifestView | None:
        """This thread's view inside ``snapshot()``, without opening anything; None outside."""
        pinned: ManifestView | None = getattr(self._local, "pinned", None)
        return pinned

    def current(self) -> ManifestView:
        """The pinned view inside ``snapshot()``, else the latest version."""
        pinned: ManifestView | None = getattr(self._local, "pinned", None)
        return pinned if pinned is not None else ManifestView(self, self._open())

    @property
    def version(self) -> int:
        """Latest committed manifest version (0 when ``__manifest`` does not exist yet)."""
        return self.current().version

    def known_metadata(self) -> dict[str, str]:
        """The metadata of the newest version this process has read or committed, without a
        request: for a flag that is only ever turned on (table version management), where a later
        commit checks the latest version again anyway."""
        with self._lock:
            handle, cached = self._handle, self._cached
        if handle is not None and handle.version >= cached.version:
            return dict(handle.metadata)
        return dict(cached.metadata)

    def by_id(self) -> dict[str, Row]:
        return self.current().by_id

    def get(self, object_id: str) -> Row | None:
        return self.current().get(object_id)

    def children(self, parent_id: str, kind: str) -> list[str]:
        return self.current().children(parent_id, kind)

    def metadata(self) -> dict[str, str]:
        return self.current().metadata

    # ----------------------------------------------------------------- writing
    def _writable(self) -> lance.LanceDataset:
        dataset = self._open(private=True)
        if dataset is None:  # not `or`: an empty LanceDataset is falsy (it has a length)
            dataset = self._create()
        _check_flags(dict(dataset.metadata), READER_FLAGS, "read")
        _check_flags(dict(dataset.metadata), WRITER_FLAGS, "write")
        return dataset

    def _create(self) -> lance.LanceDataset:
        """Create the empty manifest exactly once; a creator that lost opens the winner's. A root
        holding someone else's files is refused first (``ownership.refuse_foreign_root``)."""
        ownership.refuse_foreign_root(self._storage, self._allow_foreign_root)
        try:
            self._handle = datasets.create(
                self._storage, self.uri, SCHEMA.empty_table(), self._storage_options, self._session
            )
        except datasets.DatasetExistsError:
            pass
        except OSError as exc:  # Lance's own message names neither the root nor what it was doing
            raise errors.InternalError(
                f"the namespace root {self._storage.root!r} cannot be created: writing its __manifest "
                f"table at {self.uri} failed: {exc}"
            ) from exc
        existing = self._open(private=True)
        if existing is None:
            raise errors.InternalError(f"__manifest at {self.uri} was created but cannot be opened")
        return existing

    def commit(self, plan: Plan) -> ManifestChange | None:
        """Plan and commit one change exactly once (see the module docstring); returns it, or None
        when the plan found nothing to do. 14 when conflicts persist for ``RETRY_SECONDS``."""
        deadline = time.monotonic() + RETRY_SECONDS
        concurrent = False
        self.unshare()  # the catalog moves on: reads after this commit must see it
        pinned: ManifestView | None = getattr(self._local, "pinned", None)
        for attempt in range(1_000_000):
            if attempt == 0 and pinned is not None and pinned._dataset is not None:
                # The version this operation already read: safe to plan on even if another writer
                # committed since, because Lance then reports the conflict and we plan again.
                dataset, base = self._private(pinned._dataset), pinned
                _check_flags(base.metadata, WRITER_FLAGS, "write")
            else:
                dataset = self._writable()
                base = ManifestView(self, dataset)
                if pinned is not None:  # the block reads on from the version this commit saw
                    self._local.pinned = base
            change = plan(base, concurrent)
            if change is None:
                return None
            try:
                self._execute(dataset, change, base)
            except (OSError, ValueError) as exc:
                if not is_conflict(exc):
                    raise
                if time.monotonic() > deadline:
                    raise errors.ConcurrentModificationError(
                        f"__manifest at {self.uri}: still conflicting with other writers after "
                        f"{attempt + 1} attempts: {exc}"
                    ) from exc
                concurrent = True
                time.sleep(random.uniform(0, min(0.02 * 2**attempt, 0.5)))
                continue
            try:
                self._after_commit(dataset, base, change)
            except Exception as exc:  # the change is committed: the cache and the upkeep only help
                _logger.warning("__manifest at %s: upkeep after a commit failed: %s", self.uri, exc)
            if pinned is not None:  # the block reads what it wrote
                self._local.pinned = ManifestView(self, dataset)
            return change
        raise AssertionError("unreachable")

    def _execute(self, dataset: lance.LanceDataset, change: ManifestChange, base: ManifestView) -> None:
        builder = dataset.merge_insert("object_id").use_index(False).conflict_retries(0)
        if change.replace:
            builder = builder.when_matched_update_all()
            source = [*change.replace, *self._carried(dataset, change)]
        elif change.insert:
            # A guarded insert rewrites its guard rows (matched); its new ids are free in the
            # planned version, and a racer inserting one of them guards the same parent. Rows
            # carried from the unindexed tail are rewritten unchanged the same way.
            rewritten = [*change.guard, *change.update, *self._carried(dataset, change)]
            matched = builder.when_matched_update_all() if rewritten else builder.when_matched_fail()
            builder = matched.when_not_matched_insert_all()
            source = [*rewritten, *change.insert]
            if change.delete:
                ids = ", ".join(_sql_string(i) for i in change.delete)
                builder = builder.when_not_matched_by_source_delete(f"object_id IN ({ids})")
        else:
            builder = builder.when_matched_delete()
            source = [row for i in change.delete if (row := base.get(i)) is not None]
        builder.execute(self._table(source, dataset.schema))

    def _carried(self, dataset: lance.LanceDataset, change: ManifestChange) -> list[Row]:
        """The unindexed tail's rows this commit rewrites unchanged, which merges the tail's
        fragments into the commit's own new fragment (``maintenance.carried_rows``): the tail
        stays a few fragments long without a compaction commit. Rows the change writes or
        deletes itself are left out (a rename's deleted row must not be matched)."""
        written = {
            row["object_id"] for row in (*change.insert, *change.replace, *change.guard, *change.update)
        }
        return maintenance.carried_rows(dataset, written | set(change.delete))

    def _table(self, rows: Sequence[Row], schema: pa.Schema) -> pa.Table:
        """Rows in the manifest's current schema: unknown columns are kept and filled with nulls."""
        return pa.Table.from_pylist([{name: row.get(name) for name in schema.names} for row in rows], schema)

    def _after_commit(self, dataset: lance.LanceDataset, base: ManifestView, change: ManifestChange) -> None:
        """Advance the cached snapshot without a re-read when our commit directly followed it, then
        run the upkeep that is due.

        Upkeep commits leave the rows as they are, but another writer may commit between them, so
        a warm cache is not carried across them: it is read again at the version upkeep ended on
        (once per upkeep, not per write), which keeps the next writes' lookups in memory."""
        cached = self._cached_at(base.version)
        ours = dataset.version
        if cached is not None and ours == base.version + 1:
            names = dataset.schema.names
            changed = [*change.insert, *change.replace, *change.update]
            upserts = [{name: row.get(name) for name in names} for row in changed]
            with self._lock:
                if self._cached.version <= ours:
                    self._cached = cached.patched(ours, upserts, change.delete, cached.metadata)
        if maintenance.upkeep(dataset) and cached is not None:
            self._snapshot_at(dataset)
        # Our commit (and upkeep) are over: the object is at a version this process committed and
        # no merge runs on it again, so it serves reads of that version (the next check still
        # lists which version is the latest) and raises the rollback check's floor.
        with self._lock:
            self._known = max(self._known, dataset.version)
            if self._storage.lists_in_order and (
                self._handle is None or self._handle.version < dataset.version
            ):
                self._handle = dataset

    def insert(self, rows: list[Row], update: Sequence[Row] = ()) -> None:
        """Insert rows in one commit; DuplicateObjectIdError if an id exists (``concurrent`` when a
        racing writer inserted it while this call ran), 1 if a child namespace they go into is
        gone (``parent_guard``). ``update``: rows of present ids changed in the same commit, each
        checked against the version the commit is planned on (14 if its id is gone or is now
        another kind of object), its location kept from there."""
        object_ids = [row["object_id"] for row in rows]
        repeated = sorted({i for i in object_ids if object_ids.count(i) > 1})
        if repeated:
            raise errors.DuplicateObjectIdError(repeated)

        def plan(view: ManifestView, concurrent: bool) -> ManifestChange:
            taken = [i for i in object_ids if view.get(i) is not None]
            if taken:
                raise errors.DuplicateObjectIdError(taken, concurrent)
            updated = [_still_present(view, row) for row in update]
            if not rows:
                return ManifestChange(replace=updated)
            return ManifestChange(insert=rows, guard=parent_guard(view, rows), update=updated)

        self.commit(plan)

    def set_metadata(self, updates: Mapping[str, str], removals: Sequence[str] = ()) -> None:
        """Set/remove keys of the __manifest Lance table metadata (root namespace properties)."""
        changes: dict[str, str | None] = {key: None for key in removals}
        changes.update({key: str(value) for key, value in updates.items()})
        if not changes:
            return
        deadline = time.monotonic() + RETRY_SECONDS
        while True:
            dataset = self._writable()
            try:
                dataset.update_metadata(changes)
                return
            except (OSError, ValueError) as exc:
                if not is_conflict(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(random.uniform(0, 0.1))


def _still_present(view: ManifestView, row: Row) -> Row:
    """`row` as a change of the entry `view` holds for its id: the entry must still be there and of
    the same kind (a concurrent drop, or a drop and a create of another kind, refuses the commit)."""
    current = view.get(row["object_id"])
    if current is None or kinds.object_kind(current) != kinds.object_kind(row):
        raise errors.ConcurrentModificationError(
            f"{row['object_id']} was dropped or replaced by another writer while this commit was planned"
        )
    return {**current, **row, "location": current["location"]}
