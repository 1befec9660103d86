"""Commits made outside the engine: one Lance transaction per call, registered in the namespace.

The Spark data source writes fragments on executors and hands the driver a ``lance.LanceOperation``;
``commit_table`` turns it into a new table version. Two paths:

* file based: ``LanceDataset.commit`` at the table location, pinned to ``read_version``. Lance's own
  conflict resolution rebases compatible operations (appends) and refuses the rest, which we report
  as ConcurrentModification (14).
* table version management: the same call with ``namespace_client=_VersionStore(...)`` and
  ``namespace_client_managed_versioning=True``. Lance then writes the new manifest to a staging
  file ``_versions/<name>.manifest-<uuid>`` (invisible to readers: not a finalized manifest name),
  asks ``_VersionStore.list_table_versions`` for the latest version and calls
  ``_VersionStore.create_table_version`` with the staging path; that runs the spec's steps 2-4 in
  ``VersionManager._commit_managed``. So the staging is Lance's own and no version is visible to any
  reader before the ``table_version`` row is inserted.

Staged commits (``stage_table_commit`` / ``publish``) use the same hook but stop after step 1: the
hook records the staging file instead of inserting a row, and ``publish`` inserts the rows of many
tables in one ``__manifest`` commit (BatchCreateTableVersions), then finalizes them.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlparse

import lance
from lance.commit import CommitConflictError
from lance_namespace import LanceNamespace

from dbt.adapters.lancens.namespace import branches, errors, ids, layout, props
from dbt.adapters.lancens.namespace.layout import TRANSACTIONS_DIR, VERSIONS_DIR
from dbt.adapters.lancens.namespace.models import ResolvedTable
from dbt.adapters.lancens.namespace.snapshot import Row
from dbt.adapters.lancens.namespace.versions import (
    TableVersion,
    VersionEntry,
    VersionManager,
)


@dataclass(frozen=True)
class StagedCommit:
    """A version written to storage but not yet part of the namespace (see ``publish``).

    ``table_row`` is the ``__manifest`` row of a table that did not exist yet; it is inserted in the
    same commit as the version row so the table appears together with its first version.
    ``transaction_uuid`` names the version's transaction file (``_transactions/<n>-<uuid>.txn``),
    which the version references once published and which is garbage if it never is."""

    id: list[str]
    version: int
    manifest_path: str
    location: str
    metadata: dict[str, str] = field(default_factory=dict)
    table_row: dict[str, Any] | None = None
    transaction_uuid: str | None = None


def _lance_path(path: str) -> str:
    """A path as Lance's object store spells it: no scheme, no bucket, no leading slash."""
    parsed = urlparse(path)
    if parsed.scheme in ("", "file"):
        return parsed.path.lstrip("/") if parsed.scheme else path.lstrip("/")
    return parsed.path.lstrip("/")


def version_response(version: TableVersion) -> dict[str, Any]:
    """A table version as Lance's external manifest store protocol answers it (a dict)."""
    return {
        "version": version.version,
        "manifest_path": _lance_path(version.manifest_path),
        "manifest_size": version.manifest_size,
        "e_tag": version.e_tag,
        "timestamp_millis": version.timestamp_millis,
    }


