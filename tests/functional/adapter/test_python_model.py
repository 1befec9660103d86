"""dbt-tests-adapter's python_model suite: Python models run in-process on the dbt process's SparkSession."""

import pytest
from dbt.tests.adapter.python_model import test_spark
from dbt.tests.adapter.python_model.test_python_model import (
    BasePythonEmptyTests,
    BasePythonIncrementalTests,
    BasePythonMetaGetTests,
    BasePythonModelTests,
    BasePythonSampleTests,
)
from dbt.tests.util import run_dbt


class TestPythonModel(BasePythonModelTests):
    pass


class TestPythonIncremental(BasePythonIncrementalTests):
    pass


class TestPythonMetaGet(BasePythonMetaGetTests):
    pass


class TestPythonEmpty(BasePythonEmptyTests):
    pass


class TestPythonSample(BasePythonSampleTests):
    pass


class TestPySpark(test_spark.BasePySparkTests):
    """pandas, PySpark and pandas-on-Spark results; `databricks.koalas` does not exist for PySpark 4."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "pandas_df.py": test_spark.PANDAS_MODEL,
            "pyspark_df.py": test_spark.PYSPARK_MODEL,
            "pandas_on_spark_df.py": test_spark.PANDAS_ON_SPARK_MODEL,
        }

    def test_different_dataframes(self, project) -> None:
        results = run_dbt(["run"])
        assert len(results) == 3
        for name in ("pandas_df", "pyspark_df", "pandas_on_spark_df"):
            rows = project.run_sql(f"select count(*) from {project.test_schema}.{name}", fetch="one")
            assert rows[0] == 5
