"""Incremental runs read back with pylance: one version per run, values, no duplicate keys."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import lance
import pyarrow as pa
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture, write_file

from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.functional.atomic_publish_project import AtomicPublishProject

# `round` picks the batch: 1 is the first build, 2 updates id 2 and adds id 3 (and a column).
MERGED = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='append_new_columns',
          merge_exclude_columns=['created']) }}
{% if var('round', 1) == 1 %}
select 1 as id, 'a' as name, 'r1' as created union all select 2 as id, 'b' as name, 'r1' as created
{% else %}
select 2 as id, 'B' as name, 'r2' as created, 'x' as extra
union all select 3 as id, 'c' as name, 'r2' as created, 'y' as extra
{% endif %}
"""

DELETE_INSERT = """
{{ config(materialized='incremental', incremental_strategy='delete+insert', unique_key=['id', 'part']) }}
{% if var('round', 1) == 1 %}
select 1 as id, 'p' as part, 1 as v union all select 1 as id, 'q' as part, 1 as v
{% else %}
select 1 as id, 'p' as part, 2 as v union all select 1 as id, 'p' as part, 3 as v
{% endif %}
"""


class TestIncrementalLance:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"merged.sql": MERGED, "delete_insert.sql": DELETE_INSERT}

    def _dataset(self, project, lancens_root: str, name: str) -> lance.LanceDataset:
        info = DirectoryNamespace(lancens_root).describe_table([project.test_schema, name])
        return lance.dataset(info.location)

    def test_runs_commit_one_version_each(self, project, lancens_root: str) -> None:
        run_dbt(["run"])
        merged = self._dataset(project, lancens_root, "merged")
        first = merged.version

        run_dbt(["run", "--vars", "{round: 2}"])
        merged = self._dataset(project, lancens_root, "merged")
        # the new column is one metadata-only version, the merge one more
        assert merged.version == first + 2
        rows = sorted(merged.to_table().to_pylist(), key=lambda row: row["id"])
        assert rows == [
            {"id": 1, "name": "a", "created": "r1", "extra": None},
            {"id": 2, "name": "B", "created": "r1", "extra": "x"},  # merge_exclude_columns kept r1
            {"id": 3, "name": "c", "created": "r2", "extra": "y"},
        ]

        pairs = self._dataset(project, lancens_root, "delete_insert")
        before = pairs.version
        run_dbt(["run", "--select", "delete_insert", "--vars", "{round: 2}"])
        pairs = self._dataset(project, lancens_root, "delete_insert")
        assert pairs.version == before + 1
        assert sorted((r["id"], r["part"], r["v"]) for r in pairs.to_table().to_pylist()) == [
            (1, "p", 2),
            (1, "p", 3),
            (1, "q", 1),
        ]

        run_dbt(["run", "--select", "merged", "--vars", "{round: 2}"])  # same batch again: no duplicates
        merged = self._dataset(project, lancens_root, "merged")
        assert merged.version == first + 3
        ids = merged.to_table().column("id").to_pylist()
        assert sorted(ids) == [1, 2, 3]

        run_dbt(["run", "--select", "merged", "--full-refresh"])  # same table, next version
        merged = self._dataset(project, lancens_root, "merged")
        assert merged.version == first + 4
        assert merged.count_rows() == 2
        assert merged.checkout_version(first).count_rows() == 2


# A merge on `id`; EVOLVING also selects a new column in round 3 (a schema change).
STAGED = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='append_new_columns') }}
select 1 as id, 'r{{ var("round", 1) }}' as tag
union all select {{ var('round', 1) + 1 }} as id, 'r{{ var("round", 1) }}' as tag
"""
EVOLVING = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='append_new_columns') }}
select 1 as id, 'r{{ var("round", 1) }}' as tag{% if var('round', 1) == 3 %}, 0 as n{% endif %}
union all select {{ var('round', 1) + 1 }} as id, 'r{{ var("round", 1) }}' as tag
{%- if var('round', 1) == 3 %}, 0 as n{% endif %}
"""
# Drops column `n` in round 3 (`sync_all_columns`: the kept columns are rewritten).
NARROWING = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='sync_all_columns') }}
select 1 as id, 'r{{ var("round", 1) }}' as tag{% if var('round', 1) < 3 %}, 0 as n{% endif %}
"""
# Appends; selects a new column in round 3 (its rows are written against the staged schema change).
APPENDING = """
{{ config(materialized='incremental', incremental_strategy='append', on_schema_change='append_new_columns') }}
select {{ var('round', 1) }} as id{% if var('round', 1) == 3 %}, 'new' as extra{% endif %}
"""
# Its post-hook changes the type of `n` in round 3 (`ALTER COLUMN ... TYPE`: the table is rewritten).
RETYPED = """
{{ config(materialized='incremental', unique_key='id',
          post_hook=("alter table {{ this }} alter column n type bigint" if var('round', 1) == 3 else [])) }}
