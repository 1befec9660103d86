"""DDL written as SQL (hooks, run_query) is applied to the namespace; checked with the engine and pylance."""

from __future__ import annotations

import lance
import pytest
from dbt.tests.util import run_dbt
from dbt_common.exceptions import DbtDatabaseError, DbtRuntimeError

from dbt.adapters.lancens.namespace import DirectoryNamespace

SEED_CSV = "id,name\n1,a\n2,b\n"
VIEW_SQL = "{{ config(materialized='view') }} select * from {{ ref('base') }}"
VIEW_OF_VIEW_SQL = "{{ config(materialized='view') }} select id from {{ ref('over_base') }}"
TABLE_SQL = "{{ config(materialized='table') }} select * from {{ ref('base') }}"


class TestNamespaceDdl:
    def test_create_alter_drop(self, project, lancens_root: str) -> None:
        ns = DirectoryNamespace(lancens_root)
        schema = project.test_schema
        project.run_sql(f"create table {schema}.events (id INTEGER, name VARCHAR(20), at TIMESTAMP)")
        info = ns.describe_table([schema, "events"])
        dataset = lance.dataset(info.location)
        assert (dataset.version, dataset.count_rows()) == (1, 0)
        assert [(f.name, str(f.type)) for f in dataset.schema] == [
            ("id", "int32"),
            ("name", "string"),
            ("at", "timestamp[us, tz=UTC]"),
        ]
        project.run_sql(f"create table if not exists {schema}.events (id INTEGER)")  # no-op
        assert ns.describe_table([schema, "events"]).version == 1

        project.run_sql(f"insert into {schema}.events values (1, 'x', timestamp'2024-01-01 00:00:00')")
        project.run_sql(f"alter table {schema}.events add columns (score DOUBLE, tag VARCHAR(5))")
        dataset = lance.dataset(ns.describe_table([schema, "events"]).location)
        assert dataset.schema.names == ["id", "name", "at", "score", "tag"]
        assert dataset.to_table().to_pylist()[0]["score"] is None
        assert project.run_sql(f"select id, score from {schema}.events", fetch="all") == [(1, None)]

        with pytest.raises(DbtRuntimeError, match="DEFAULT values are not supported"):
            project.run_sql(f"alter table {schema}.events add column d INT default 3")
        with pytest.raises(DbtRuntimeError, match="already exists"):
            project.run_sql(f"create table {schema}.events (id INTEGER)")
        with pytest.raises(DbtRuntimeError, match="USING parquet"):
            project.run_sql(f"create table {schema}.other (id INTEGER) using parquet")
        assert not ns.table_exists([schema, "other"])

        project.run_sql(f"create table {schema}.copy as select id, name from {schema}.events")
        copy = lance.dataset(ns.describe_table([schema, "copy"]).location)
        assert (copy.version, copy.to_table().to_pylist()) == (1, [{"id": 1, "name": "x"}])
        project.run_sql(f"create or replace table {schema}.copy as select id * 2 as id from {schema}.events")
        copy = lance.dataset(ns.describe_table([schema, "copy"]).location)
        assert (copy.version, copy.to_table().to_pylist()) == (2, [{"id": 2}])  # same table, next version
        project.run_sql(f"create table if not exists {schema}.copy as select 9 as id")  # no-op
        assert lance.dataset(ns.describe_table([schema, "copy"]).location).version == 2

        # A one-part name is not a namespace object: Spark's own temporary view, dropped by Spark.
        project.run_sql("create or replace temporary view lancens_ddl_tmp as select 1 as id")
        project.run_sql("drop view lancens_ddl_tmp")
        assert ns.table_exists([schema, "events"])

        project.run_sql(f"drop table {schema}.events")
        assert not ns.table_exists([schema, "events"])
        project.run_sql(f"drop table if exists {schema}.events")
        with pytest.raises(DbtRuntimeError, match="does not exist"):
            project.run_sql(f"drop table {schema}.events")

    def test_rename_and_refused_ddl(self, project, lancens_root: str) -> None:
        ns = DirectoryNamespace(lancens_root)
        schema = project.test_schema
        other = f"{schema}_other"
        ns.create_namespace([other])
        project.run_sql(f"create table {schema}.src as select id from range(3)")
        location = ns.describe_table([schema, "src"]).location

        # RENAME TO: the namespace entry moves (no data copied); Spark reads the new name only
        project.run_sql(f"alter table {schema}.src rename to renamed")
        assert not ns.table_exists([schema, "src"])
        assert ns.describe_table([schema, "renamed"]).location == location
        assert project.run_sql(f"select count(*) from {schema}.renamed", fetch="one") == (3,)
        project.run_sql(f"alter table {schema}.renamed rename to {other}.moved")
        assert ns.table_exists([other, "moved"]) and not ns.table_exists([schema, "renamed"])
        assert lance.dataset(ns.describe_table([other, "moved"]).location).count_rows() == 3
        ns.create_view([schema, "v_src"], f"select id from {other}.moved")
        project.adapter.runtime.register_relation([schema], "v_src")
        project.run_sql(f"alter view {schema}.v_src rename to v_dst")
        assert ns.describe_view([schema, "v_dst"]).sql == f"select id from {other}.moved"
        assert project.run_sql(f"select count(*) from {schema}.v_dst", fetch="one") == (3,)
        project.run_sql(f"create table {schema}.taken (id INTEGER)")
        exists = f"{other}.moved TO {schema}.taken: {schema}.taken already exists"
        with pytest.raises(DbtRuntimeError, match=exists):
            project.run_sql(f"alter table {other}.moved rename to {schema}.taken")
        with pytest.raises(DbtRuntimeError, match=f"{schema}.gone does not exist"):
            project.run_sql(f"alter table {schema}.gone rename to {schema}.new")
        assert ns.table_exists([other, "moved"]) and ns.table_exists([schema, "taken"])

        # DDL without a Lance counterpart fails instead of changing only Spark's catalog
        refused = {
            f"alter table {schema}.taken set tblproperties ('k'='v')": "SET TBLPROPERTIES",
            f"alter table {schema}.taken rename column id to key": "RENAME COLUMN",
            f"comment on table {schema}.taken is 'c'": "COMMENT ON TABLE",
            f"alter table {schema}.taken set location '/tmp/x'": "SET LOCATION",
        }
        for statement, what in refused.items():
            message = f"{what} on {schema}.taken: dbt-lancens does not apply"
            with pytest.raises(DbtRuntimeError, match=message):
                project.run_sql(statement)
        taken = lance.dataset(ns.describe_table([schema, "taken"]).location)
        assert (taken.version, taken.schema.names) == (1, ["id"])

    def test_drop_schema_cascade(self, project, lancens_root: str) -> None:
        ns = DirectoryNamespace(lancens_root)
        project.run_sql(f"create schema if not exists {project.test_schema}")
        nested = f"{project.test_schema}__inner"
        ns.create_namespace([project.test_schema, "inner"])
        project.run_sql(f"create table {nested}.t (id INTEGER)")
        with pytest.raises((DbtRuntimeError, DbtDatabaseError), match="not empty"):
            project.run_sql(f"drop schema {project.test_schema}")
        assert ns.table_exists([project.test_schema, "inner", "t"])
        project.run_sql(f"drop schema if exists {project.test_schema} cascade")
        assert not ns.namespace_exists([project.test_schema])
        assert not ns.namespace_exists([project.test_schema, "inner"])


class TestSeedFullRefreshCascade:
    """`dbt seed --full-refresh` drops the views reading the seed (also through a view), not tables."""

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"base.csv": SEED_CSV}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"over_base.sql": VIEW_SQL, "over_view.sql": VIEW_OF_VIEW_SQL, "copy.sql": TABLE_SQL}

    def test_full_refresh_drops_dependent_views(self, project, lancens_root: str) -> None:
        ns = DirectoryNamespace(lancens_root)
        schema = project.test_schema
        run_dbt(["seed"])
        run_dbt(["run"])
        assert sorted(ns.list_views([schema]).items) == ["over_base", "over_view"]
        version = ns.describe_table([schema, "base"]).version

        run_dbt(["seed"])  # a plain re-run keeps them
        assert sorted(ns.list_views([schema]).items) == ["over_base", "over_view"]

        run_dbt(["seed", "--full-refresh"])
        assert ns.list_views([schema]).items == []
        assert sorted(ns.list_tables([schema]).items) == ["base", "copy"]
        assert ns.describe_table([schema, "base"]).version == version + 2  # same table, history kept
        run_dbt(["run"])
        assert sorted(ns.list_views([schema]).items) == ["over_base", "over_view"]