def _in_python_thread(
    call: Callable[[dict[str, Any]], dict[str, Any]], request: dict[str, Any]
) -> dict[str, Any]:
    """Run `call` (a callback Lance makes into the engine) on a Python thread of its own and wait.

    Lance calls its namespace client from its own native threads during a commit. The engine then
    calls Lance again (reads and commits of `__manifest`), and pylance 14 aborts the interpreter with
    a fatal GIL error ("PyEval_SaveThread: ... the GIL is released") when such a nested call is made
    on a native thread: at the first `__manifest` upkeep inside a commit (about the 16th table
    commit), or as soon as two threads of one process commit at once. A thread Python created has a
    proper thread state."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(call, request).result()


class VersionStore(LanceNamespace):
    """Lance's external manifest store (table version management), answered by the engine.

    pylance calls the three version methods with plain dicts and reads plain dicts back, although
    ``LanceNamespace`` declares its pydantic request and response models there (hence the
    ``override`` ignores). It calls them from its own native threads while it commits, so each
    runs on a Python thread (`_in_python_thread`); subclasses answer `_list`, `_describe` and
    `_create`."""

    def list_table_versions(self, request: dict[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        return _in_python_thread(self._list, request)

    def describe_table_version(self, request: dict[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        return _in_python_thread(self._describe, request)

    def create_table_version(self, request: dict[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        return _in_python_thread(self._create, request)

    @abstractmethod
    def _list(self, request: dict[str, Any]) -> dict[str, Any]: ...

    @abstractmethod
    def _describe(self, request: dict[str, Any]) -> dict[str, Any]: ...

    @abstractmethod
    def _create(self, request: dict[str, Any]) -> dict[str, Any]: ...


class _VersionStore(VersionStore):
    """The external manifest store Lance calls during one managed commit.

    Exceptions raised here reach the caller wrapped in Lance's OSError text; ``error`` keeps the
    original so ``commit_table`` can re-raise the namespace error with its code."""

    def __init__(
        self,
        manager: VersionManager,
        table: ResolvedTable,
        properties: dict[str, str],
        table_row: dict[str, Any] | None,
        stage_only: bool,
    ) -> None:
        self._manager = manager
        self._table = table
        self._properties = properties
        self._table_row = table_row
        self._stage_only = stage_only
        self.error: errors.NamespaceError | None = None
        self.staged: StagedCommit | None = None

    def namespace_id(self) -> str:
        return f"lancens-version-store({self._table.location})"

    def _known_versions(self) -> dict[int, TableVersion]:
        """Versions as of now (resolved afresh: a racing writer may have registered the table)."""
        try:
            table = self._manager._table(self._table.id)
        except errors.TableNotFoundError:
            return {}
        return self._manager._all_versions(table)

    def _list(self, request: dict[str, Any]) -> dict[str, Any]:
        versions = sorted(self._known_versions().values(), key=lambda v: v.version, reverse=True)
        if not request.get("descending", False):
            versions.reverse()
        limit = request.get("limit")
        return {"versions": [version_response(v) for v in versions[:limit] if limit is None or limit > 0]}

    def _describe(self, request: dict[str, Any]) -> dict[str, Any]:
        versions = self._known_versions()
        wanted = request.get("version")
        if wanted is None and versions:
            wanted = max(versions)
        if wanted not in versions:
            raise errors.TableVersionNotFoundError(f"{ids.display(self._table.id)} has no version {wanted}")
        return {"version": version_response(versions[wanted])}

    def _create(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            return self._create_version(request)
        except errors.NamespaceError as exc:
            self.error = exc
            raise

    def _create_version(self, request: dict[str, Any]) -> dict[str, Any]:
        version = int(request["version"])
        name = str(request["manifest_path"]).rstrip("/").rsplit("/", 1)[-1]
        staging = f"{self._table.location.rstrip('/')}/{VERSIONS_DIR}/{name}"
        entry = VersionEntry(self._table.id, version, staging, "V2", dict(self._properties))
        if self._stage_only:
            self.staged = StagedCommit(
                self._table.id,
                version,
                staging,
                self._table.location,
                dict(self._properties),
                self._table_row,
            )
            size = request.get("manifest_size")
            staged = TableVersion(version, staging, size, request.get("e_tag"), None, entry.metadata)
            return {"version": version_response(staged)}
        rows = [self._table_row] if self._table_row else []
        [created] = self._manager._commit_managed([entry], [self._table], new_table_rows=rows)
        return {"version": version_response(created)}


def _target(
    manager: VersionManager, table_id: Sequence[str], location: str | None, read_version: int | None = None
) -> tuple[ResolvedTable, dict[str, Any] | None]:
    """The table to commit to, and the ``__manifest`` row to add when the table is new.

    A new table's directory name is random outside V1 naming, so a caller that already wrote
    fragments for it passes the ``location`` it got from ``ns.table_location`` and wrote to.
    A commit built on a version (``read_version`` > 0) of a table that exists needs no listing of
    its ``_versions/``: Lance's commit lists the versions after the read version itself."""
    ns = manager._ctx
    try:
        known = read_version is not None and read_version > 0
        table = ns.resolve_table(
            ids.validate(table_id, what="table", allow_root=False), list_versions=not known
        )
    except errors.TableNotFoundError:
        table_id = ids.validate(table_id, what="table", allow_root=False)
        if ns.manifest_enabled and ns.manifest.get(ids.object_id(table_id)) is not None:
            raise errors.TableAlreadyExistsError(
                f"{ids.display(table_id)} is a namespace or a view, not a table"
            ) from None
        table = ResolvedTable(list(table_id), location or ns.table_location(table_id), False, True)
        if not ns.manifest_enabled:
            return table, None  # V1: the ``<name>.lance`` directory itself is the registration
        row = {
            "object_id": ids.object_id(table_id),
            "object_type": "table",
            "location": layout.relative_location(ns.fs, table.location),
            "metadata": None,
            "base_objects": None,
        }
        return table, row
    if location is not None and location.rstrip("/") != table.location.rstrip("/"):
        raise errors.InvalidInputError(
            f"table {ids.display(table.id)} lives at {table.location}, not at {location}"
        )
    return table, None


