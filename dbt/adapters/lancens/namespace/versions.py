"""Table versions of the Directory Namespace (spec 002, CreateTableVersion .. BatchDeleteTableVersions).

Two modes, chosen per call from the ``__manifest`` table metadata:

* file based (default): a version is a manifest file in ``<table>/_versions/``; Lance itself is the
  source of truth and every operation reads or writes those files.
* table version management (``table_version_management = "true"`` in the ``__manifest`` metadata):
  the namespace is Lance's external manifest store. A version is committed by the spec's four steps
  (stage the manifest, merge-insert a ``table_version`` row, copy the manifest to ``_versions/``,
  point the row at the final file). The row insert is the commit point, so a writer killed after it
  leaves a row that points at a staging file; every reader that goes through this class (describe,
  list) finishes such a version before returning it.

Version rows store their manifest path relative to the table directory, like table rows store
locations relative to the root, so a relocated table keeps working. ``TableVersion.manifest_path``
is absolute (the table location joined with that relative path).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dbt.adapters.lancens.namespace import errors, ids
from dbt.adapters.lancens.namespace.context import NamespaceContext
from dbt.adapters.lancens.namespace.layout import VERSIONS_DIR, manifest_name, parse_manifest_name
from dbt.adapters.lancens.namespace.manifest import ManifestChange, ManifestView
from dbt.adapters.lancens.namespace.models import Page, ResolvedTable

TABLE_VERSION = "table_version"
TVM_KEY = "table_version_management"
CRASH_ENV = "LANCENS_PAUSE_AT_STEP"
"""Test hook: when it names a commit step, the process announces it and waits there to be killed.

Crash tests set it in a spawned child to prove what a SIGKILL between two steps leaves behind."""


_logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TableVersion:
    """One version of a table as the namespace reports it.

    ``metadata`` holds the version's own properties: the Lance transaction properties of the commit
    that made it (who made it: invocation id, model, tool version ...).
    """

    version: int
    manifest_path: str
    manifest_size: int | None
    e_tag: str | None
    timestamp_millis: int | None
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class VersionEntry:
    """One request of BatchCreateTableVersions (and the arguments of CreateTableVersion)."""

    id: list[str]
    version: int
    manifest_path: str
    naming_scheme: str = "V2"
    metadata: dict[str, str] = field(default_factory=dict)


def pause_point(step: str) -> None:
    """Crash-test hook (see CRASH_ENV): write ``<dir>/<step>`` and block this thread until killed.

    The value is ``<step>:<dir>``. Blocking (rather than exiting) lets the parent deliver a real
    SIGKILL at exactly this point; nothing after the pause point can run before the kill."""
    target = os.environ.get(CRASH_ENV)
    if not target or target.split(":", 1)[0] != step:
        return
    marker_dir = target.split(":", 1)[1]
    with open(os.path.join(marker_dir, step), "w") as marker:
        marker.write(str(os.getpid()))
    threading.Event().wait()


def _scheme(name: str) -> list[str]:
    parsed = parse_manifest_name(name)
    return [parsed[1]] if parsed else []


def _unfinished_version(table: ResolvedTable, version: int, meta: dict[str, Any]) -> TableVersion:
    """A committed version as its row describes it before it is finished (the staged manifest)."""
    return TableVersion(
        version,
        _join(table.location, meta["manifest_path"]),
        meta.get("manifest_size"),
        meta.get("e_tag"),
        meta.get("timestamp_millis"),
        dict(meta.get("metadata") or {}),
    )


def _join(location: str, *parts: str) -> str:
    return "/".join([location.rstrip("/"), *parts])


def _stats(info: dict[str, Any]) -> tuple[int | None, str | None, int | None]:
    """(size, e_tag, timestamp_millis) from fsspec file info, across local files and object stores."""
    size = info.get("size")
    e_tag = info.get("ETag") or info.get("etag")
    mtime = info.get("mtime") or info.get("LastModified") or info.get("last_modified")
    millis: int | None = None
    if mtime is not None:
        seconds = mtime.timestamp() if hasattr(mtime, "timestamp") else float(mtime)
        millis = int(seconds * 1000)
    if e_tag is None and size is not None and millis is not None:
        # Local files have no entity tag; size and mtime change whenever the content does.
        e_tag = f'"{millis:x}-{size:x}"'
    return size, e_tag, millis


def is_finished(version: int, meta: dict[str, Any]) -> bool:
    """Whether a ``table_version`` row points at the version's final manifest (step 4 done)."""
    final = manifest_name(version, meta.get("naming_scheme", "V2"))
    return meta.get("manifest_path") == f"{VERSIONS_DIR}/{final}"


