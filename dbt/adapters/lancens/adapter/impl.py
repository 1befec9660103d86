"""The dbt adapter: thin `@available` methods that delegate to the modules beside this one."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Concatenate, ParamSpec, TypeVar

import agate
from dbt.adapters.base import available
from dbt.adapters.base.impl import BaseAdapter, ConstraintSupport
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.capability import Capability, CapabilityDict, CapabilitySupport, Support
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.contracts.relation import RelationConfig
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.impl import SparkAdapter, SparkConfig
from dbt.artifacts.schemas.catalog import CatalogTable
from dbt_common.contracts.constraints import ConstraintType

from dbt.adapters.lancens.__version__ import version as lancens_version
from dbt.adapters.lancens.adapter import atomic_request
from dbt.adapters.lancens.adapter.connections import LancensConnectionManager
from dbt.adapters.lancens.adapter.macro_arguments import days_or_none, flag, whole_number_or_none
from dbt.adapters.lancens.commits import publish, writes
from dbt.adapters.lancens.commits.table_write import open_write, table_seen
from dbt.adapters.lancens.definitions import maintenance_config
from dbt.adapters.lancens.definitions.column import LancensColumn
from dbt.adapters.lancens.definitions.names import (
    namespace_to_schema,
    quote,
    relation_table_id,
    schema_to_namespace,
    table_id,
)
from dbt.adapters.lancens.definitions.relation import LancensRelation
from dbt.adapters.lancens.materializations import (
    clone,
    contracts,
    incremental,
    index_run,
    model_frame,
    seeds,
    snapshots,
)
from dbt.adapters.lancens.metadata import (
    branches,
    catalog,
    debug,
    docs,
    history,
    maintenance,
    promotion,
    registration,
    relations,
    schemas,
    tags,
)
from dbt.adapters.lancens.namespace import ViewInfo
from dbt.adapters.lancens.runtime.process import LancensRuntime

logger = AdapterLogger("lancens")

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _planning_state(runtime: LancensRuntime, language: str) -> AbstractContextManager[None]:
    """One catalog state for what a SQL model's query is planned on (the relations it reads, the
    table's version its write builds on): one request on S3. A Python model runs while its frame is
    made (`result_frame`), so its reads are not held in one state."""
    return runtime.namespace.consistent_reads() if language == "sql" else nullcontext()


def _node_write(
    method: Callable[Concatenate[LancensAdapter, _P], _R],
) -> Callable[Concatenate[LancensAdapter, _P], _R]:
    """Mark a method dbt calls to build a node and that writes to the namespace: with atomic publish
    asked for, it runs only inside an atomic-publish run (adapter/atomic_request.py), checked before it
    writes anything."""

    @functools.wraps(method)
    def checked(self: LancensAdapter, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        atomic_request.require_run(self.config, self.runtime)
        return method(self, *args, **kwargs)

    return checked


def _changes_main(
    method: Callable[Concatenate[LancensAdapter, _P], _R],
) -> Callable[Concatenate[LancensAdapter, _P], _R]:
    """Mark a method that changes main's objects themselves (drops, renames, clones): refused on a
    branch target before it changes anything (runtime/branch_landing.py)."""

    @functools.wraps(method)
    def checked(self: LancensAdapter, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        branch = self.runtime.branch_landing
        if branch is not None:
            with self.connections.exception_handler(method.__name__):
                branch.refuse(f"{method.__name__} {', '.join(str(arg) for arg in args)}")
        return method(self, *args, **kwargs)

    return checked


@dataclass
class LancensConfig(SparkConfig):
    file_format: str = "lance"
    on_drop: str = "purge"


class LancensAdapter(SparkAdapter):
    Relation = LancensRelation  # type: ignore[assignment]
    Column = LancensColumn  # type: ignore[assignment]
    ConnectionManager = LancensConnectionManager  # type: ignore[assignment]
    AdapterSpecificConfigs = LancensConfig  # type: ignore[assignment]
    connections: LancensConnectionManager
    # Model contracts (materializations/contracts.py): not_null and check are enforced while the rows
    # are written; Lance has no keys, so the others come with dbt's "not enforced" warning.
    CONSTRAINT_SUPPORT = {
        ConstraintType.check: ConstraintSupport.ENFORCED,
        ConstraintType.not_null: ConstraintSupport.ENFORCED,
        ConstraintType.unique: ConstraintSupport.NOT_ENFORCED,
        ConstraintType.primary_key: ConstraintSupport.NOT_ENFORCED,
        ConstraintType.foreign_key: ConstraintSupport.NOT_ENFORCED,
    }

    def __init__(self, config: Any, mp_context: Any) -> None:
        super().__init__(config, mp_context)
        # table id -> what to do once an atomic-publish run has published the table's staged version

    @classmethod
    def type(cls) -> str:
        return "lancens"

    @classmethod
    def quote(cls, identifier: str) -> str:  # type: ignore[override]
        """Spark's backticks. A classmethod, as dbt's constraint rendering calls `cls.quote`
        (dbt-spark's instance method fails there for a column with `quote: true`)."""
        return quote(identifier)

    # -- the process's Spark session and namespace -------------------------------------------------
    @property
    def runtime(self) -> LancensRuntime:
        connection = self.connections.get_thread_connection()
        return connection.handle.runtime

    def set_relations_cache(self, *args: Any, **kwargs: Any) -> None:
        """dbt's relation cache, filled from the catalog state the connection's root check read
        (`list_relations_without_caching`); a listing after the fill (a schema dbt did not cache)
        finds the latest one."""
        try:
            super().set_relations_cache(*args, **kwargs)
        finally:
            self.connections.end_shared_reads()

    def pre_model_hook(self, config: Any) -> Any:
        """A node starts: the catalog state held for the start of the run is no longer read, also
        when dbt filled no relation cache (`--no-populate-cache`)."""
        self.connections.end_shared_reads()
        return super().pre_model_hook(config)

    # -- schemas are namespaces ---------------------------------------------------------------------
    def create_schema(self, relation: BaseRelation) -> None:
        """The schema's namespace; usually the run's first write, so a root the storage refuses (a
        missing bucket passes the connection's read check: its listing is just empty) fails here
        with the storage errors' one-line messages, not a raw exception."""
        with self.connections.exception_handler(f"create schema {relation.schema}"):
            schemas.create_schema(self.runtime, schema_to_namespace(relation.schema or ""))

    def drop_schema(self, relation: BaseRelation) -> None:
        with self.connections.exception_handler(f"drop schema {relation.schema}"):
            schemas.drop_schema(self.runtime, schema_to_namespace(relation.schema or ""))
        self.cache.drop_schema(relation.database, relation.schema)

    def list_schemas(self, database: str) -> list[str]:
        return schemas.list_schemas(self.runtime.namespace, self.runtime.branch_landing)

    def check_schema_exists(self, database: str, schema: str) -> bool:
        return schemas.schema_exists(
            self.runtime.namespace, schema_to_namespace(schema), self.runtime.branch_landing
        )

    # -- relations ----------------------------------------------------------------------------------
    def list_relations_without_caching(self, schema_relation: BaseRelation) -> list[BaseRelation]:
        namespace_id = schema_to_namespace(schema_relation.schema or "")
        found: list[BaseRelation] = [
            *relations.list_relations(self.runtime, self.config.credentials.database, namespace_id)
        ]
        return found

    def get_relation(self, database: str, schema: str, identifier: str) -> BaseRelation | None:
        """dbt's lookup with the database kept (dbt-spark drops it; here it names the root)."""
        return BaseAdapter.get_relation(self, database, schema, identifier)

    def get_columns_in_relation(self, relation: BaseRelation) -> list[LancensColumn]:  # type: ignore[override]
        return relations.columns_of(self.runtime, relation)  # type: ignore[arg-type]

    @available
    def columns_when_read(self, relation: LancensRelation) -> relations.DeferredColumns:
        """`get_columns_in_relation`, read only when something reads them (an incremental run's
        `dest_columns`, which the built-in strategies never do)."""
        return relations.DeferredColumns(self.runtime, relation)

    @_node_write
    @_changes_main
    def drop_relation(self, relation: BaseRelation, on_drop: str = "purge") -> None:
        self.cache_dropped(relation)
        relations.drop_relation(self.runtime, relation, on_drop)  # type: ignore[arg-type]

    @available
    @_node_write
    @_changes_main
    def drop_dependent_views(self, relation: LancensRelation) -> None:
        """Drop the views that read `relation` (a seed's `--full-refresh` cascades to them)."""
        for view in relations.drop_dependent_views(self.runtime, relation):
            self.cache_dropped(view)

    @_node_write
    @_changes_main
    def rename_relation(self, from_relation: BaseRelation, to_relation: BaseRelation) -> None:
        self.cache_renamed(from_relation, to_relation)
        relations.rename_relation(self.runtime, from_relation, to_relation)  # type: ignore[arg-type]

    # -- writes -------------------------------------------------------------------------------------
    @available
    @_node_write
    def write_relation(
        self,
        relation: LancensRelation,
        compiled_code: str,
        language: str = "sql",
        mode: str = "overwrite",
        provenance: dict[str, Any] | None = None,
        indexes: list[dict[str, Any]] | None = None,
        not_null: list[str] | None = None,
        embeddings: Any = None,
    ) -> AdapterResponse:
        """Build the model's result and commit it as the relation's next Lance version.

        `indexes` (the model's config): the columns a vector index names are written as vectors.
        `not_null` (a contract's constraints): columns written as non-nullable Lance fields.
        `embeddings` (the model's config): vector columns computed from text columns."""
        runtime = self.runtime
        name = relation.identifier or ""
        with self.connections.exception_handler(compiled_code):
            code = self.connections.model_sql(compiled_code, language)
            target = table_id(relation.schema or "", name)
            # A SQL model's query runs in the write's tasks, after the write is opened (`seen`).
            with _planning_state(runtime, language):
                result = model_frame.result_frame(
                    runtime,
                    relation.table_id,
                    code,
                    language,
                    indexes=indexes,
                    embeddings=embeddings,
                    adds_rows=mode == "append",
                )
                seen = table_seen(runtime, target) if language == "sql" else None
            version = writes.write_opened(
                open_write(runtime, target, seen=seen),
                result.frame,
                mode,
                _provenance(provenance),
                not_null or (),
            )
        self.cache_added(relation.incorporate(type="table"))
        return AdapterResponse(_message=f"OK (version {version}{result.summary()})", rows_affected=None)

    @available
    def enforce_contract(
        self, compiled_code: str, columns: dict[str, Any], constraints: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """A contracted model's checked SELECT and NOT NULL columns (materializations/contracts.py).

        dbt's own constraint rendering runs first: it fires dbt's warnings for the constraint types
        `CONSTRAINT_SUPPORT` marks as not enforced."""
        self.render_raw_columns_constraints(columns)
        self.render_raw_model_constraints(constraints)
        contract = contracts.contract_of(columns, constraints, self.quote)
        return {"code": contract.checked_select(compiled_code), "not_null": list(contract.not_null)}

    @available
    @_node_write
    def load_seed(
        self,
        relation: LancensRelation,
        csv_path: str,
        column_types: dict[str, str] | None = None,
        delimiter: str = ",",
        provenance: dict[str, Any] | None = None,
        quote_columns: bool | None = None,
        empty: bool = False,
        show: bool = False,
        indexes: list[dict[str, Any]] | None = None,
    ) -> seeds.SeedLoad:
        """Load a seed CSV through Arrow as the table's next version (one commit).

        `empty` (`dbt build --empty`): the CSV's columns and types, no rows. `show` (`dbt seed
        --show`): the loaded rows also come back as agate for dbt-core to sample and print.
        `indexes` (the seed's config): checked, and its vector columns written as vectors."""
        runtime = self.runtime
        with self.connections.exception_handler(f"load seed {csv_path}"):
            data = seeds.read_seed_csv(runtime.spark, csv_path, column_types, delimiter, quote_columns)
            data = index_run.checked_seed(data, indexes)
            if empty:
                data = data.slice(0, 0)
            version = writes.write_arrow(runtime, relation.table_id, data, _provenance(provenance))
        self.cache_added(relation.incorporate(type="table"))
        rows = data.num_rows
        response = AdapterResponse(_message=f"INSERT {rows} (version {version})", rows_affected=rows)
        return seeds.SeedLoad(response, seeds.shown_table(data) if show else None)

    @available
    @_node_write
    def build_table_indexes(
        self, relation: LancensRelation, indexes: list[dict[str, Any]] | None, provenance: dict[str, Any]
    ) -> str:
        """After a build: make the table's Lance indexes match its `indexes` config (index_run.py).

        In an atomic-publish run they are staged with the table's new version and published with it;
        returns what changed, for the log."""
        table, properties = relation.table_id, _provenance(provenance)
        with self.connections.exception_handler(f"indexes of {relation}"), self.runtime.writing(table):
            outcome = index_run.build_indexes(self.runtime, table, indexes, properties)
        return "" if outcome is None else outcome.summary()

    @available
    @_node_write
    def maintain_table(self, relation: LancensRelation, raw: Any, provenance: dict[str, Any]) -> str:
        """After a build: the `lance_maintenance` config's optimize and cleanup (metadata/maintenance.py)."""
        config = maintenance_config.parse_maintenance(raw)
        if config is None:
            return ""
        runtime = self.runtime
        table, properties = relation.table_id, _provenance(provenance)
        with self.connections.exception_handler(f"maintenance of {relation}"), runtime.writing(table):
            return runtime.landing.when_published(
                table, lambda: maintenance.after_build(runtime.namespace, table, config, properties)
            )

    @available
    @_node_write
    @_changes_main
    def shallow_clone_table(self, relation: LancensRelation, source: LancensRelation) -> AdapterResponse:
        """`dbt clone`: the source's latest version as a Lance shallow clone (materializations/clone.py)."""
        runtime = self.runtime
        with self.connections.exception_handler(f"clone {source} as {relation}"):
            version = clone.shallow_clone(runtime.namespace, source.table_id, relation.table_id)
            runtime.refresh_table(relation.table_id)
        self.cache_added(relation.incorporate(type="table"))
        return AdapterResponse(_message=f"CLONE (version {version}, no data copied)")

    @available
    @_node_write
    def create_view(
        self, relation: LancensRelation, compiled_code: str, reads: list[LancensRelation] | None = None
    ) -> AdapterResponse:
        """Create or replace a view in Spark and record it (SQL and what it reads) in the namespace;
        in an atomic-publish run the record is held back and made in the run's publish commit."""
        runtime = self.runtime
        with self.connections.exception_handler(compiled_code):
            runtime.sql(self.connections.model_sql(f"CREATE OR REPLACE VIEW {relation} AS {compiled_code}"))
            bases = [read.table_id for read in reads or []]
            runtime.landing.record_view(runtime.namespace, ViewInfo(relation.table_id, compiled_code, bases))
        self.cache_added(relation.incorporate(type="view"))
        return AdapterResponse(_message="OK")

    def debug_query(self) -> None:
        """`dbt debug`: run a query, and report the root, the mode, Spark and whether the root is writable."""
        for line in debug.report(self.runtime, self.config.credentials):
            logger.info(line)

    # -- catalog and docs --------------------------------------------------------------------------
    # The catalog is read from the engine (metadata/catalog.py); descriptions are stored in Lance
    # (metadata/docs.py).
    _capabilities = CapabilityDict(
        {
            Capability.GetCatalogForSingleRelation: CapabilitySupport(support=Support.Full),
            Capability.SchemaMetadataByRelations: CapabilitySupport(support=Support.Full),
            # Batches' queries run in parallel; their commits take turns (`LancensRuntime.writing`).
            Capability.MicrobatchConcurrency: CapabilitySupport(support=Support.Full),
        }
    )

    def get_catalog(
        self, relation_configs: Iterable[RelationConfig], used_schemas: frozenset[tuple[str, str]]
    ) -> tuple[agate.Table, list[Exception]]:
        catalog_relations = self._get_catalog_relations(relation_configs)
        wanted_schemas = {relation.schema for relation in catalog_relations if relation.schema}
        found, failures = catalog.read_catalog(self.runtime, schemas=wanted_schemas)
        return catalog.catalog_table(found, self.config.credentials.database), failures

    def get_catalog_by_relations(
        self, used_schemas: frozenset[tuple[str, str]], relations: set[BaseRelation]
    ) -> tuple[agate.Table, list[Exception]]:
        wanted = [(r.schema, r.identifier) for r in relations if r.schema and r.identifier]
        found, failures = catalog.read_catalog(self.runtime, relations=wanted)
        return catalog.catalog_table(found, self.config.credentials.database), failures

    @available
    def catalog_rows(
        self, schemas: Iterable[str] | None = None, relations: Iterable[BaseRelation] | None = None
    ) -> agate.Table:
        """The catalog rows for dbt's `get_catalog` / `get_catalog_relations` macros (catalog.sql)."""
        wanted = [(r.schema, r.identifier) for r in relations or () if r.schema and r.identifier]
        with self.connections.exception_handler("catalog"):
            found, failures = catalog.read_catalog(self.runtime, schemas=schemas, relations=wanted)
            if failures:
                raise failures[0]
        return catalog.catalog_table(found, self.config.credentials.database)

    def get_catalog_for_single_relation(self, relation: BaseRelation) -> CatalogTable | None:
        with self.connections.exception_handler(f"catalog of {relation}"):
            return catalog.single_relation(
                self.runtime, relation.database, relation.schema or "", relation.identifier or ""
            )

    @available
    @_node_write
    def persist_relation_docs(
        self,
        relation: LancensRelation,
        description: str | None,
        persist_relation: bool,
        columns: dict[str, Any],
        physical_columns: list[str],
    ) -> bool:
        """Store model/column descriptions in Lance metadata (tables) or view properties."""
        with (
            self.connections.exception_handler(f"persist_docs {relation}"),
            self.runtime.writing(relation.table_id),
        ):
            return docs.persist_docs(
                self.runtime, relation, description, persist_relation, columns, physical_columns
            )

    @available
    def persist_schema_docs(self, schema: str, description: str | None) -> None:
        """Store a schema's description as its namespace's `comment` property."""
        with self.connections.exception_handler(f"persist_schema_docs {schema}"):
            docs.persist_schema_docs(self.runtime, schema_to_namespace(schema), description)

    # -- versions and publishing -------------------------------------------------------------------
    # Registration in metadata/registration.py, history and time travel in metadata/history.py,
    # atomic publish in commits/publish.py. `relation`: a relation or a string `schema.table`.
    @available
    def declare_table(self, relation: LancensRelation | str) -> str:
        with self.connections.exception_handler(f"declare_table {relation}"):
            return registration.declare_table(self.runtime, relation_table_id(relation))

    @available
    def register_table(self, relation: LancensRelation | str, location: str) -> int | None:
        with self.connections.exception_handler(f"register_table {relation}"):
            return registration.register_table(self.runtime, relation_table_id(relation), location)

    @available
    def deregister_table(self, relation: LancensRelation | str) -> str:
        table = relation_table_id(relation)
        with self.connections.exception_handler(f"deregister_table {relation}"):
            location = registration.deregister_table(self.runtime, table)
        self._forget_cached(table)
        return location

    @available
    def drop_table(self, relation: LancensRelation | str, purge: object = False) -> str:
        """`purge` as `run-operation --args` spelled it: `"false"` must not delete the data."""
        table = relation_table_id(relation)
        with self.connections.exception_handler(f"drop_table {relation}"):
            location = registration.drop_table(self.runtime, table, flag(purge, "purge"))
        self._forget_cached(table)
        return location

    @available
    def refuse_in_atomic_run(self, action: str) -> None:
        """Refuse `action`, a change dropped at once rather than held for the publish, in an
        atomic-publish run (macros/materializations/kind_switch.sql)."""
        atomic_request.refuse_in_run(self.runtime, action)

    @available
    def macro_flag(self, value: object, name: str) -> bool:
        """A macro's yes/no argument read as the adapter reads it (`"false"` is no, `"maybe"` fails)."""
        return flag(value, name)

    def _forget_cached(self, table: list[str]) -> None:
        schema, identifier = namespace_to_schema(table[:-1]), table[-1]
        self.cache.drop(
            self.Relation.create(
                database=self.config.credentials.database, schema=schema, identifier=identifier
            )
        )

    @available
    def list_table_versions(self, relation: LancensRelation | str) -> list[dict[str, Any]]:
        with self.connections.exception_handler(f"list_table_versions {relation}"):
            return history.list_versions(self.runtime, relation_table_id(relation))

    @available
    def format_table_versions(self, relation: LancensRelation | str, rows: list[dict[str, Any]]) -> str:
        return history.format_versions(relation_table_id(relation), rows)

    @available
    def restore_table(
        self, relation: LancensRelation | str, version: int | str, provenance: dict[str, Any] | None = None
    ) -> int:
        """Restore `version`: a number or a tag, like `at_version`."""
        table = relation_table_id(relation)
        with self.connections.exception_handler(f"restore_table {relation} {version}"):
            number = tags.version_of(self.runtime.namespace, table, version)
            return history.restore_version(self.runtime, table, number, _provenance(provenance))

    # -- branches (a branch target: runtime/branch_landing.py) -------------------------------------
    @available
    def promote_branch(self, branch: str, provenance: dict[str, Any] | None = None) -> dict[str, int]:
        """Every table the branch changed becomes main's next version (metadata/promotion.py)."""
        with self.connections.exception_handler(f"promote_branch {branch}"):
            return promotion.promote(self.runtime.namespace, branch, _provenance(provenance))

    @available
    def list_branches(self) -> list[dict[str, Any]]:
        with self.connections.exception_handler("list_branches"):
            return branches.list_branches(self.runtime.namespace)

    @available
    def format_branches(self, rows: list[dict[str, Any]]) -> str:
        return branches.format_branches(rows)

    @available
    def delete_branch(self, branch: str) -> list[str]:
        with self.connections.exception_handler(f"delete_branch {branch}"):
            return branches.delete_branch(self.runtime.namespace, branch)

    @available
    def table_at_version(self, relation: LancensRelation | str, version: int | str) -> str:
        """A temp view of `version`: a number or a tag."""
        table = relation_table_id(relation)
        with self.connections.exception_handler(f"at_version {relation} {version}"):
            number = tags.version_of(self.runtime.namespace, table, version)
            return history.at_version(self.runtime, table, number)

    # -- tags, optimize, cleanup --------------------------------------------------------------------
    # Tags in metadata/tags.py; compaction and cleanup in metadata/maintenance.py.
    @available
    def create_table_tag(self, relation: LancensRelation | str, tag: str, version: int | None = None) -> int:
        with self.connections.exception_handler(f"create_tag {relation} {tag}"):
            return tags.create_tag(self.runtime.namespace, relation_table_id(relation), tag, version)

    @available
    def delete_table_tag(self, relation: LancensRelation | str, tag: str) -> int:
        with self.connections.exception_handler(f"delete_tag {relation} {tag}"):
            return tags.delete_tag(self.runtime.namespace, relation_table_id(relation), tag)

    @available
    def list_table_tags(self, relation: LancensRelation | str) -> list[dict[str, Any]]:
        with self.connections.exception_handler(f"list_tags {relation}"):
            return tags.list_tags(self.runtime.namespace, relation_table_id(relation))

    @available
    def format_table_tags(self, relation: LancensRelation | str, rows: list[dict[str, Any]]) -> str:
        return tags.format_tags(relation_table_id(relation), rows)

    @available
    def optimize_table(
        self, relation: LancensRelation | str, provenance: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Compact the table and index its unindexed rows; returns what changed."""
        runtime = self.runtime
        table = relation_table_id(relation)
        with self.connections.exception_handler(f"optimize_table {relation}"):
            result = maintenance.optimize_table(runtime.namespace, table, _provenance(provenance))
            if result.versions:
                runtime.refresh_table(table)
        return dataclasses.asdict(result)

    @available
    def cleanup_table_versions(
        self,
        relation: LancensRelation | str,
        retain_versions: int | None = None,
        older_than_days: float | None = None,
        grace_hours: float = 24,
        allow_short_grace: Any = False,
    ) -> str:
        """Remove old untagged versions and killed runs' leftovers of one table; returns the report."""
        with self.connections.exception_handler(f"cleanup_table_versions {relation}"):
            report = maintenance.cleanup_table(
                self.runtime.namespace,
                relation_table_id(relation),
                whole_number_or_none(retain_versions, "retain_versions"),
                days_or_none(older_than_days, "older_than_days"),
                timedelta(hours=float(grace_hours)),
                flag(allow_short_grace, "allow_short_grace"),
            )
        return report.summary()

    @available
    def cleanup_namespace(
        self,
        retain_versions: int | None = None,
        older_than_days: float | None = None,
        grace_hours: float = 24,
        allow_short_grace: Any = False,
    ) -> str:
        """`cleanup_table_versions` for every table, then the root's leftovers."""
        with self.connections.exception_handler("cleanup_namespace"):
            report = maintenance.cleanup_namespace(
                self.runtime.namespace,
                whole_number_or_none(retain_versions, "retain_versions"),
                days_or_none(older_than_days, "older_than_days"),
                timedelta(hours=float(grace_hours)),
                flag(allow_short_grace, "allow_short_grace"),
            )
        return report.summary()

    @available
    def repair_namespace(self) -> str:
        """Put back the reservations of registered views and declared tables; returns the report."""
        with self.connections.exception_handler("repair_namespace"):
            report = maintenance.repair(self.runtime.namespace)
        return report.summary()

    @available
    def begin_atomic_publish(self, requested_by_var: Any, invocation_id: str) -> bool:
        """on-run-start: stage this run's writes when the profile or the project var asks for it."""
        with self._hook_connection(), self.connections.exception_handler("begin atomic publish"):
            by_var = flag(requested_by_var, "var lancens_atomic_publish")
            enabled = self.config.credentials.atomic_publish or by_var
            if enabled:
                publish.begin(self.runtime, invocation_id)
        return enabled

    @available
    def end_atomic_publish(self, results: list[Any]) -> dict[str, Any]:
        """on-run-end: publish the run's staged versions together, or nothing if a node failed.

        Returns `published` (table -> version) and the hook's `sql`: empty, or a statement that
        fails saying why nothing was published when another run won the race (`report_lost_race`)."""
        statuses = [str(getattr(r.status, "value", r.status)) for r in results]
        staged = publish.staged_objects(self.runtime)
        with self._hook_connection(), self.connections.exception_handler("atomic publish"):
            try:
                published = publish.finish(self.runtime, statuses)
            except publish.LostRace as lost:
                message = self.config.credentials.redact(f"dbt-lancens {lost}")
                return {"published": {}, "sql": publish.report_lost_race(results, lost, message)}
        if publish.failed(statuses):
            reason = "a node of this atomic-publish run failed, so nothing of the run was published"
            publish.report_not_published(results, staged, reason)
        return {"published": {".".join(key): version for key, version in published.items()}, "sql": ""}

    def acquire_connection(self, name: str | None = None) -> Any:
        """Profile `table_version_management: true` turns it on in the root before anything commits."""
        connection = super().acquire_connection(name)
        with self.connections.exception_handler("profile key branch"):
            self.runtime.build_on_branch(self.config.credentials.branch)
        if self.config.credentials.table_version_management:
            with self.connections.exception_handler("enable table version management"):
                self.runtime.enable_version_management()
        return connection

    def _hook_connection(self) -> AbstractContextManager[Any]:
        """Run-level hooks may run on a thread without a connection; open one for them."""
        if self.connections.get_if_exists() is not None:
            return nullcontext()
        return self.connection_named("lancens_publish")

    # -- incremental, snapshots --------------------------------------------------------------------
    # Strategies and snapshots live in materializations/; each run is ONE Lance commit (merge.py there).
    def valid_incremental_strategies(self) -> list[str]:
        return list(incremental.STRATEGIES)

    @available
    @_node_write
    def apply_incremental(
        self,
        relation: LancensRelation,
        compiled_code: str,
        language: str,
        spec: dict[str, Any],
        provenance: dict[str, Any] | None = None,
        indexes: list[dict[str, Any]] | None = None,
        embeddings: Any = None,
    ) -> AdapterResponse:
        """Apply an incremental run's result to the existing table as its next Lance version."""
        runtime = self.runtime
        with self.connections.exception_handler(compiled_code):
            code = self.connections.model_sql(compiled_code, language)
            spec_ = incremental.Spec(**spec)
            # `seen` is noted before the model's query runs (a Python model reads eagerly, in
            # `result_frame`). A SQL model's query runs in `apply`, after the frame is made, so its
            # `seen`, the relations its frame reads and (rows added by Spark tasks) the write come
            # from one catalog state (one request on S3); the table's version is looked at again
            # after the query, which still refuses a commit made while it ran.
            with _planning_state(runtime, language):
                seen = incremental.version_before_query(runtime, relation.table_id, spec_)
                result = model_frame.result_frame(
                    runtime,
                    relation.table_id,
                    code,
                    language,
                    indexes=indexes,
                    embeddings=embeddings,
                    key=spec_.unique_key,
                    adds_rows=True,
                    on_schema_change=spec_.on_schema_change,
                )
                opened = incremental.open_before_query(runtime, relation.table_id, spec_, language)
            version, rows = incremental.apply(
                runtime, relation.table_id, result.frame, spec_, _provenance(provenance), seen, opened
            )
        return AdapterResponse(_message=f"OK (version {version}{result.summary()})", rows_affected=rows)

    @available
    @_node_write
    def apply_snapshot_staging(
        self,
        relation: LancensRelation,
        staging_sql: str,
        columns: dict[str, str],
        provenance: dict[str, Any] | None = None,
        indexes: list[dict[str, Any]] | None = None,
        empty: bool = False,
    ) -> AdapterResponse:
        """Apply dbt's snapshot staging rows (inserts, closed records) to the snapshot in one commit;
        `indexes` (the snapshot's config) are checked against its columns first; `empty`
        (`--empty`) commits new columns only."""
        runtime = self.runtime
        with self.connections.exception_handler(staging_sql):
            version, rows = snapshots.merge_staging(
                runtime,
                relation.table_id,
                self.connections.model_sql(staging_sql),
                columns,
                _provenance(provenance),
                indexes,
                empty,
            )
        return AdapterResponse(_message=f"OK (version {version})", rows_affected=rows)


def _provenance(provenance: dict[str, Any] | None) -> dict[str, str]:
    """Who made a version: what the macro passed (invocation, model, run start) plus our version."""
    properties = {key: str(value) for key, value in (provenance or {}).items() if value is not None}
    properties["dbt_lancens_version"] = lancens_version
    return properties