def _read_version(manager: VersionManager, table: ResolvedTable, read_version: int | None) -> int:
    """The version the transaction is built on: the caller's, or the latest (0 for a new table)."""
    if read_version is not None:
        return read_version
    if table.declared_only:
        return 0
    try:
        return manager._ctx.open_dataset(table.location).version
    except ValueError:
        return 0


@dataclass(frozen=True)
class CommitRequest:
    """One commit's arguments, checked (13 naming the argument) before anything is written."""

    table_id: list[str]
    operation: lance.LanceOperation.BaseOperation
    read_version: int | None
    properties: dict[str, str]
    location: str | None
    branch: str | None = None
    """A Lance branch of the table (``branches.py``; None: main): the commit lands there,
    ``read_version`` is a version of the branch, and ``location`` (if given) the branch's."""

    @classmethod
    def of(
        cls,
        table_id: Sequence[str],
        operation: object,
        read_version: int | None,
        transaction_properties: Mapping[str, object] | None,
        location: str | None,
        branch: str | None = None,
    ) -> CommitRequest:
        if not isinstance(operation, lance.LanceOperation.BaseOperation):
            raise errors.InvalidInputError(f"operation must be a lance.LanceOperation, got {operation!r}")
        if read_version is not None:
            ids.validate_version(read_version, "read_version")
        if location is not None and (not isinstance(location, str) or not location):
            raise errors.InvalidInputError(f"location must be a non-empty string or None, got {location!r}")
        properties = props.string_dict(transaction_properties, "transaction_properties")
        return cls(
            ids.validate(table_id, what="table", allow_root=False),
            operation,
            read_version,
            properties,
            location,
            branches.branch_or_main(branch),
        )


@dataclass(frozen=True)
class _Committed:
    version: int
    store: _VersionStore | None
    table: ResolvedTable
    table_row: Row | None
    transaction_uuid: str


def _base(
    manager: VersionManager, table: ResolvedTable, read_version: int, managed: bool
) -> str | lance.LanceDataset:
    """What Lance commits on: on an object store, in file-based mode, the dataset at
    ``read_version`` (served by the engine's cache of opened versions when this process opened or
    committed it: an immutable version), which spares Lance's commit its own open of the latest
    version (a LIST and a GET). Lance still lists the versions after ``read_version`` before its
    conditional put, so a concurrent commit is detected exactly as with the location."""
    ctx = manager._ctx
    if managed or read_version == 0 or table.declared_only or not ctx.fs.lists_in_order:
        return table.location
    try:
        return ctx.open_dataset(table.location, read_version)
    except (OSError, ValueError):
        return table.location  # Lance's own open reports what is wrong