def version_rows(view: ManifestView, table_id: Sequence[str]) -> dict[int, dict[str, Any]]:
    """``table_version`` rows of one table in ``view``: version -> decoded metadata JSON."""
    oid = ids.object_id(table_id)
    found: dict[int, dict[str, Any]] = {}
    for suffix in view.children(oid, TABLE_VERSION):
        row = view.get(f"{oid}{ids.DELIMITER}{suffix}")
        if row is not None and suffix.isdigit():
            found[int(suffix)] = json.loads(row["metadata"] or "{}")
    return found


class VersionManager:
    """Version operations of one DirectoryNamespace (it delegates its version methods here; the
    commits themselves are in commit.py)."""

    def __init__(self, context: NamespaceContext) -> None:
        self._ctx = context

    # ----------------------------------------------------------------------------- mode and lookup
    def management_enabled(self) -> bool:
        """True when the ``__manifest`` metadata turns table version management on."""
        return self._ctx.manifest_enabled and self._ctx.manifest.metadata().get(TVM_KEY, "").lower() == "true"

    def management_known(self) -> bool:
        """``management_enabled`` as of the newest ``__manifest`` version this process read or
        committed (no request): the flag is never turned off, and a commit reads it again."""
        return (
            self._ctx.manifest_enabled
            and self._ctx.manifest.known_metadata().get(TVM_KEY, "").lower() == "true"
        )

    def _table(self, table_id: Sequence[str]) -> ResolvedTable:
        return self._ctx.resolve_table(ids.validate(table_id, what="table", allow_root=False))

    def _version_object_id(self, table_id: Sequence[str], version: int) -> str:
        return f"{ids.object_id(table_id)}{ids.DELIMITER}{version}"

    def _file_versions(self, location: str) -> dict[int, tuple[str, dict[str, Any]]]:
        """Finalized manifests in ``_versions/``: version -> (file name, fsspec info)."""
        found: dict[int, tuple[str, dict[str, Any]]] = {}
        for info in self._ctx.fs.ls(_join(location, VERSIONS_DIR)):
            name = info["name"].rstrip("/").rsplit("/", 1)[-1]
            parsed = parse_manifest_name(name)
            if parsed is not None:
                found[parsed[0]] = (name, info)
        return found

    def _rows(self, table_id: Sequence[str]) -> dict[int, dict[str, Any]]:
        """``table_version`` rows of one table at the latest manifest version."""
        return version_rows(self._ctx.manifest.current(), table_id)

    def _point_rows(self, rows: Sequence[dict[str, Any]]) -> None:
        """Step 4: replace the metadata of version rows still present (a row whose table was dropped
        meanwhile stays dropped), in one commit."""

        def plan(view: ManifestView, concurrent: bool) -> ManifestChange | None:
            present = [
                {**current, "metadata": row["metadata"]}
                for row in rows
                if (current := view.get(row["object_id"])) is not None
                and current["metadata"] != row["metadata"]
            ]
            return ManifestChange(replace=present) if present else None

        self._ctx.manifest.commit(plan)

    def _transaction_properties(self, location: str, versions: Sequence[int]) -> dict[int, dict[str, str]]:
        """Lance transaction properties of each version (read from its ``_transactions/*.txn``)."""
        if not versions:
            return {}
        dataset = self._ctx.open_dataset(location)
        found: dict[int, dict[str, str]] = {}
        for version in versions:
            try:
                transaction = dataset.read_transaction(version)
            except (OSError, ValueError):
                transaction = None  # the version's manifest or transaction file was deleted
            except TypeError:
                # pylance 14 cannot decode the index-remap transaction a compaction of an indexed
                # table commits (`RewrittenIndex.__init__() missing ... arguments`): no properties
                transaction = None
            found[version] = dict(transaction.transaction_properties or {}) if transaction else {}
        return found

    # ------------------------------------------------------------------------------------- listing
    def _all_versions(self, table: ResolvedTable) -> dict[int, TableVersion]:
        """Every version of a table, finishing managed versions whose finalize step never ran."""
        return self._version_state(table)[0]

    def _version_state(self, table: ResolvedTable) -> tuple[dict[int, TableVersion], set[int]]:
        """The table's versions, and the managed rows whose finalized manifest is gone.

        In management mode rows are authoritative, and finalized files without a row (versions
        written before management was turned on) are reported too, so turning it on for an existing
        table does not hide its history from readers nor from Lance's commit path. A finalized row
        whose manifest file no longer exists was removed by a tool that deletes manifests itself
        (Lance's ``cleanup_old_versions``): it is not a version any more, and
        ``batch_delete_table_versions`` deletes its row."""
        if table.declared_only:
            return {}, set()
        files = self._file_versions(table.location)
        rows = self._rows(table.id) if self.management_enabled() else {}
        versions: dict[int, TableVersion] = {}
        plain = [v for v in files if v not in rows]
        properties = self._transaction_properties(table.location, plain)
        for version in plain:
            name, info = files[version]
            size, e_tag, millis = _stats(info)
            versions[version] = TableVersion(
                version, _join(table.location, VERSIONS_DIR, name), size, e_tag, millis, properties[version]
            )
        gone: set[int] = set()
        for version, meta in rows.items():
            if version not in files and self._manifest_gone(table, version, meta):
                gone.add(version)
                continue
            versions[version] = self._finish(table, version, meta)
        return versions, gone

    def _manifest_gone(self, table: ResolvedTable, version: int, meta: dict[str, Any]) -> bool:
        """True for a finalized row whose manifest file does not exist.

        Asked again of the store rather than answered from the listing: a writer may have finalized
        the version between the listing and the row read."""
        final = f"{VERSIONS_DIR}/{manifest_name(version, meta.get('naming_scheme', 'V2'))}"
        return is_finished(version, meta) and not self._ctx.fs.exists(_join(table.location, final))

    def settle(self, table: ResolvedTable) -> ResolvedTable:
        """Finish the table's managed versions whose writer stopped after the row insert.

        ``describe_table`` calls this under table version management before it opens the dataset,
        so it (and plain Lance readers after it) see every committed version; a new table whose
        first commit stopped there is no longer declared-only. Finished rows cost nothing: only rows
        still pointing at a staging manifest are touched."""
        rows = self._rows(table.id)
        unfinished = [(version, meta) for version, meta in rows.items() if not is_finished(version, meta)]
        for version, meta in unfinished:
            self._finish(table, version, meta)
        if unfinished:  # the listing that named the latest version ran before these were finished
            table = replace(table, latest=None)
        if rows and table.declared_only:
            return replace(table, declared_only=False)
        return table

    def list_table_versions(
        self, id: Sequence[str], descending: bool, page_token: str | None, limit: int | None
    ) -> Page:
        """Versions sorted by number; ``page_token`` is the last version of the previous page."""
        ids.validate_page(page_token, limit)
        after = None
        if page_token is not None:
            if not page_token.isdigit():
                raise errors.InvalidInputError(f"page_token must be a version number, got {page_token!r}")
            after = ids.validate_version(int(page_token), "page_token")
        table = self._table(id)
        ordered = sorted(self._all_versions(table).values(), key=lambda v: v.version, reverse=descending)
        if after is not None:
            ordered = [v for v in ordered if (v.version < after if descending else v.version > after)]
        if limit is None or len(ordered) <= limit:
            return Page(ordered, None)
        page = ordered[:limit]
        return Page(page, str(page[-1].version) if page else None)

    def describe_table_version(self, id: Sequence[str], version: int | None = None) -> TableVersion:
        """One version (the latest when ``version`` is None); finishes an unfinished managed commit."""
        if version is not None:
            ids.validate_version(version)
        table = self._table(id)
        versions = self._all_versions(table)
        wanted = max(versions) if version is None and versions else version
        if wanted not in versions:
            what = "latest version" if version is None else f"version {version}"
            raise errors.TableVersionNotFoundError(f"table {ids.display(table.id)} has no {what}")
        return versions[wanted]

    # ------------------------------------------------------------------------------------ creating
    def _staging(self, table: ResolvedTable, manifest_path: str) -> tuple[str, dict[str, Any]]:
        """Absolute staging path and its info; InvalidInput (13) when it is not a readable file."""
        if not self._ctx.fs.exists(manifest_path):
            raise errors.InvalidInputError(f"staging manifest not found at {manifest_path}")
        return manifest_path, self._ctx.fs.info(manifest_path)

    def batch_create_table_versions(self, entries: Sequence[VersionEntry]) -> list[TableVersion]:
        """Create several versions; atomic across tables when version management is on.

        Every entry is checked first (13): a version in [0, 2^63-1], a ``naming_scheme`` of V1 or V2
        that matches how the table already names its versions (a mix would make Lance and
        ``list_table_versions`` disagree about which file is which version)."""
        for entry in entries:
            self._check_entry(entry)
        if not self.management_enabled():
            return [self._create_file_version(entry) for entry in entries]
        tables = [self._table(entry.id) for entry in entries]
        return self._commit_managed(entries, tables, new_table_rows=[])

    def _check_entry(self, entry: VersionEntry) -> None:
        ids.validate_version(entry.version)
        manifest_name(entry.version, entry.naming_scheme)  # 13 for an unknown scheme
        if not isinstance(entry.manifest_path, str) or not entry.manifest_path:
            raise errors.InvalidInputError(
                f"manifest_path must be a non-empty string, got {entry.manifest_path!r}"
            )
        table = self._table(entry.id)
        schemes = {
            scheme for name, _ in self._file_versions(table.location).values() for scheme in _scheme(name)
        }
        if schemes and entry.naming_scheme not in schemes:
            raise errors.InvalidInputError(
                f"naming_scheme: table {ids.display(table.id)} names its versions "
                f"{'/'.join(sorted(schemes))}, not {entry.naming_scheme!r}"
            )

    def _create_file_version(self, entry: VersionEntry) -> TableVersion:
        table = self._table(entry.id)
        staging, _ = self._staging(table, entry.manifest_path)
        name = manifest_name(entry.version, entry.naming_scheme)
        final = _join(table.location, VERSIONS_DIR, name)
        try:
            self._ctx.fs.put_if_not_exists(final, self._ctx.fs.read_bytes(staging))
        except FileExistsError as exc:
            raise errors.TableVersionAlreadyExistsError(
                f"table {ids.display(table.id)} already has version {entry.version}"
            ) from exc
        self._ctx.fs.rm(staging)
        size, e_tag, millis = _stats(self._ctx.fs.info(final))
        return TableVersion(entry.version, final, size, e_tag, millis, dict(entry.metadata))

    def _commit_managed(
        self,
        entries: Sequence[VersionEntry],
        tables: Sequence[ResolvedTable],
        new_table_rows: list[dict[str, Any]],
        replaced_rows: Sequence[dict[str, Any]] = (),
    ) -> list[TableVersion]:
        """The spec's steps 2-4 for staged manifests (step 1, staging, is the caller's).

        ``new_table_rows`` are ``table`` rows (new tables, new views) inserted in the same manifest
        commit as the version rows, so a table created by its first commit appears together with
        that version or not at all; ``replaced_rows`` (views whose body changes) are rewritten in
        that same commit."""
        rows = []
        for entry, table in zip(entries, tables, strict=True):
            staging, info = self._staging(table, entry.manifest_path)
            if self._ctx.fs.exists(_join(table.location, VERSIONS_DIR, manifest_name(entry.version))):
                raise errors.TableVersionAlreadyExistsError(
                    f"table {ids.display(table.id)} already has version {entry.version}"
                )
            size, e_tag, millis = _stats(info)
            meta = {
                "manifest_path": self._relative(table, staging),
                "manifest_size": size,
                "e_tag": e_tag,
                "timestamp_millis": millis,
                "naming_scheme": entry.naming_scheme,
                "metadata": dict(entry.metadata),
            }
            rows.append(self._row(table.id, entry.version, meta))
        pause_point("staged")
        try:
            self._ctx.manifest.insert(new_table_rows + rows, update=replaced_rows)
        except errors.DuplicateObjectIdError as exc:
            taken = [oid for oid in exc.object_ids if oid not in {r["object_id"] for r in new_table_rows}]
            if not taken:
                raise errors.ConcurrentModificationError(
                    f"tables {', '.join(exc.object_ids)} were created concurrently"
                ) from exc
            raise errors.TableVersionAlreadyExistsError(
                f"table versions already exist: {', '.join(taken)}"
            ) from exc
        pause_point("row_inserted")
        # The commit point has passed: the versions exist, and every namespace reader finishes a
        # version its writer did not (`_finish`). So a failure from here on (storage, a concurrent
        # `__manifest` change) is logged, never raised: a caller told the commit failed would
        # delete the files of a version that is committed.
        committed = [json.loads(row["metadata"]) for row in rows]
        versions = [
            _unfinished_version(table, entry.version, meta)
            for entry, table, meta in zip(entries, tables, committed, strict=True)
        ]
        try:
            finals = [
                self._finalize(t, e.version, meta)
                for e, t, meta in zip(entries, tables, committed, strict=True)
            ]
            versions = [version for version, _ in finals]
            pause_point("finalized")
            self._point_rows(
                [self._row(t.id, v.version, m) for t, (v, m) in zip(tables, finals, strict=True)]
            )
            pause_point("pointer_updated")
            for table, entry in zip(tables, entries, strict=True):
                self._remove_staging(table, entry.manifest_path)
        except Exception as exc:
            shown = ", ".join(
                f"{ids.display(t.id)} version {e.version}" for e, t in zip(entries, tables, strict=True)
            )
            _logger.warning("committed %s; finishing it is left to the next reader: %s", shown, exc)
        return versions

    def _row(self, table_id: Sequence[str], version: int, meta: dict[str, Any]) -> dict[str, Any]:
        return {
            "object_id": self._version_object_id(table_id, version),
            "object_type": TABLE_VERSION,
            "location": None,
            "metadata": json.dumps(meta, sort_keys=True, separators=(",", ":")),
            "base_objects": None,
        }

    def _relative(self, table: ResolvedTable, path: str) -> str:
        prefix = table.location.rstrip("/") + "/"
        if not path.startswith(prefix):
            raise errors.InvalidInputError(f"manifest {path} is not inside table location {table.location}")
        return path[len(prefix) :]

    def _remove_staging(self, table: ResolvedTable, manifest_path: str) -> None:
        if self._ctx.fs.exists(manifest_path):
            self._ctx.fs.rm(manifest_path)

    def _finalize(
        self, table: ResolvedTable, version: int, meta: dict[str, Any]
    ) -> tuple[TableVersion, dict[str, Any]]:
        """Step 3: copy the staged manifest to its final name (idempotent). Returns the version and
        the row metadata that points at the final file."""
        final_name = manifest_name(version, meta.get("naming_scheme", "V2"))
        final_rel = f"{VERSIONS_DIR}/{final_name}"
        final = _join(table.location, final_rel)
        if meta["manifest_path"] != final_rel:
            staging = _join(table.location, meta["manifest_path"])
            if self._ctx.fs.exists(staging):
                data = self._ctx.fs.read_bytes(staging)
                try:
                    self._ctx.fs.put_if_not_exists(final, data)
                except FileExistsError as exc:
                    if self._ctx.fs.read_bytes(final) != data:
                        raise errors.InternalError(
                            f"{final} exists with other content than the committed manifest of "
                            f"{ids.display(table.id)} version {version}"
                        ) from exc
            elif not self._ctx.fs.exists(final):
                raise errors.InternalError(
                    f"{ids.display(table.id)} version {version}: neither the staged manifest "
                    f"{staging} nor the final {final} exists"
                )
        size, e_tag, millis = _stats(self._ctx.fs.info(final))
        new_meta = dict(meta, manifest_path=final_rel, manifest_size=size, e_tag=e_tag)
        version_info = TableVersion(
            version,
            final,
            size,
            e_tag,
            meta.get("timestamp_millis") or millis,
            dict(meta.get("metadata") or {}),
        )
        return version_info, new_meta

    def _finish(self, table: ResolvedTable, version: int, meta: dict[str, Any]) -> TableVersion:
        """Reader side of the protocol: finish a version whose writer stopped after the row insert.

        Best effort: a storage error (or a `__manifest` that stays contended) leaves the version as
        its row describes it, readable at the staged manifest, for a later reader to finish. Lance
        lists versions right after its own commit too, and an error there would report a committed
        version as a failed commit."""
        staged_path = meta["manifest_path"]
        try:
            version_info, new_meta = self._finalize(table, version, meta)
        except OSError as exc:
            _logger.warning(
                "%s version %s: finishing it failed, left as committed: %s",
                ids.display(table.id),
                version,
                exc,
            )
            return _unfinished_version(table, version, meta)
        if new_meta["manifest_path"] != staged_path:
            try:
                self._point_rows([self._row(table.id, version, new_meta)])
                self._remove_staging(table, _join(table.location, staged_path))
            except (OSError, errors.ConcurrentModificationError) as exc:
                _logger.warning(
                    "%s version %s: finishing it failed, left as committed: %s",
                    ids.display(table.id),
                    version,
                    exc,
                )
        return version_info

    # ------------------------------------------------------------------------------------ deleting
    def batch_delete_table_versions(
        self, id: Sequence[str], versions: Sequence[int], ignore_missing: bool = False
    ) -> int:
        """Delete manifest files (and rows in management mode); returns how many versions went.

        Missing versions raise TableVersionNotFound (11) before anything is deleted, unless
        ``ignore_missing``. A managed row whose manifest another tool already deleted counts as
        present: its row is deleted, so a cleanup may remove files first and rows after."""
        if isinstance(versions, str) or not isinstance(versions, Sequence):
            raise errors.InvalidInputError(f"versions must be a list of version numbers, got {versions!r}")
        for version in versions:
            ids.validate_version(version, "versions")
        table = self._table(id)
        existing, gone = self._version_state(table)
        missing = sorted(set(versions) - set(existing) - gone)
        if missing and not ignore_missing:
            raise errors.TableVersionNotFoundError(
                f"table {ids.display(table.id)} has no versions {', '.join(map(str, missing))}"
            )
        doomed = sorted(set(versions) & set(existing))
        for version in doomed:
            self._ctx.fs.rm(existing[version].manifest_path)
        rows_doomed = sorted(set(doomed) | (set(versions) & gone))
        if rows_doomed and self.management_enabled():
            object_ids = [self._version_object_id(table.id, v) for v in rows_doomed]

            def plan(view: ManifestView, concurrent: bool) -> ManifestChange | None:
                present = [i for i in object_ids if view.get(i) is not None]
                return ManifestChange(delete=present) if present else None

            self._ctx.manifest.commit(plan)
        return len(rows_doomed)
