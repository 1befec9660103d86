"""Listing, describing, renaming and dropping relations, read from and written to the engine directly."""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

from dbt.adapters.contracts.relation import RelationType

from dbt.adapters.lancens.definitions.column import LancensColumn
from dbt.adapters.lancens.definitions.names import namespace_to_schema
from dbt.adapters.lancens.definitions.relation import LancensRelation
from dbt.adapters.lancens.metadata import clone_holds
from dbt.adapters.lancens.namespace import all_pages, errors
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.spark.types import to_spark_type

ON_DROP_CHOICES = ("purge", "deregister")


def list_relations(
    runtime: LancensRuntime, database: str | None, namespace_id: list[str]
) -> list[LancensRelation]:
    """Tables and views of one namespace; a namespace that does not exist has none.

    One catalog state, found once (a request on S3): while dbt fills its relation cache at the
    start of a run, the one the connection's root check read (`connections._check_root`)."""
    namespace = runtime.namespace
    with namespace.consistent_reads(shared=True):
        exists = namespace.namespace_exists(namespace_id)
        tables = all_pages(namespace.list_tables, namespace_id) if exists else []
        views = all_pages(namespace.list_views, namespace_id) if exists else []
    if runtime.branch_landing is not None:  # a branch target's tables main does not have
        tables = [*tables, *runtime.branch_landing.tables_only_here(namespace, namespace_id)]
    schema = namespace_to_schema(namespace_id)
    return [
        LancensRelation.create(database=database, schema=schema, identifier=name, type=kind)
        for names, kind in ((tables, RelationType.Table), (views, RelationType.View))
        for name in names
    ]


def columns_of(runtime: LancensRuntime, relation: LancensRelation) -> list[LancensColumn]:
    """Columns in table order with Spark's type names; [] when the relation does not exist.

    A table an atomic-publish run has staged reports its staged columns (what the run built), not
    the published ones."""
    staged = runtime.landing.staged_dataset(runtime.namespace, relation.table_id)
    view = staged is None and (relation.is_temporary_view or relation.type == RelationType.View)
    schema = staged.schema if staged is not None else None
    if staged is None and not view:
        # "a view?" and the table's schema: one catalog state, found once (a request on S3)
        with runtime.namespace.consistent_reads():
            view = is_view(runtime, relation.table_id)
            if not view:
                try:
                    schema = runtime.namespace.describe_table(relation.table_id).schema
                except errors.NamespaceError:
                    return []
    if view:
        fields = [
            (f.name, f.dataType.simpleString()) for f in runtime.sql(f"SELECT * FROM {relation}").schema
        ]
    else:
        fields = [(f.name, to_spark_type(f.type).simpleString()) for f in (schema or [])]
    return [
        LancensColumn(
            table_schema=relation.schema,
            table_name=relation.identifier,
            table_type=relation.type,
            column=name,
            dtype=dtype,
            column_index=index,
        )
        for index, (name, dtype) in enumerate(fields)
    ]


class DeferredColumns(Sequence[LancensColumn]):
    """A relation's columns (`columns_of`), read when first used, then kept.

    dbt's incremental materialization hands the table's columns to the strategy as `dest_columns`.
    The built-in strategies never read them (the adapter describes the table inside the commit's
    own catalog state), so only a project's own strategy that does pays for the reads (two
    requests on S3)."""

    def __init__(self, runtime: LancensRuntime, relation: LancensRelation) -> None:
        self._runtime = runtime
        self._relation = relation
        self._columns: list[LancensColumn] | None = None

    def _read(self) -> list[LancensColumn]:
        if self._columns is None:
            self._columns = columns_of(self._runtime, self._relation)
        return self._columns

    @overload
    def __getitem__(self, index: int) -> LancensColumn: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[LancensColumn]: ...
    def __getitem__(self, index: int | slice) -> LancensColumn | Sequence[LancensColumn]:
        return self._read()[index]

    def __len__(self) -> int:
        return len(self._read())

    def __repr__(self) -> str:
        return repr(self._read())


def is_view(runtime: LancensRuntime, object_id: list[str]) -> bool:
    """A view in the namespace, or one the atomic-publish run in progress holds back."""
    if runtime.landing.held_view(object_id) is not None:
        return True
    try:
        runtime.namespace.describe_view(object_id)
    except errors.NamespaceError:
        return False
    return True


def drop_relation(runtime: LancensRuntime, relation: LancensRelation, on_drop: str = "purge") -> None:
    """Drop a view, or a table (`purge` deletes its data, refused while a `dbt clone` reads it;
    `deregister` keeps the files)."""
    if on_drop not in ON_DROP_CHOICES:
        raise ValueError(f"on_drop must be one of {ON_DROP_CHOICES}, got {on_drop!r}")
    if relation.is_temporary_view:
        runtime.sql(f"DROP VIEW IF EXISTS {relation}")
        return
    namespace = runtime.namespace
    object_id = relation.table_id
    if is_view(runtime, object_id):
        namespace.drop_view(object_id)
        runtime.catalog.forget(object_id)
        return
    try:
        if on_drop == "deregister":
            namespace.deregister_table(object_id)
        else:
            clone_holds.purge(namespace, object_id)
    except errors.TableNotFoundError:
        pass  # dbt drops "if exists"
    runtime.refresh_table(object_id)


def drop_dependent_views(runtime: LancensRuntime, relation: LancensRelation) -> list[LancensRelation]:
    """Drop every view that reads `relation`, directly or through other views; return them.

    A seed's `--full-refresh` is dbt's "drop and re-create", which cascades to dependent views on
    the warehouses dbt was designed on; the namespace knows each view's `base_objects`, so the
    cascade is exact. Tables built from the relation are copies and stay."""
    views = {
        tuple(entry.id): [tuple(base) for base in entry.base_objects]
        for entry in runtime.namespace.list_objects()
        if entry.object_type == "view"
    }
    doomed: list[tuple[str, ...]] = []
    frontier = [tuple(relation.table_id)]
    while frontier:
        base = frontier.pop()
        for view, bases in views.items():
            if base in bases and view not in doomed:
                doomed.append(view)
                frontier.append(view)
    dropped = []
    for view in doomed:
        schema, identifier = namespace_to_schema(view[:-1]), view[-1]
        dependent = LancensRelation.create(
            database=relation.database, schema=schema, identifier=identifier, type=RelationType.View
        )
        drop_relation(runtime, dependent)
        dropped.append(dependent)
    return dropped


def rename_relation(runtime: LancensRuntime, source: LancensRelation, target: LancensRelation) -> None:
    """Rename a table through the engine (no data copy) or re-create a view under its new name."""
    namespace = runtime.namespace
    if is_view(runtime, source.table_id):
        view = namespace.describe_view(source.table_id)
        namespace.create_view(
            target.table_id, view.sql, base_objects=view.base_objects, properties=view.properties
        )
        drop_relation(runtime, source)
        runtime.register_relation(target.namespace_id, target.table_id[-1])
        return
    namespace.rename_table(source.table_id, target.table_id)
    clone_holds.move(namespace, source.table_id, target.table_id)
    runtime.refresh_table(source.table_id)
    runtime.refresh_table(target.table_id)
