"""A column whose name holds a dot: Spark allows it (backticks), Lance does not (a top-level name
may not contain `.`). The build fails naming the column and the rule, and writes nothing; it used
to fail with Spark's UNRESOLVED_COLUMN for `a`.`b`, which points at the query instead. (A name with
a backtick is refused the same way: tests/unit/spark/test_write.py.)"""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lancens.namespace import DirectoryNamespace

MODEL = (
    "{{ config(materialized='table') }} select 1 as id{% if var('dotted', false) %}, 4 as `a.b`{% endif %}"
)


class TestDottedColumn:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"dotted.sql": MODEL}

    def test_fails_naming_the_column_and_keeps_the_table(self, project, lancens_root: str) -> None:
        run_dbt(["run"])
        namespace = DirectoryNamespace(lancens_root)
        before = namespace.describe_table([project.test_schema, "dotted"]).version
        results, _ = run_dbt_and_capture(["run", "--vars", "{dotted: true}"], expect_pass=False)
        message = results[0].message
        assert "UNRESOLVED_COLUMN" not in message
        assert "a Lance table cannot hold a column whose name contains '.'" in message and "a.b" in message
        assert namespace.describe_table([project.test_schema, "dotted"]).version == before
