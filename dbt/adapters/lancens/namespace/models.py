"""Result types of the engine's public API (``DirectoryNamespace``, directory.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa


@dataclass(frozen=True)
class Page:
    """One page of a listing; ``next_page_token`` is the last item returned when more remain."""

    items: list[Any]
    next_page_token: str | None = None


def all_pages(list_page: Callable[..., Page], id: Sequence[str]) -> list[Any]:  # noqa: A002
    """Every item of a paginated listing (`list_namespaces`, `list_tables`, `list_views`,
    `list_table_versions`), following `next_page_token` to the end."""
    items: list[Any] = []
    token: str | None = None
    while True:
        page = list_page(id, page_token=token)
        items.extend(page.items)
        token = page.next_page_token
        if not token:
            return items


@dataclass(frozen=True)
class NamespaceInfo:
    id: list[str]
    properties: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TableInfo:
    """A table as the namespace sees it; ``version``/``schema`` are None for declared-only tables.

    ``branch``: the Lance branch described (None: main); ``location`` is then the branch's own
    dataset directory, which every Lance reader opens as a table."""

    id: list[str]
    name: str
    namespace: list[str]
    location: str
    version: int | None
    schema: pa.Schema | None
    properties: dict[str, str] = field(default_factory=dict)
    declared_only: bool = False
    branch: str | None = None


@dataclass(frozen=True)
class BranchInfo:
    """One branch of a table, as Lance records it in ``_refs/branches/<name>.json``.

    ``parent_branch`` None is main; ``parent_version`` is the version of the parent the branch
    started from (its first own version has that number too); ``created_at`` is Unix seconds."""

    name: str
    parent_branch: str | None
    parent_version: int
    created_at: int
    manifest_size: int
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ViewInfo:
    id: list[str]
    sql: str
    base_objects: list[list[str]] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ObjectEntry:
    """One manifest object for bulk catalog reads; ``location`` is absolute and set for tables only."""

    id: list[str]
    object_type: str
    location: str | None
    properties: dict[str, str] = field(default_factory=dict)
    base_objects: list[list[str]] = field(default_factory=list)


@dataclass(frozen=True)
class ResolvedTable:
    """Where a table lives and how the namespace knows about it (internal contract with versions.py)."""

    id: list[str]
    location: str
    in_manifest: bool
    declared_only: bool
    latest: int | None = None
    """The newest version the listing that found the table's data named (object stores), so the
    describe that follows opens it without listing again; None when not listed that way."""