select 1 as id, cast({{ var('round', 1) }} as int) as n
"""
# Runs after `staged` in the same run and records the version namespace readers see meanwhile.
OBSERVER = """
import os

from dbt.adapters.lancens.namespace import DirectoryNamespace


def model(dbt, session):
    dbt.config(materialized="table")
    frame = dbt.ref("staged")
    ns = DirectoryNamespace(os.environ["LANCENS_TEST_ROOT"])
    table = [*os.environ["LANCENS_TEST_SCHEMA"].split("."), "staged"]
    seen = ns.describe_table(table).version if ns.table_exists(table) else None  # new: unpublished
    return session.createDataFrame([(seen, frame.count())], "seen_version long, rows_in_run long")
"""


class TestIncrementalAtomicPublish(AtomicPublishProject):
    """In an atomic-publish run the merge is staged, then published with the run; a schema change is
    staged as a version of its own with the merged rows on top of it, both published by the run."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "staged.sql": STAGED,
            "evolving.sql": EVOLVING,
            "narrowing.sql": NARROWING,
            "retyped.sql": RETYPED,
            "appending.sql": APPENDING,
            "observer.py": OBSERVER,
        }

    def test_merge_is_staged_and_published(
        self, project, dbt_profile_target: dict, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        monkeypatch.setenv("LANCENS_TEST_ROOT", dbt_profile_target["root"])
        monkeypatch.setenv("LANCENS_TEST_SCHEMA", project.test_schema)

        def read(name: str) -> tuple[int, list[tuple[int, str]]]:
            info = ns.describe_table([project.test_schema, name])
            dataset = lance.dataset(info.location)
            assert dataset.version == info.version  # plain Lance agrees with the namespace
            return info.version, sorted((r["id"], r["tag"]) for r in dataset.to_table().to_pylist())

        run_dbt(["run"])
        first, rows = read("staged")
        assert rows == [(1, "r1"), (2, "r1")]

        run_dbt(["run", "--vars", "{round: 2}"])
        assert read("staged") == (first + 1, [(1, "r2"), (2, "r1"), (3, "r2")])
        assert read("evolving")[0] == first + 1
        # inside the run, the next model read the merged rows while readers still saw `first`
        observed = lance.dataset(ns.describe_table([project.test_schema, "observer"]).location)
        assert observed.to_table().to_pylist() == [{"seen_version": first, "rows_in_run": 3}]

        # a schema change is staged as a version of its own, the merged rows on top of it
        run_dbt(["run", "--select", "evolving", "--vars", "{round: 3}"])
        info = ns.describe_table([project.test_schema, "evolving"])
        evolved = lance.dataset(info.location)
        assert evolved.version == info.version == first + 3
        assert evolved.schema.names == ["id", "tag", "n"]
        assert sorted(evolved.to_table().to_pylist(), key=lambda row: row["id"]) == [
            {"id": 1, "tag": "r3", "n": 0},
            {"id": 2, "tag": "r1", "n": None},
            {"id": 3, "tag": "r2", "n": None},
            {"id": 4, "tag": "r3", "n": 0},
        ]
        assert evolved.checkout_version(first + 2).schema.names == ["id", "tag", "n"]  # the change alone
        assert evolved.checkout_version(first + 2).count_rows() == 3

        # a dropped column: the rewritten table is staged, the merged rows on top of it
        run_dbt(["run", "--select", "narrowing", "--vars", "{round: 3}"])
        info = ns.describe_table([project.test_schema, "narrowing"])
        narrowed = lance.dataset(info.location)
        assert narrowed.version == info.version == first + 3
        assert narrowed.schema.names == ["id", "tag"]
        assert narrowed.to_table().to_pylist() == [{"id": 1, "tag": "r3"}]
        assert narrowed.checkout_version(first + 2).to_table().to_pylist() == [{"id": 1, "tag": "r2"}]

        # a type change in the model's post-hook: the rewrite is staged on top of the merged rows
        run_dbt(["run", "--select", "retyped", "--vars", "{round: 3}"])
        info = ns.describe_table([project.test_schema, "retyped"])
        retyped = lance.dataset(info.location)
        assert retyped.version == info.version == first + 3
        assert retyped.schema.field("n").type == pa.int64()
        assert retyped.to_table().to_pylist() == [{"id": 1, "n": 3}]
        merged = retyped.checkout_version(first + 2)
        assert merged.schema.field("n").type == pa.int32()
        assert merged.to_table().to_pylist() == [{"id": 1, "n": 3}]

        # appended rows with a new column: their files carry the staged schema change's columns
        run_dbt(["run", "--select", "appending", "--vars", "{round: 3}"])
        info = ns.describe_table([project.test_schema, "appending"])
        appended = lance.dataset(info.location)
        assert appended.version == info.version == first + 3
        assert sorted(appended.to_table().to_pylist(), key=lambda row: row["id"]) == [
            {"id": 1, "extra": None},
            {"id": 2, "extra": None},
            {"id": 3, "extra": "new"},
        ]


MERGE_PREDICATES = """
{{ config(materialized='incremental', unique_key='id', incremental_strategy=var('strategy', 'merge'),
   incremental_predicates=["DBT_INTERNAL_DEST.d >= date'2024-01-02'"]) }}
{% if var('round', 1) == 1 %}
select 1 as id, date'2024-01-01' as d, 'a' as name union all select 2, date'2024-01-02', 'b'
{% elif var('round') == 2 %}
select 1 as id, date'2024-01-05' as d, 'A' as name union all select 2, date'2024-01-05', 'B'
{% elif var('round') == 3 %}
select 1 as id, date'2024-01-10' as d, 'X' as name
{% else %}
select 2 as id, date'2024-01-11' as d, 'Y' as name union all select 2, date'2024-01-12', 'Z'
{% endif %}
"""

MERGE_ABSENT = """
{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge',
          on_schema_change='ignore') }}
{% if var('round', 1) == 1 %}
select 1 as id, 'a' as a, 'b1' as b union all select 2, 'a', 'b2'
{% else %}
select 1 as id, 'A' as a, 'c1' as c union all select 3, 'a', 'c3'
{% endif %}
"""


NULL_PARTITION = """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite', partition_by=['p', 'q']) }}
{% if var('round', 1) == 1 %}
select 1 as id, 'x' as p, 1 as q union all select 2, 'y', 1 union all select 3, cast(null as string), 1
union all select 4, cast(null as string), 2
{% else %}
select 10 as id, 'x' as p, 1 as q union all select 30, cast(null as string), 1
{% endif %}
"""

FAILING_SCHEMA_CHANGE = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='append_new_columns') }}
{% if var('round', 1) == 1 %}
select 1 as id, 1 as n, 'x' as b
{% else %}
select 1 as id, 1e20d as n, 'c' as c
{% endif %}
"""


SYNC_RETYPED = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='sync_all_columns') }}
{% if var('round', 1) == 1 %}
select 1 as id, 10 as a, cast(1.5 as decimal(4, 2)) as d, 'x' as s
{% else %}
select 2 as id, 'twenty' as a, cast(2.25 as decimal(10, 3)) as d, 's' as s
{% endif %}
"""

