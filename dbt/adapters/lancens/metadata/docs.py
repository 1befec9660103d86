"""persist_docs: model and column descriptions stored where any Lance tool can read them.

Tables: the model description is Lance table metadata `comment`, column descriptions are Lance field
metadata `comment` (the key Spark and Hive use for comments), all in ONE commit through the engine
(`update_table_metadata`), made only when something changed; in an atomic-publish run it is staged
on top of the run's version of the table and published with it. Views have no Lance table: their
descriptions go into the view's properties (`comment`, `column.<name>.comment`). Schemas: namespace
property `comment`. The catalog (catalog.py) reads all of these back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from dbt.adapters.lancens.definitions.relation import LancensRelation
from dbt.adapters.lancens.namespace import errors
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.spark.column_names import column_names

COMMENT_KEY = "comment"
_VIEW_COLUMN_PREFIX = "column."
_VIEW_COLUMN_SUFFIX = "." + COMMENT_KEY
# persist_docs without `relation: true` leaves the relation's description as it is.
_UNCHANGED: Any = object()


def view_column_comment_key(column: str) -> str:
    return f"{_VIEW_COLUMN_PREFIX}{column}{_VIEW_COLUMN_SUFFIX}"


def view_column_comments(properties: Mapping[str, str]) -> dict[str, str]:
    """Column name -> description, from a view's properties."""
    return {
        key[len(_VIEW_COLUMN_PREFIX) : -len(_VIEW_COLUMN_SUFFIX)]: value
        for key, value in properties.items()
        if key.startswith(_VIEW_COLUMN_PREFIX) and key.endswith(_VIEW_COLUMN_SUFFIX)
    }


def persist_docs(
    runtime: LancensRuntime,
    relation: LancensRelation,
    description: str | None,
    persist_relation: bool,
    columns: Mapping[str, Mapping[str, Any]],
    physical_columns: list[str],
) -> bool:
    """Store the descriptions of `relation` and of its documented `columns`; True when anything changed.

    `columns` is dbt's column dict already checked against the relation (validate_doc_columns):
    a quoted name matches exactly, an unquoted one case-insensitively. An empty description removes
    the stored one, so a deleted description does not linger.
    """
    wanted: dict[str, str | None] = {}
    for name, column in columns.items():
        physical = _physical_name(name, bool(column.get("quote")), physical_columns)
        if physical is not None:
            wanted[physical] = column.get("description") or None
    comment = (description or None) if persist_relation else _UNCHANGED
    if relation.is_view:
        return _persist_view(runtime, relation, comment, wanted)
    return _persist_table(runtime, relation, comment, wanted)


def _physical_name(name: str, quoted: bool, physical_columns: list[str]) -> str | None:
    """The table's spelling of a documented column: a quoted name matches only as spelled."""
    if quoted:
        return name if name in physical_columns else None
    return column_names(physical_columns).get(name)


def _persist_table(
    runtime: LancensRuntime, relation: LancensRelation, comment: Any, columns: dict[str, str | None]
) -> bool:
    """One `UpdateConfig` version with what changed: committed, or in an atomic-publish run staged
    on top of the run's version of the table, so the descriptions are published with its rows."""
    namespace, table, landing = runtime.namespace, relation.table_id, runtime.landing
    staged = landing.staged_dataset(namespace, table)
    if staged is not None:
        schema, current_comment = staged.schema, staged.metadata.get(COMMENT_KEY)
    else:
        info = namespace.describe_table(table)
        if info.declared_only or info.schema is None:
            return False
        schema, current_comment = info.schema, info.properties.get(COMMENT_KEY)
    table_metadata = {}
    if comment is not _UNCHANGED and current_comment != comment:
        table_metadata[COMMENT_KEY] = comment
    field_metadata = {}
    for name, text in columns.items():
        current = (schema.field(name).metadata or {}).get(COMMENT_KEY.encode())
        if (current.decode() if current else None) != text:
            field_metadata[name] = {COMMENT_KEY: text}
    if not table_metadata and not field_metadata:
        return False
    landing.update_metadata(namespace, table, table_metadata or None, field_metadata or None, str(relation))
    return True


def _persist_view(
    runtime: LancensRuntime, relation: LancensRelation, comment: Any, columns: dict[str, str | None]
) -> bool:
    """The view's properties: set on the namespace's view, or in an atomic-publish run on the view
    the run holds back, so they are published with it."""
    namespace, landing = runtime.namespace, runtime.landing
    view = landing.held_view(relation.table_id)
    if view is None:
        try:
            view = namespace.describe_view(relation.table_id)
        except errors.TableNotFoundError:
            return False
    properties = dict(view.properties)
    if comment is not _UNCHANGED:
        _set(properties, COMMENT_KEY, comment)
    for name, text in columns.items():
        _set(properties, view_column_comment_key(name), text)
    if properties == view.properties:
        return False
    landing.record_view(namespace, dataclasses.replace(view, properties=properties))
    return True


def _set(properties: dict[str, str], key: str, value: str | None) -> None:
    if value is None:
        properties.pop(key, None)
    else:
        properties[key] = value


def persist_schema_docs(runtime: LancensRuntime, namespace_id: list[str], description: str | None) -> None:
    """A schema's description as the namespace's `comment` property (removed when empty)."""
    if description:
        runtime.namespace.alter_namespace_properties(namespace_id, {COMMENT_KEY: description})
    else:
        runtime.namespace.alter_namespace_properties(namespace_id, {}, [COMMENT_KEY])
