"""An incremental model whose column changes type (int -> string) says what to do.

`on_schema_change: fail` offered `append_new_columns`, which cannot change a type; `ignore` and
`append_new_columns` keep the table's type and failed with "Failed to parse string: 'two' as a scalar
of type int32" inside a Python worker's traceback. Each now names the column, both types and the
setting that works (`sync_all_columns`), and the table keeps its version and rows.
"""

from __future__ import annotations

import lance
import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lancens.namespace import DirectoryNamespace

MODEL = """{{{{ config(materialized='incremental', on_schema_change='{setting}', {strategy}) }}}}
{{% if var('round', 1) == 1 %}} select 1 as id, 1 as val
{{% else %}} select 2 as id, 'two' as val {{% endif %}}
"""
MERGE = "incremental_strategy='merge', unique_key='id'"
APPEND = "incremental_strategy='append'"
MODELS = {
    "kept_by_merge": ("ignore", MERGE),
    "kept_by_append": ("ignore", APPEND),
    "adds_only": ("append_new_columns", MERGE),
    "fails": ("fail", MERGE),
    "synced": ("sync_all_columns", MERGE),
}


class TestColumnTypeChange:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            f"{name}.sql": MODEL.format(setting=setting, strategy=strategy)
            for name, (setting, strategy) in MODELS.items()
        }

    def test_messages_name_the_column_the_types_and_the_setting(self, project, lancens_root: str) -> None:
        run_dbt(["run"])
        results = {r.node.name: r for r in run_dbt(["run", "--vars", "{round: 2}"], expect_pass=False)}
        assert results["synced"].status == "success"
        for name in ("kept_by_merge", "kept_by_append", "adds_only"):
            message = results[name].message
            assert results[name].status == "error", message
            assert "column val (int in the table, string in the model)" in message, message
            assert f"on_schema_change '{MODELS[name][0]}' keeps the table's type" in message, message
            assert "Set on_schema_change to sync_all_columns" in message, message
            assert "'two'" in message, message  # the value, from the writing task's error
        failed = results["fails"].message
        assert "columns whose type changed: ['val (int -> string)']" in failed, failed
        assert "Set on_schema_change to sync_all_columns (append_new_columns only adds columns" in failed

        namespace = DirectoryNamespace(lancens_root)
        for name in ("kept_by_merge", "kept_by_append", "adds_only", "fails"):
            table = lance.dataset(namespace.describe_table([project.test_schema, name]).location)
            assert table.version == 1 and table.to_table().to_pylist() == [{"id": 1, "val": 1}], name
        synced = lance.dataset(namespace.describe_table([project.test_schema, "synced"]).location)
        assert sorted(synced.to_table().to_pylist(), key=lambda r: r["id"]) == [
            {"id": 1, "val": "1"},
            {"id": 2, "val": "two"},
        ]