SYNC_RETYPE_FAILS = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='sync_all_columns') }}
{% if var('round', 1) == 1 %}
select 1 as id, 'x' as s
{% else %}
select 2 as id, 5 as s
{% endif %}
"""

# round 2 drops `old`, adds `c`, and repeats key 1: the merge fails after the schema change committed
SYNC_THEN_AMBIGUOUS = """
{{ config(materialized='incremental', unique_key='id', on_schema_change=var('change', 'sync_all_columns')) }}
{% if var('round', 1) == 1 %}
select 1 as id, 'o' as old, 1 as v
{% else %}
select 1 as id, 2 as v, 'c' as c union all select 1 as id, 3 as v, 'd' as c
{% endif %}
"""

# round 1 stores arrays, structs and maps whose nested values Spark infers as never NULL
NESTED_NULLS = """
{{ config(materialized=var('materialized', 'incremental')) }}
{% if var('round', 1) == 1 %}
select 1 as id, array(1, 2) as arr, named_struct('a', 1, 'b', 'x') as st, map('k', 1) as mp
{% else %}
select 2 as id, array(1, cast(null as int)) as arr, named_struct('a', cast(null as int), 'b', 'y') as st,
       map('k', cast(null as int)) as mp
union all select 3, cast(null as array<int>), cast(null as struct<a:int, b:string>), map('j', 2)
{% endif %}
"""


def _rows(root: str, schema: str, name: str) -> list[tuple]:
    info = DirectoryNamespace(root).describe_table([schema, name])
    return sorted(tuple(row.values()) for row in lance.dataset(info.location).to_table().to_pylist())


class TestIncrementalPredicatesAndAbsentColumns:
    """`incremental_predicates` limit which target rows a merge or delete+insert touches (rows of the
    same key that fail them stay), and a merge keeps the values of columns the model no longer selects."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "with_predicates.sql": MERGE_PREDICATES,
            "absent.sql": MERGE_ABSENT,
            "null_partition.sql": NULL_PARTITION,
            "failing_change.sql": FAILING_SCHEMA_CHANGE,
            "sync_retyped.sql": SYNC_RETYPED,
            "sync_retype_fails.sql": SYNC_RETYPE_FAILS,
            "sync_then_ambiguous.sql": SYNC_THEN_AMBIGUOUS,
            "nested_nulls.sql": NESTED_NULLS,
            "nested_nulls_table.sql": NESTED_NULLS,
        }

    @pytest.mark.parametrize("strategy", ["merge", "delete+insert"])
    def test_predicates_limit_the_rows_replaced(self, project, lancens_root: str, strategy: str) -> None:
        def run(round_: int, expect_pass: bool = True) -> None:
            arguments = f"{{round: {round_}, strategy: '{strategy}'}}"
            run_dbt(["run", "--select", "with_predicates", "--vars", arguments], expect_pass=expect_pass)

        run_dbt(
            ["run", "--select", "with_predicates", "--full-refresh", "--vars", f"{{strategy: '{strategy}'}}"]
        )
        run(2)  # id 1's row (01-01) fails the predicate: kept, and the new id 1 row is added
        run(3)  # matches only id 1's 01-05 row
        expected = [
            (1, dt.date(2024, 1, 1), "a"),
            (1, dt.date(2024, 1, 10), "X"),
            (2, dt.date(2024, 1, 5), "B"),
        ]
        assert _rows(lancens_root, project.test_schema, "with_predicates") == expected
        if strategy == "merge":  # two rows of the result match the same target row: dbt's MERGE fails
            run(4, expect_pass=False)
            assert _rows(lancens_root, project.test_schema, "with_predicates") == expected

    def test_merge_keeps_values_of_columns_no_longer_selected(self, project, lancens_root: str) -> None:
        run_dbt(["run", "--select", "absent"])
        run_dbt(["run", "--select", "absent", "--vars", "{round: 2}"])
        assert _rows(lancens_root, project.test_schema, "absent") == [
            (1, "A", "b1"),
            (2, "a", "b2"),
            (3, "a", None),
        ]

    def test_insert_overwrite_replaces_the_null_partition(self, project, lancens_root: str) -> None:
        """As Spark's dynamic partition overwrite does: NULL is a partition like any other."""
        run_dbt(["run", "--select", "null_partition"])
        run_dbt(["run", "--select", "null_partition", "--vars", "{round: 2}"])
        assert _rows(lancens_root, project.test_schema, "null_partition") == [
            (2, "y", 1),
            (4, None, 2),
            (10, "x", 1),
            (30, None, 1),
        ]

    def test_a_failed_run_commits_no_schema_change(self, project, lancens_root: str) -> None:
        run_dbt(["run", "--select", "failing_change"])
        info = DirectoryNamespace(lancens_root).describe_table([project.test_schema, "failing_change"])
        run_dbt(
            ["run", "--select", "failing_change", "--vars", "{round: 2}"], expect_pass=False
        )  # 1e20 overflows an int
        after = DirectoryNamespace(lancens_root).describe_table([project.test_schema, "failing_change"])
        assert after.version == info.version
        assert lance.dataset(after.location).schema.names == ["id", "n", "b"]

    @pytest.mark.parametrize("change", ["sync_all_columns", "append_new_columns"])
    def test_a_run_failing_after_its_schema_change_leaves_the_table_as_it_was(
        self, project, lancens_root: str, change: str
    ) -> None:
        """The schema change commits before the merge finds two rows for key 1; the failed run then
        commits the version it started from again, so `old` keeps its values and `c` is not added."""
        table = [project.test_schema, "sync_then_ambiguous"]
        run_dbt(
            ["run", "--select", "sync_then_ambiguous", "--full-refresh", "--vars", f"{{change: {change}}}"]
        )
        before = DirectoryNamespace(lancens_root).describe_table(table).version
        result = run_dbt(
            ["run", "--select", "sync_then_ambiguous", "--vars", f"{{round: 2, change: {change}}}"],
            expect_pass=False,
        )
        message = result.results[0].message
        assert (
            "several rows of the model's result match the same row of the table on unique_key (id)" in message
        )
        assert ".rs:" not in message  # Lance's own message names its source file
        info = DirectoryNamespace(lancens_root).describe_table(table)
        assert info.version == before + 2  # the schema change, then its undoing
        dataset = lance.dataset(info.location)
        assert dataset.schema.names == ["id", "old", "v"]
        assert dataset.to_table().to_pylist() == [{"id": 1, "old": "o", "v": 1}]

    @pytest.mark.parametrize("model", ["nested_nulls", "nested_nulls_table"])
    def test_nested_values_first_written_without_nulls_take_nulls_later(
        self, project, lancens_root: str, model: str
    ) -> None:
        """Spark infers `array(1, 2)`'s elements and `named_struct('a', 1)`'s field as never NULL;
        stored so, no later run could write a NULL there (as Delta Lake, they are stored nullable)."""
        materialized = "incremental" if model == "nested_nulls" else "table"
        run_dbt(["run", "--select", model, "--vars", f"{{materialized: {materialized}}}"])
        run_dbt(["run", "--select", model, "--vars", f"{{round: 2, materialized: {materialized}}}"])
        info = DirectoryNamespace(lancens_root).describe_table([project.test_schema, model])
        rows = sorted(lance.dataset(info.location).to_table().to_pylist(), key=lambda row: row["id"])
        expected = [
            {"id": 2, "arr": [1, None], "st": {"a": None, "b": "y"}, "mp": [("k", None)]},
            {"id": 3, "arr": None, "st": None, "mp": [("j", 2)]},
        ]
        if materialized == "incremental":
            expected.insert(0, {"id": 1, "arr": [1, 2], "st": {"a": 1, "b": "x"}, "mp": [("k", 1)]})
        assert rows == expected

    def test_sync_all_columns_gives_columns_the_models_types(self, project, lancens_root: str) -> None:
        """As dbt-core's `alter_column_type`: the stored values are cast to the model's type in the
        schema change's version, then the run's rows are merged (it used to keep the old types and
        cast the model's values into them)."""
        run_dbt(["run", "--select", "sync_retyped"])
        before = (
            DirectoryNamespace(lancens_root).describe_table([project.test_schema, "sync_retyped"]).version
        )
        run_dbt(["run", "--select", "sync_retyped", "--vars", "{round: 2}"])
        info = DirectoryNamespace(lancens_root).describe_table([project.test_schema, "sync_retyped"])
        table = lance.dataset(info.location)
        assert info.version == before + 2  # the schema change, then the rows
        assert str(table.schema.field("a").type) == "string"
        assert table.schema.field("d").type == pa.decimal128(10, 3)
        assert _rows(lancens_root, project.test_schema, "sync_retyped") == [
            (1, "10", Decimal("1.500"), "x"),
            (2, "twenty", Decimal("2.250"), "s"),
        ]

    def test_a_type_the_stored_values_cannot_take_fails_and_changes_nothing(
        self, project, lancens_root: str
    ) -> None:
        run_dbt(["run", "--select", "sync_retype_fails"])
        info = DirectoryNamespace(lancens_root).describe_table([project.test_schema, "sync_retype_fails"])
        run_dbt(["run", "--select", "sync_retype_fails", "--vars", "{round: 2}"], expect_pass=False)  # 'x'
        after = DirectoryNamespace(lancens_root).describe_table([project.test_schema, "sync_retype_fails"])
        assert after.version == info.version
        assert str(lance.dataset(after.location).schema.field("s").type) == "string"
        assert _rows(lancens_root, project.test_schema, "sync_retype_fails") == [(1, "x")]


