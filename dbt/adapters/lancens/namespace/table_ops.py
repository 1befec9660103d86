"""Table operations: declare, create, list, describe, register, deregister, drop, rename.

Each follows spec 002 step by step, including its error codes where native departs (parent
namespace checks, V1 fallback in compatibility mode); docs/namespace-engine.md lists every such
difference. Every ``__manifest`` change is one planned commit (manifest.py), so of concurrent
writers on one table exactly one wins.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

import lance
import pyarrow as pa

from dbt.adapters.lancens.namespace import commit, datasets, errors, ids, kinds, layout, props
from dbt.adapters.lancens.namespace.context import NamespaceContext
from dbt.adapters.lancens.namespace.datasets import TableData
from dbt.adapters.lancens.namespace.manifest import ManifestChange, ManifestView, Plan, parent_guard
from dbt.adapters.lancens.namespace.models import Page, ResolvedTable, TableInfo
from dbt.adapters.lancens.namespace.relocate import cloned_from, move_table_dir, undo_move
from dbt.adapters.lancens.namespace.storage import Storage
from dbt.adapters.lancens.namespace.versions import VersionManager, is_finished, pause_point, version_rows


def _already_exists(table_id: list[str], concurrent: bool) -> errors.NamespaceError:
    if concurrent:
        return errors.ConcurrentModificationError(f"table {ids.display(table_id)} was created concurrently")
    return errors.TableAlreadyExistsError(f"table {ids.display(table_id)} already exists")


def _table_properties(table_id: list[str], properties: Mapping[str, object] | None) -> dict[str, str]:
    """Properties as strings; the view marker keys are refused (they would make the table a view)."""
    values = props.string_dict(properties)
    reserved = kinds.reserved_keys(values)
    if reserved:
        raise errors.InvalidInputError(f"table {ids.display(table_id)}: properties {reserved} are reserved")
    return values


def _nullable_strings(values: Mapping[str, object | None]) -> dict[str, str | None]:
    return {str(key): None if value is None else str(value) for key, value in values.items()}


def metadata_update(
    dataset: lance.LanceDataset,
    table_metadata: Mapping[str, str | None] | None,
    field_metadata: Mapping[str, Mapping[str, str | None]] | None,
    table_name: str,
) -> lance.LanceOperation.UpdateConfig:
    """The ``UpdateConfig`` transaction that changes ``dataset``'s table and field metadata (keys
    merged, None removes one; fields by column name, dotted for nested ones; 13 for an unknown
    column). Public so a caller staging it on a version of its own builds the same transaction."""
    field_updates = {}
    for name, values in (field_metadata or {}).items():
        lance_field = dataset.lance_schema.field(name)
        if lance_field is None:
            raise errors.InvalidInputError(f"table {table_name} has no column {name!r}")
        field_updates[lance_field.id()] = lance.LanceOperation.UpdateMap(_nullable_strings(values))
    return lance.LanceOperation.UpdateConfig(
        table_metadata_updates=(
            lance.LanceOperation.UpdateMap(_nullable_strings(table_metadata)) if table_metadata else None
        ),
        field_metadata_updates=field_updates or None,
    )


def _version_row_ids(view: ManifestView, table_id: list[str]) -> list[str]:
    """The ``table_version`` rows of a table (deleted, dropped or renamed together with it)."""
    oid = ids.object_id(table_id)
    return [f"{oid}{ids.DELIMITER}{version}" for version in view.children(oid, kinds.TABLE_VERSION)]


def _still_there(fs: Storage, view: ManifestView, resolved: ResolvedTable) -> dict[str, Any]:
    """The table's row in ``view``, unchanged since ``resolved`` was looked up; 4 when another
    writer dropped, deregistered or renamed it meanwhile (it lost the race for this table)."""
    row = view.get(ids.object_id(resolved.id))
    if (
        row is None
        or kinds.object_kind(row) != kinds.TABLE
        or layout.absolute_location(fs, row["location"]) != resolved.location
    ):
        raise errors.TableNotFoundError(
            f"table {ids.display(resolved.id)} not found: dropped, deregistered or renamed concurrently"
        )
    return row


def _refuse_unfinished(view: ManifestView, resolved: ResolvedTable) -> None:
    """14 while a version of the table is committed but not finished (its row points at a staged
    manifest): dropping the row now would lose that version. The callers settle the table first,
    so what is left is a commit running right now."""
    unfinished = sorted(v for v, meta in version_rows(view, resolved.id).items() if not is_finished(v, meta))
    if unfinished:
        raise errors.ConcurrentModificationError(
            f"table {ids.display(resolved.id)}: version {unfinished[0]} is being committed; retry"
        )


def _removal_plan(fs: Storage, resolved: ResolvedTable, keep_versions: bool) -> Plan:
    """Delete the table's row and its version rows, exactly once (drop and deregister). A
    deregister keeps the table's files, so it must not forget a version in the middle of its
    commit (``keep_versions``); a drop deletes them all anyway."""

    def plan(view: ManifestView, concurrent: bool) -> ManifestChange:
        _still_there(fs, view, resolved)
        if keep_versions:
            _refuse_unfinished(view, resolved)
        return ManifestChange(delete=[ids.object_id(resolved.id), *_version_row_ids(view, resolved.id)])

    return plan


def _owner_of(fs: Storage, view: ManifestView, location: str) -> str | None:
    """The object id of the table or view whose directory ``location`` is, if any."""
    for object_id, row in view.by_id.items():
        if (
            kinds.object_kind(row) in (kinds.TABLE, kinds.VIEW)
            and row["location"]
            and layout.absolute_location(fs, row["location"]).rstrip("/") == location
        ):
            return object_id
    return None


def reserve(fs: Storage, object_id: list[str], location: str) -> None:
    """Write ``.lance-reserved`` with put-if-not-exists; an existing marker means a racer (14)."""
    try:
        fs.put_if_not_exists(layout.marker_path(location, layout.RESERVED_MARKER), layout.MARKER_CONTENT)
    except FileExistsError as exc:
        raise _already_exists(object_id, concurrent=True) from exc


def release(fs: Storage, location: str) -> None:
    """Undo ``reserve`` after losing the row insert: the marker, then the directory if now empty
    (a random ``<hash>_`` directory would otherwise stay behind as an orphan)."""
    fs.rm(layout.marker_path(location, layout.RESERVED_MARKER))
    if not fs.has_files(location):
        try:
            fs.rm(location, recursive=True)
        except FileNotFoundError:
            pass  # object stores have no directories


class TableOps:
    """Operations on tables (DeclareTable .. RenameTable), on the shared ``NamespaceContext``;
    commits of table data go through the ``VersionManager``."""

    def __init__(self, context: NamespaceContext, versions: VersionManager) -> None:
        self._ctx = context
        self._versions = versions

    # ------------------------------------------------------------------ helpers
    def _check_creatable(self, table_id: list[str], registering: bool = False) -> ResolvedTable | None:
        """Validate the parent and return the declared-only table to fill, or raise 5 if taken (for
        a new table also by a deregistered table's data in its ``<name>.lance``, which registering
        brings back)."""
        if len(table_id) > 1 and not self._ctx.manifest_enabled:
            raise errors.UnsupportedOperationError("tables in child namespaces need manifest_enabled=true")
        with self._ctx.manifest.snapshot():  # one __manifest open for all the lookups below
            try:
                resolved = self._ctx.resolve_table(table_id)  # checks the parent namespace too
            except errors.TableNotFoundError:
                resolved = None
            if resolved is not None and not resolved.declared_only:
                raise _already_exists(table_id, concurrent=False)
            if (
                resolved is None
                and self._ctx.manifest_enabled
                and self._ctx.manifest.get(ids.object_id(table_id))
            ):
                raise _already_exists(table_id, concurrent=False)  # the id is a namespace or view
        if resolved is None and not registering and self._ctx.uses_v1_naming(table_id):
            location = self._ctx.v1_location(table_id[0])
            if layout.has_versions(self._ctx.fs, location):
                raise errors.TableAlreadyExistsError(
                    f"table {ids.display(table_id)}: a deregistered table's data is at {location}; "
                    "register_table or drop_table it first"
                )
        return resolved

    def _table_info(self, resolved: ResolvedTable, version: int | None = None) -> TableInfo:
        row = self._ctx.table_row(resolved.id)
        properties = props.loads(row["metadata"]) if row else {}
        table_id = resolved.id
        if resolved.declared_only:
            if version is not None:
                raise errors.TableVersionNotFoundError(
                    f"table {ids.display(table_id)} is declared only and has no version {version}"
                )
            return TableInfo(
                table_id, table_id[-1], table_id[:-1], resolved.location, None, None, properties, True
            )
        try:
            wanted = resolved.latest if version is None else version
            dataset = self._ctx.open_dataset(resolved.location, wanted)
        except (ValueError, OSError) as exc:
            if version is not None and "not found" in str(exc).lower():
                raise errors.TableVersionNotFoundError(
                    f"table {ids.display(table_id)} has no version {version}"
                ) from exc
            raise errors.InternalError(f"cannot open table {ids.display(table_id)}: {exc}") from exc
        merged = {**dict(dataset.metadata), **properties}
        return TableInfo(
            table_id,
            table_id[-1],
            table_id[:-1],
            resolved.location,
            dataset.version,
            dataset.schema,
            merged,
            False,
        )

    def _write_data(
        self, table_id: list[str], location: str, data: TableData, properties: dict[str, str]
    ) -> lance.LanceDataset:
        """Version 1 at ``location``, exactly once (14 when a racing creator won); properties make
        version 2."""
        try:
            dataset = datasets.create(
                self._ctx.fs, location, data, self._ctx.lance_options, self._ctx.session
            )
        except datasets.DatasetExistsError as exc:
            raise _already_exists(table_id, concurrent=True) from exc
        if properties:
            dataset.update_metadata(dict(properties))
        return self._ctx.keep(location, dataset)

    def _fill_declared(self, resolved: ResolvedTable, metadata: str | None) -> None:
        """Record a created table's properties on the row its declaration left (4 if it is gone)."""

        def plan(view: ManifestView, concurrent: bool) -> ManifestChange | None:
            row = _still_there(self._ctx.fs, view, resolved)
            return (
                None
                if row["metadata"] == metadata
                else ManifestChange(replace=[{**row, "metadata": metadata}])
            )

        self._ctx.manifest.commit(plan)

    # --------------------------------------------------------------- operations
    def declare_table(self, id: Sequence[str], location: str | None = None) -> TableInfo:
        """Reserve the name: write ``.lance-reserved`` at the location, then the manifest row."""
        table_id = ids.validate(id, what="table", allow_root=False)
        if location is not None and (not isinstance(location, str) or not location):
            raise errors.InvalidInputError(f"location must be a non-empty string or None, got {location!r}")
        if self._check_creatable(table_id) is not None:
            raise _already_exists(table_id, concurrent=False)
        target = self._ctx.new_location(table_id)
        if location is not None and layout.absolute_location(self._ctx.fs, location) != target:
            # Spec 002 determines the location, and native refuses any other (13). Taking one would
            # let drop_table delete a directory the table never owned (outside the root, __manifest).
            raise errors.InvalidInputError(
                f"declare_table {ids.display(table_id)}: location {location!r} is not where the table "
                f"must live ({target}); leave location out"
            )
        reserve(self._ctx.fs, table_id, target)
        if self._ctx.manifest_enabled:
            row = {
                "object_id": ids.object_id(table_id),
                "object_type": kinds.TABLE,
                "location": layout.relative_location(self._ctx.fs, target),
            }
            try:
                self._ctx.manifest.insert([row])
            except errors.DuplicateObjectIdError as exc:
                release(self._ctx.fs, target)
                raise _already_exists(table_id, exc.concurrent) from exc
            except errors.NamespaceNotFoundError:
                release(self._ctx.fs, target)
                raise
        return TableInfo(table_id, table_id[-1], table_id[:-1], target, None, None, {}, True)

    def create_table(
        self, id: Sequence[str], data: TableData, properties: Mapping[str, object] | None = None
    ) -> TableInfo:
        """Write the dataset (data first, like native), then claim the id in the manifest.

        Properties go to both the Lance table metadata (spec) and the manifest ``metadata`` column
        (where native reads them); with properties the new table is at version 2.
        """
        table_id = ids.validate(id, what="table", allow_root=False)
        if not isinstance(data, pa.Table | pa.RecordBatchReader):
            raise errors.InvalidInputError(
                f"data must be a pyarrow Table or RecordBatchReader, got {type(data).__name__}"
            )
        values = _table_properties(table_id, properties)
        with self._ctx.manifest.snapshot():  # the checks and the registration plan on one version
            dataset, location = self._create_registered(table_id, data, values)
        return TableInfo(
            table_id,
            table_id[-1],
            table_id[:-1],
            location,
            dataset.version,
            dataset.schema,
            {**dict(dataset.metadata), **values},
            False,
        )

    def _create_registered(
        self, table_id: list[str], data: TableData, values: dict[str, str]
    ) -> tuple[lance.LanceDataset, str]:
        declared = self._check_creatable(table_id)
        location = declared.location if declared else self._ctx.new_location(table_id)
        dataset = self._write_data(table_id, location, data, values)
        if self._ctx.manifest_enabled:
            row = {
                "object_id": ids.object_id(table_id),
                "object_type": "table",
                "location": layout.relative_location(self._ctx.fs, location),
                "metadata": props.dumps(values),
            }
            try:
                if declared is not None and declared.in_manifest:
                    self._fill_declared(declared, row["metadata"])
                else:
                    self._ctx.manifest.insert([row])
            except (
                errors.DuplicateObjectIdError,
                errors.TableNotFoundError,
                errors.NamespaceNotFoundError,
            ) as exc:
                # The registration lost: the dataset this call created must not stay behind (a
                # reservation marker in the directory, someone else's, is kept).
                datasets.remove_created(self._ctx.fs, location)
                if isinstance(exc, errors.NamespaceNotFoundError):
                    raise
                if isinstance(exc, errors.TableNotFoundError):
                    raise errors.ConcurrentModificationError(
                        f"table {ids.display(table_id)} was dropped or renamed while it was being created"
                    ) from exc
                raise _already_exists(table_id, exc.concurrent) from exc
        return dataset, location

    def list_tables(
        self, namespace_id: Sequence[str] = (), page_token: str | None = None, limit: int | None = None
    ) -> Page:
        """Manifest tables; at the root with listing on, merged with V1 dirs (manifest wins)."""
        v1_names = self._v1_only_names if self._ctx.dir_listing_enabled else None
        return self._ctx.children_page(namespace_id, kinds.TABLE, page_token, limit, root_extra=v1_names)

    def _v1_only_names(self) -> list[str]:
        """Root ``<name>.lance`` tables the manifest does not know: not at a location a row points
        at, and not named like any manifest object (a namespace ``foo`` hides ``foo.lance``, so
        listing and ``table_exists`` agree)."""
        rows = self._ctx.manifest.by_id() if self._ctx.manifest_enabled else {}
        claimed = {
            layout.relative_location(self._ctx.fs, layout.absolute_location(self._ctx.fs, row["location"]))
            for row in rows.values()
            if row["object_type"] == kinds.TABLE and row["location"]
        }
        return [
            name
            for name in layout.v1_table_names(self._ctx.fs)
            if layout.v1_dir_name(name) not in claimed and name not in rows
        ]

    def describe_table(self, id: Sequence[str], version: int | None = None) -> TableInfo:
        """The table as of ``version`` (latest when None); 11 for a missing version.

        Under table version management this goes through the version API first, so a commit whose
        writer stopped after its row insert is finished before the dataset is opened."""
        if version is not None:
            ids.validate_version(version)
        with self._ctx.manifest.snapshot():  # one __manifest open for every lookup below
            return self._table_info(self._resolve_settled(id), version)

    def _resolve_settled(self, table_id: Sequence[str]) -> ResolvedTable:
        """``_resolve_table``, plus (table version management) finishing interrupted commits."""
        resolved = self._ctx.resolve_table(table_id)
        if resolved.in_manifest and self._versions.management_enabled():
            resolved = self._versions.settle(resolved)
        return resolved

    def update_table_metadata(
        self,
        id: Sequence[str],
        table_metadata: Mapping[str, str | None] | None = None,
        field_metadata: Mapping[str, Mapping[str, str | None]] | None = None,
    ) -> int:
        """Change Lance table metadata and field metadata in ONE new version; returns it.

        For persist_docs: one ``UpdateConfig`` transaction through ``commit_table``, so it takes the
        same path as data commits (the four steps under table version management) and is rebased or
        refused (14) like them. Keys are merged; a None value removes the key. ``field_metadata`` is
        keyed by column name (dotted for nested fields); an unknown column is 13, and so is a
        declared-only table (it has no Lance table to hold metadata yet)."""
        resolved = self._resolve_settled(id)
        if resolved.declared_only:
            raise errors.InvalidInputError(f"table {ids.display(resolved.id)} is declared only: no metadata")
        dataset = self._ctx.open_dataset(resolved.location)
        operation = metadata_update(dataset, table_metadata, field_metadata, ids.display(resolved.id))
        request = commit.CommitRequest.of(resolved.id, operation, dataset.version, None, None)
        return commit.commit_table(self._versions, request)

    def set_table_properties(self, id: Sequence[str], properties: Mapping[str, object]) -> TableInfo:
        """Set (merge) table properties where ``create_table`` writes them: the Lance table metadata
        (one new version, via ``update_table_metadata``) and the manifest ``metadata`` column (where
        native reads them). A declared-only table has only the column."""
        resolved = self._ctx.resolve_table(id)
        values = _table_properties(resolved.id, properties)
        if not resolved.in_manifest and resolved.declared_only:
            raise errors.UnsupportedOperationError(
                f"table {ids.display(resolved.id)}: a declared-only table without a manifest row has "
                "nowhere to keep properties"
            )
        if not resolved.declared_only:
            self.update_table_metadata(resolved.id, values)
        if resolved.in_manifest:

            def plan(view: ManifestView, concurrent: bool) -> ManifestChange:
                row = _still_there(self._ctx.fs, view, resolved)
                merged = {**props.loads(row["metadata"]), **values}
                return ManifestChange(replace=[{**row, "metadata": props.dumps(merged)}])

            self._ctx.manifest.commit(plan)
        return self.describe_table(resolved.id)

    def register_table(self, id: Sequence[str], location: str) -> TableInfo:
        """Add an existing Lance table at ``location`` (under the root) to the manifest."""
        table_id = ids.validate(id, what="table", allow_root=False)
        self._ctx.require_namespace(table_id[:-1])
        target = self._registrable_location(table_id, location)
        if self._check_creatable(table_id, registering=True) is not None:
            raise _already_exists(table_id, concurrent=False)
        deregistered = layout.marker_path(target, layout.DEREGISTERED_MARKER)
        if self._ctx.manifest_enabled:
            row = {
                "object_id": ids.object_id(table_id),
                "object_type": "table",
                "location": layout.relative_location(self._ctx.fs, target),
            }

            def plan(view: ManifestView, concurrent: bool) -> ManifestChange:
                if view.get(row["object_id"]) is not None:
                    raise _already_exists(table_id, concurrent)
                owner = _owner_of(self._ctx.fs, view, target)
                if owner is not None:
                    # Two names for one directory: dropping either would delete the other's data.
                    raise errors.InvalidInputError(
                        f"register_table {ids.display(table_id)}: {location!r} is already the "
                        f"directory of {ids.display(ids.split(owner))}"
                    )
                return ManifestChange(insert=[row], guard=parent_guard(view, [row]))

            self._ctx.manifest.commit(plan)
        if self._ctx.fs.exists(deregistered):
            self._ctx.fs.rm(deregistered)
        return self._table_info(self._ctx.resolve_table(table_id))

    def _registrable_location(self, table_id: list[str], location: str) -> str:
        if not isinstance(location, str) or not location:
            raise errors.InvalidInputError(f"register_table {ids.display(table_id)}: location is required")
        if ".." in location.replace("\\", "/").split("/"):
            raise errors.InvalidInputError(f"register_table: path traversal in {location!r} is not allowed")
        given = layout.absolute_location(self._ctx.fs, location.rstrip("/"))
        relative = layout.relative_location(self._ctx.fs, given)
        if relative == given:
            raise errors.InvalidInputError(
                f"register_table: {location!r} is not under the root {self._ctx.root}"
            )
        relative = posixpath.normpath(relative)  # one spelling per directory: ./t.lance is t.lance
        if relative == "." or relative.split("/")[0] == ids.MANIFEST_NAME:
            raise errors.InvalidInputError(
                f"register_table: {location!r} is the root or the namespace's own {ids.MANIFEST_NAME}"
            )
        target = self._ctx.fs.join(relative)
        if not self._ctx.manifest_enabled and target != self._ctx.v1_location(table_id[-1]):
            raise errors.InvalidInputError(f"V1 tables live at <name>.lance; cannot register {location!r}")
        if not layout.has_versions(self._ctx.fs, target):
            raise errors.InvalidInputError(f"register_table: no Lance table at {location!r}")
        return target

    def deregister_table(self, id: Sequence[str]) -> TableInfo:
        """Forget the table, keep its files. Its row goes exactly once (a racing deregister, drop or
        rename of the same table makes this one 4); a directory that directory listing would show
        (a root ``*.lance`` one) also gets ``.lance-deregistered``, else the table would come straight
        back (native's behaviour), or a child table whose name ends in ``.lance`` would appear as a
        root table named after its hashed directory.

        The marker is written before the row goes: a caller that finds no row then also finds the
        directory hidden, so it cannot take the table for a V1 one and win a second time (with the
        row gone first, a racing deregister did, in the gap before the marker). If the row stays
        for another reason than a racer's win, the marker this call wrote is removed again."""
        resolved = self._resolve_settled(id)
        info = self._table_info(resolved)
        hidden = self._hide_from_listing(resolved)
        pause_point("deregister_hidden")
        if resolved.in_manifest:
            try:
                self._ctx.manifest.commit(_removal_plan(self._ctx.fs, resolved, keep_versions=True))
            except errors.TableNotFoundError:
                raise  # another caller forgot the table: its deregister needs the marker
            except BaseException:
                if hidden:
                    self._ctx.fs.rm(layout.marker_path(resolved.location, layout.DEREGISTERED_MARKER))
                raise
        return info

    def _hide_from_listing(self, resolved: ResolvedTable) -> bool:
        """Write ``.lance-deregistered`` in a directory that directory listing would show; whether
        this call wrote it. For a V1 table (no row) the marker is the claim: another caller's is 4."""
        listed = self._ctx.dir_listing_enabled and layout.listed_by_directory(self._ctx.fs, resolved.location)
        if not listed:
            return False
        try:
            self._ctx.fs.put_if_not_exists(
                layout.marker_path(resolved.location, layout.DEREGISTERED_MARKER), layout.MARKER_CONTENT
            )
        except FileExistsError as exc:
            if not resolved.in_manifest:
                raise errors.TableNotFoundError(f"table {ids.display(resolved.id)} not found") from exc
            return False
        return True

    def drop_table(self, id: Sequence[str]) -> TableInfo:
        """Remove the manifest row (and version rows) exactly once, then the directory.

        A V1 table (no row) has no commit point: its drop is the delete itself, so concurrent drops
        of one V1 table may all succeed (the table is gone either way). A deregistered V1 table is
        dropped too (spec 002: "DropTable still works on deregistered tables")."""
        table_id = ids.validate(id, what="table", allow_root=False)
        try:
            resolved = self._ctx.resolve_table(table_id)
        except errors.TableNotFoundError:
            resolved = self._deregistered_v1_table(table_id)
        info = TableInfo(
            resolved.id,
            resolved.id[-1],
            resolved.id[:-1],
            resolved.location,
            None,
            None,
            props.loads((self._ctx.table_row(resolved.id) or {}).get("metadata")),
            resolved.declared_only,
        )
        if resolved.in_manifest:
            self._ctx.manifest.commit(_removal_plan(self._ctx.fs, resolved, keep_versions=False))
        try:
            for directory in [resolved.location, *cloned_from(self._ctx, resolved)]:
                self._ctx.fs.rm_tree(directory)
        except PermissionError as exc:
            raise errors.PermissionDeniedError(f"drop table {ids.display(resolved.id)}: {exc}") from exc
        if not resolved.in_manifest and self._ctx.fs.has_files(resolved.location):
            raise errors.InternalError(f"drop table {ids.display(resolved.id)}: files remain, retry the drop")
        return info

    def _deregistered_v1_table(self, table_id: list[str]) -> ResolvedTable:
        """A root ``<name>.lance`` directory holding ``.lance-deregistered`` and no manifest row of
        that id: what DropTable may still remove. 4 when there is none."""
        location = self._ctx.v1_location(table_id[0]) if len(table_id) == 1 else ""
        if (
            not location
            or not (self._ctx.dir_listing_enabled or not self._ctx.manifest_enabled)
            or (self._ctx.manifest_enabled and self._ctx.manifest.get(ids.object_id(table_id)) is not None)
            or not self._ctx.fs.exists(layout.marker_path(location, layout.DEREGISTERED_MARKER))
        ):
            raise errors.TableNotFoundError(f"table {ids.display(table_id)} not found")
        return ResolvedTable(table_id, location, False, not self._ctx.has_data(location))

    def rename_table(self, id: Sequence[str], new_id: Sequence[str]) -> TableInfo:
        """Give a table a new identifier; a root ``<name>.lance`` table moves to V2 naming (spec).

        One ``__manifest`` commit inserts the new row and deletes the old one (and its version rows),
        so of concurrent renames, drops or deregisters of the table exactly one succeeds; a moved
        directory is the claim for a root table (see relocate) and is moved back if the commit
        loses. The data is not copied.
        """
        if not self._ctx.manifest_enabled:
            raise errors.UnsupportedOperationError("rename_table needs manifest_enabled=true")
        resolved = self._resolve_settled(id)
        target_id = ids.validate(new_id, what="table", allow_root=False, argument="new_id")
        if self._check_creatable(target_id) is not None:
            raise _already_exists(target_id, concurrent=False)
        row = dict(self._ctx.table_row(resolved.id) or {"object_type": "table", "metadata": None})
        location = resolved.location
        moved = self._ctx.dir_listing_enabled and location == self._ctx.v1_location(resolved.id[-1])
        if moved:
            try:
                location = move_table_dir(
                    self._ctx, location, self._ctx.fs.join(layout.v2_dir_name(target_id))
                )
            except (FileNotFoundError, FileExistsError) as exc:
                raise errors.TableNotFoundError(
                    f"table {ids.display(resolved.id)} not found: it was renamed or dropped concurrently"
                ) from exc
        new_oid = ids.object_id(target_id)
        row.update(object_id=new_oid, location=layout.relative_location(self._ctx.fs, location))

        def plan(view: ManifestView, concurrent: bool) -> ManifestChange:
            gone: list[str] = []
            if resolved.in_manifest:
                _still_there(self._ctx.fs, view, resolved)
                _refuse_unfinished(view, resolved)
                gone = [ids.object_id(resolved.id), *_version_row_ids(view, resolved.id)]
            if view.get(new_oid) is not None:
                raise _already_exists(target_id, concurrent)
            return ManifestChange(insert=[row], delete=gone, guard=parent_guard(view, [row]))

        try:
            self._ctx.manifest.commit(plan)
        except errors.NamespaceError:
            if moved:
                undo_move(self._ctx, resolved.location, location)
            raise
        return self._table_info(self._ctx.resolve_table(target_id))