def _commit(manager: VersionManager, request: CommitRequest, stage_only: bool) -> _Committed:
    # One __manifest version for the target and the mode (a request each on S3). Stale planning
    # is safe here: the Lance commit is conditional on the read version, and a new table's row is
    # inserted by a commit that plans against the latest version again on any conflict.
    with manager._ctx.manifest.snapshot():
        on_main = request.location if request.branch is None else None
        try:
            table, table_row = _target(manager, request.table_id, on_main, request.read_version)
        except errors.NamespaceNotFoundError:
            if request.branch is None:
                raise
            # a table in a namespace only the branch has (branch_objects.py): commit_target finds it
            table, table_row = ResolvedTable(request.table_id, "", False, True), {}
        managed = stage_only or manager.management_enabled()
    if request.branch is not None:  # never staged: stage_table_commit takes no branch
        table = branches.commit_target(
            manager._ctx, table, table_row is not None, request.branch, request.location
        )
        table_row, managed = None, False  # a branch's table gets no row on main
    transaction = lance.Transaction(
        _read_version(manager, table, request.read_version),
        request.operation,
        transaction_properties=request.properties,
    )
    store = _VersionStore(manager, table, request.properties, table_row, stage_only) if managed else None
    hook: dict[str, Any] = {}
    if store is not None:
        hook = {"namespace_client": store, "table_id": table.id, "namespace_client_managed_versioning": True}
    try:
        dataset = lance.LanceDataset.commit(
            _base(manager, table, transaction.read_version, managed),
            transaction,
            storage_options=manager._ctx.storage_options,
            **hook,
        )
    except CommitConflictError as exc:
        raise errors.ConcurrentModificationError(
            f"table {ids.display(table.id)}: another writer committed a conflicting change since "
            f"version {transaction.read_version}, which this commit was built on; nothing of this "
            f"commit landed: run it again (Lance: {exc})"
        ) from exc
    except OSError as exc:
        if store is not None and store.error is not None:
            raise store.error from exc
        raise
    if store is None:
        manager._ctx.remember(table.location, dataset)
    return _Committed(int(dataset.version), store, table, table_row, transaction.uuid)


def commit_table(manager: VersionManager, request: CommitRequest) -> int:
    """Commit the request's operation and return the new version.

    A new table is registered after its data is committed in file-based mode (a crash in between
    leaves an unregistered directory, invisible to the namespace) and in the same ``__manifest``
    commit as its first version row in management mode."""
    done = _commit(manager, request, stage_only=False)
    if done.store is None and done.table_row is not None:
        try:
            manager._ctx.manifest.insert([done.table_row])
        except errors.DuplicateObjectIdError as exc:
            raise errors.ConcurrentModificationError(
                f"table {ids.display(done.table.id)} was registered concurrently while its first commit ran"
            ) from exc
    return done.version


def restore_table(manager: VersionManager, table_id: Sequence[str], version: int) -> int:
    """Commit a Lance Restore: the new version's content equals ``version`` (11 if it is missing)."""
    latest = manager.describe_table_version(table_id)
    manager.describe_table_version(table_id, version)
    request = CommitRequest.of(table_id, lance.LanceOperation.Restore(version), latest.version, None, None)
    return commit_table(manager, request)


def stage_table_commit(manager: VersionManager, request: CommitRequest) -> StagedCommit:
    """Write a version's data and manifest without making it visible (table version management only).

    The staged manifest is neither a finalized file in ``_versions/`` nor a ``__manifest`` row, so
    readers see the previous version until ``publish``. One staged commit per table per publish:
    a second stage on the same table would be built on a version nobody can see yet."""
    if not manager.management_enabled():
        raise errors.UnsupportedOperationError(
            "staged commits need table_version_management=true in the __manifest metadata"
        )
    done = _commit(manager, request, stage_only=True)
    assert done.store is not None and done.store.staged is not None, (
        "Lance committed without the version store"
    )
    return replace(done.store.staged, transaction_uuid=done.transaction_uuid)