UPDATE_COLUMNS = """
{{ config(materialized='incremental', unique_key='id', merge_update_columns=var('update', [])) }}
select 1 as id, '{{ var("round", 1) }}' as a, '{{ var("round", 1) }}' as b
"""
BOTH_COLUMN_LISTS = """
{{ config(materialized='incremental', unique_key='id', merge_update_columns=['a'],
          merge_exclude_columns=['b']) }}
select 1 as id, 'x' as a, 'y' as b
"""


class TestMergeColumnLists:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"update_columns.sql": UPDATE_COLUMNS, "both_lists.sql": BOTH_COLUMN_LISTS}

    def test_an_empty_update_list_updates_every_column(self, project, lancens_root: str) -> None:
        """As dbt's get_merge_update_columns: an empty `merge_update_columns` means no restriction."""
        run_dbt(["run", "--select", "update_columns"])
        run_dbt(["run", "--select", "update_columns", "--vars", "{round: 2}"])
        assert _rows(lancens_root, project.test_schema, "update_columns") == [(1, "2", "2")]
        run_dbt(["run", "--select", "update_columns", "--vars", "{round: 3, update: [a]}"])
        assert _rows(lancens_root, project.test_schema, "update_columns") == [(1, "3", "2")]

    def test_both_column_lists_fail_naming_them(self, project) -> None:
        run_dbt(["run", "--select", "both_lists"])  # the first run creates the table
        results = run_dbt(["run", "--select", "both_lists"], expect_pass=False)
        assert "merge_update_columns and merge_exclude_columns cannot both be set" in results[0].message


