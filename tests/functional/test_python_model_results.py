"""What a Python model may return: a Spark DataFrame, a pandas DataFrame, a pyarrow Table, or a
pandas-on-Spark DataFrame (`df.pandas_api()`); each becomes the same Lance table."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lancens.namespace import DirectoryNamespace

RESULTS = {
    "spark_result": "return session.range(3).selectExpr('id', 'id * 10 as tens')",
    "pandas_result": "import pandas as pd\n    return pd.DataFrame({'id': [0, 1, 2], 'tens': [0, 10, 20]})",
    "arrow_result": "import pyarrow as pa\n    return pa.table({'id': [0, 1, 2], 'tens': [0, 10, 20]})",
    "pandas_on_spark_result": "return session.range(3).selectExpr('id', 'id * 10 as tens').pandas_api()",
    "pandas_on_spark_indexed": (
        "frame = session.range(3).selectExpr('id', 'id * 10 as tens').pandas_api()\n"
        "    return frame.set_index('id', drop=False).sort_index()"
    ),
}
MODEL = "def model(dbt, session):\n    dbt.config(materialized='table')\n    {body}\n"
WRONG = "def model(dbt, session):\n    return [1, 2, 3]\n"


class TestPythonModelResults:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        files = {f"{name}.py": MODEL.format(body=body) for name, body in RESULTS.items()}
        return {**files, "wrong_result.py": WRONG}

    def test_each_result_kind_is_a_table(self, project, lancens_root: str) -> None:
        results = run_dbt(["run", "--exclude", "wrong_result"])
        assert {r.node.name: r.status for r in results} == dict.fromkeys(RESULTS, "success")
        namespace = DirectoryNamespace(lancens_root)
        for name in RESULTS:
            table = lance.dataset(namespace.describe_table([project.test_schema, name]).location).to_table()
            assert table.column_names == ["id", "tens"], name
            assert sorted(table.to_pylist(), key=lambda row: row["id"]) == [
                {"id": 0, "tens": 0},
                {"id": 1, "tens": 10},
                {"id": 2, "tens": 20},
            ], name

    def test_other_results_are_refused_by_name(self, project) -> None:
        (result,) = run_dbt(["run", "--select", "wrong_result"], expect_pass=False)
        assert result.status == "error"
        assert "wrong_result" in result.message and "returned list" in result.message
        assert "pandas-on-Spark" in result.message


INCREMENTAL_THIS = """
def model(dbt, session):
    dbt.config(materialized="incremental")
    df = session.range(6).selectExpr("id")
    if dbt.is_incremental:
        # dbt's documented pattern: the model's own table, read by name through the session
        max_from_this = f"select max(id) from {dbt.this}"
        df = df.filter(df.id > session.sql(max_from_this).collect()[0][0])
    return df
"""


class TestPythonIncrementalReadsThis:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"py_this.py": INCREMENTAL_THIS}

    def test_session_sql_on_dbt_this(self, project, lancens_root: str) -> None:
        # the table exists in the namespace but this process's Spark has never seen it
        namespace = DirectoryNamespace(lancens_root)
        table = [project.test_schema, "py_this"]
        namespace.create_table(table, pa.table({"id": pa.array([0, 1, 2], pa.int64())}))
        (result,) = run_dbt(["run"])
        assert result.status == "success"
        ids = lance.dataset(namespace.describe_table(table).location).to_table().column("id").to_pylist()
        assert sorted(ids) == [0, 1, 2, 3, 4, 5]
