"""A Lance dataset whose own commits (index optimisation, compaction) go through the namespace engine.

Some Lance operations only exist as methods that commit by themselves (`optimize.optimize_indices`,
`optimize.compact_files`: the index remapping a compaction needs is not available as an
uncommitted operation). With file-based versions such a commit is exactly what the engine's
`commit_table` does for an existing table (a Lance commit at its location). Under table version
management the dataset is opened with Lance's external manifest store pointed at the engine's
public version API, so Lance stages the manifest and the engine makes it a version with the
spec's four steps (row, finalize, pointer), recording who made it, like every other commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import lance

from dbt.adapters.lancens.namespace import DirectoryNamespace, all_pages
from dbt.adapters.lancens.namespace.commit import VersionStore, version_response
from dbt.adapters.lancens.namespace.layout import VERSIONS_DIR
from dbt.adapters.lancens.runtime.landing import latest as latest  # the table's latest version, to read


def version_history(
    namespace: DirectoryNamespace, table_id: Sequence[str], location: str
) -> dict[int, int | None]:
    """Version -> timestamp (millis) of every version the engine or Lance knows.

    Both are asked: under table version management the engine's rows are the history; Lance lists
    the manifests on storage itself, which is what its cleanup acts on."""
    history: dict[int, int | None] = {
        v.version: v.timestamp_millis for v in all_pages(namespace.list_table_versions, list(table_id))
    }
    dataset = lance.dataset(location, storage_options=namespace.storage_options or None)
    for version in dataset.versions():
        moment = version.get("timestamp")
        millis = int(moment.timestamp() * 1000) if isinstance(moment, datetime) else None
        history.setdefault(int(version["version"]), millis)
    return history


def open_for_commits(
    namespace: DirectoryNamespace, table_id: Sequence[str], properties: dict[str, str] | None = None
) -> lance.LanceDataset:
    """The table's latest version; Lance's own commits on it land through the engine.

    `properties`: who made the versions (recorded in their `table_version` rows under table
    version management; Lance's commit methods take no transaction properties otherwise)."""
    if not namespace.version_management_enabled():
        return latest(namespace, table_id)
    location = namespace.describe_table(list(table_id)).location
    options = namespace.storage_options or None
    store = _EngineVersions(namespace, list(table_id), location, dict(properties or {}))
    return lance.LanceDataset(
        location,
        storage_options=options,
        session=namespace.lance_session,
        namespace_client=store,
        table_id=list(table_id),
        namespace_client_managed_versioning=True,
    )


class _EngineVersions(VersionStore):
    """Lance's external manifest store, answered by the engine's public version API."""

    def __init__(
        self, namespace: DirectoryNamespace, table_id: list[str], location: str, properties: dict[str, str]
    ) -> None:
        self._namespace = namespace
        self._table_id = table_id
        self._location = location.rstrip("/")
        self._properties = properties

    def namespace_id(self) -> str:
        return f"lancens-engine-versions({self._location})"

    def _list(self, request: dict[str, Any]) -> dict[str, Any]:
        descending = bool(request.get("descending", False))
        limit = request.get("limit")
        if limit is not None:
            page = self._namespace.list_table_versions(self._table_id, descending=descending, limit=limit)
            versions = page.items
        else:
            versions = list(all_pages(self._namespace.list_table_versions, self._table_id))
            versions.sort(key=lambda v: v.version, reverse=descending)
        return {"versions": [version_response(version) for version in versions]}

    def _describe(self, request: dict[str, Any]) -> dict[str, Any]:
        version = self._namespace.describe_table_version(self._table_id, request.get("version"))
        return {"version": version_response(version)}

    def _create(self, request: dict[str, Any]) -> dict[str, Any]:
        name = str(request["manifest_path"]).rstrip("/").rsplit("/", 1)[-1]
        created = self._namespace.create_table_version(
            self._table_id,
            int(request["version"]),
            f"{self._location}/{VERSIONS_DIR}/{name}",
            naming_scheme=str(request.get("naming_scheme") or "V2"),
            metadata=self._properties,
        )
        return {"version": version_response(created)}