# A project's own strategy, as dbt documents them: it reads the table's columns from `dest_columns`
# (which the adapter reads only when a strategy does) and returns SQL for dbt to run.
INSERT_NAMED_SQL = """
{% macro get_incremental_insert_named_sql(arg_dict) %}
  {%- set names = arg_dict['dest_columns'] | map(attribute='name') | list -%}
  {%- set count = arg_dict['dest_columns'] | length -%}
  {%- do log('dest_columns: ' ~ names | join(',') ~ ' (' ~ count ~ ')', info=true) -%}
  insert into {{ arg_dict['target_relation'] }} ({{ names | join(', ') }})
  select {{ names | join(', ') }} from ({{ arg_dict['compiled_code'] }}) as new_rows
{% endmacro %}
"""

INSERT_NAMED = """
{{ config(materialized='incremental', incremental_strategy='insert_named') }}
select {{ var('round', 1) }} as id, 'r{{ var('round', 1) }}' as label, 0 as extra
"""

INSERT_NAMED_LATER = """
{{ config(materialized='incremental', incremental_strategy='insert_named') }}
select 'r{{ var('round', 1) }}' as label, {{ var('round', 1) }} as id, 9 as extra
"""


class TestCustomStrategyReadsDestColumns:
    @pytest.fixture(scope="class")
    def macros(self) -> dict[str, str]:
        return {"insert_named.sql": INSERT_NAMED_SQL}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"insert_named.sql": INSERT_NAMED}

    def test_a_projects_strategy_gets_the_tables_columns(self, project, lancens_root: str) -> None:
        run_dbt(["run"])
        # the table's three columns, in its order, reach the strategy, which inserts by name
        write_file(INSERT_NAMED_LATER, project.project_root, "models", "insert_named.sql")
        _, output = run_dbt_and_capture(["run", "--vars", "{round: 2}"])
        assert "dest_columns: id,label,extra (3)" in output
        table = DirectoryNamespace(lancens_root).describe_table([project.test_schema, "insert_named"])
        rows = sorted(lance.dataset(table.location).to_table().to_pylist(), key=lambda row: row["id"])
        assert rows == [
            {"id": 1, "label": "r1", "extra": 0},
            {"id": 2, "label": "r2", "extra": 9},
        ]