def stage_next_commit(
    manager: VersionManager,
    prior: StagedCommit,
    operation: lance.LanceOperation.BaseOperation,
    properties: dict[str, str],
) -> StagedCommit:
    """Stage ``operation`` as the version after ``prior``, a staged version nobody sees yet.

    Lance cannot build a transaction on a staged manifest in place: whatever resolves a version
    to a staging file makes Lance finalize it, which would publish it early. So the transaction is
    committed in a private local directory that holds only ``prior``'s manifest under its final
    name (a commit reads the manifest, never the data files), and the new manifest and transaction
    file are copied back to the table: the manifest under a staging name, like every staged commit.
    ``publish`` then makes ``prior`` and this version visible in the same ``__manifest`` commit."""
    if not manager.management_enabled():
        raise errors.UnsupportedOperationError(
            "staged commits need table_version_management=true in the __manifest metadata"
        )
    fs = manager._ctx.fs
    with tempfile.TemporaryDirectory(prefix="lancens-chain-") as work:
        versions = os.path.join(work, VERSIONS_DIR)
        os.makedirs(versions)
        with open(os.path.join(versions, layout.manifest_name(prior.version)), "wb") as base:
            base.write(fs.read_bytes(prior.manifest_path))
        if isinstance(operation, lance.LanceOperation.CreateIndex):
            _check_index_fragments(lance.dataset(work, version=prior.version), operation, prior)
        transaction = lance.Transaction(prior.version, operation, transaction_properties=properties)
        version = int(lance.LanceDataset.commit(work, transaction).version)
        name = layout.manifest_name(version)
        staging = f"{prior.location.rstrip('/')}/{VERSIONS_DIR}/{name}-{uuid.uuid4()}"
        with open(os.path.join(versions, name), "rb") as manifest:
            fs.put_if_not_exists(staging, manifest.read())
        transactions = os.path.join(work, TRANSACTIONS_DIR)
        for file_name in os.listdir(transactions) if os.path.isdir(transactions) else ():
            with open(os.path.join(transactions, file_name), "rb") as transaction_file:
                fs.write_bytes(
                    f"{prior.location.rstrip('/')}/{TRANSACTIONS_DIR}/{file_name}", transaction_file.read()
                )
    return StagedCommit(
        list(prior.id), version, staging, prior.location, dict(properties), None, transaction.uuid
    )


def _check_index_fragments(
    base: lance.LanceDataset, operation: lance.LanceOperation.CreateIndex, prior: StagedCommit
) -> None:
    """An index built elsewhere (on a readable copy of the staged version) must cover fragments
    the staged version has: an index of other fragment ids would answer for rows that are not there."""
    present = {fragment.fragment_id for fragment in base.get_fragments()}
    for index in operation.new_indices:
        covered = set(index.fragment_ids or ())
        if not covered <= present:
            raise errors.InvalidInputError(
                f"index {index.name!r} covers fragments {sorted(covered - present)} that version "
                f"{prior.version} of {ids.display(prior.id)} does not have"
            )


def publish(
    manager: VersionManager,
    staged: Sequence[StagedCommit],
    new_rows: Sequence[Row] = (),
    replaced_rows: Sequence[Row] = (),
) -> dict[tuple[str, ...], int]:
    """Make staged versions visible in ONE ``__manifest`` commit (BatchCreateTableVersions).

    ``new_rows`` and ``replaced_rows`` (views, `view_ops.publish_rows`) are inserted and rewritten
    in that same commit, so a view appears together with the tables it reads.

    A table may have a chain of staged versions (``stage_next_commit``): consecutive versions, the
    first of which may create the table. Returns each table's last new version. If any of those
    versions was meanwhile committed by someone else, nothing is published and
    TableVersionAlreadyExists (12) is raised; the staged files stay for the caller to discard."""
    chains: dict[tuple[str, ...], list[StagedCommit]] = {}
    for commit in staged:
        chains.setdefault(tuple(commit.id), []).append(commit)
    tables: dict[tuple[str, ...], ResolvedTable] = {}
    for key, chain in chains.items():
        _check_chain(key, chain)
        first = chain[0]
        tables[key] = (
            ResolvedTable(list(first.id), first.location, in_manifest=True, declared_only=False)
            if first.table_row
            else manager._table(first.id)
        )
    ordered = [commit for chain in chains.values() for commit in chain]
    entries = [VersionEntry(list(s.id), s.version, s.manifest_path, "V2", dict(s.metadata)) for s in ordered]
    rows = [s.table_row for s in ordered if s.table_row] + list(new_rows)
    created = manager._commit_managed(
        entries, [tables[tuple(s.id)] for s in ordered], new_table_rows=rows, replaced_rows=replaced_rows
    )
    return {tuple(s.id): version.version for s, version in zip(ordered, created, strict=True)}


def _check_chain(key: tuple[str, ...], chain: list[StagedCommit]) -> None:
    """Several staged versions of one table must follow each other, and only the first may be the
    one that creates the table."""
    versions = [commit.version for commit in chain]
    if versions != list(range(versions[0], versions[0] + len(versions))):
        raise errors.InvalidInputError(
            f"publish: the staged versions of {ids.display(list(key))} are not consecutive: {versions}"
        )
    if any(commit.table_row for commit in chain[1:]):
        raise errors.InvalidInputError(
            f"publish: only the first staged version of {ids.display(list(key))} can create it"
        )
