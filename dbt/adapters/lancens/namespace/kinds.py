"""What a ``__manifest`` row is: a namespace, a table, a view, or a table version.

A view is stored as a ``table`` row (not a ``view`` row) because native pylance re-parses every row
on each of its writes and fails on any object type it does not know; as a table row pointing at a
reserved (declared-only) directory it is, for native, just a declared table it can list, describe
and drop. What makes it a view for this engine is the marker key in its ``metadata`` JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbt.adapters.lancens.namespace import props

NAMESPACE = "namespace"
TABLE = "table"
VIEW = "view"
TABLE_VERSION = "table_version"

VIEW_MARKER = "lancens.view"
"""``metadata`` key set to ``"true"`` on a view's row; keys starting with it are reserved."""
VIEW_SQL = "lancens.view.sql"


def object_kind(row: Mapping[str, Any]) -> str:
    """The row's kind: its ``object_type``, except ``view`` for a table row carrying the view marker.

    Listings call this for every row, so the JSON is parsed only when the marker text occurs."""
    object_type = str(row["object_type"])
    metadata = row.get("metadata")
    if object_type != TABLE or not metadata or VIEW_MARKER not in metadata:
        return object_type
    return VIEW if props.loads(metadata).get(VIEW_MARKER) == "true" else TABLE


def reserved_keys(properties: Mapping[str, str]) -> list[str]:
    """Property keys a caller may not set on a table or view (they would turn it into a view)."""
    return sorted(key for key in properties if key.startswith(VIEW_MARKER))
