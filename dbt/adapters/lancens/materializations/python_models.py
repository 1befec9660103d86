"""Python models run in-process on the dbt process's SparkSession.

dbt compiles a Python model into its source plus helpers (`dbtObj`, `ref`, `source`, `config`).
The model's `ref()`/`source()` load relations through the runtime, so namespace tables are
registered in Spark's catalog on first use, exactly as for SQL models.
"""

from __future__ import annotations

import warnings
from typing import Any

from pyspark.sql import DataFrame

from dbt.adapters.lancens.runtime.process import LancensRuntime


def run_python_model(runtime: LancensRuntime, compiled_code: str, table_id: list[str]) -> DataFrame:
    """Execute the compiled model and return its result as a Spark DataFrame.

    The model's own table is registered in Spark's catalog first: an incremental model reads it
    with `session.sql(f"... {dbt.this}")` (dbt's documented pattern), which no `ref` registers."""
    model_name = table_id[-1]
    # `spark` is a global of the model's module too, as on Databricks and in dbt-spark's models.
    runtime.activate()  # pandas-on-Spark and the `lance` source look for the thread's session
    runtime.register_relation(table_id[:-1], model_name)  # False on a first build: nothing to read
    scope: dict[str, Any] = {"__name__": f"dbt_python_model_{model_name}", "spark": runtime.spark}
    exec(compile(compiled_code, f"<dbt python model {model_name}>", "exec"), scope)
    dbt = scope["dbtObj"](lambda name: runtime.sql(f"SELECT * FROM {name}"))
    return to_spark_frame(runtime, scope["model"](dbt, runtime.spark), model_name)


def to_spark_frame(runtime: LancensRuntime, result: Any, model_name: str) -> DataFrame:
    """Accept what a model may return: a Spark DataFrame, a pandas-on-Spark DataFrame
    (`df.pandas_api()`), a pandas DataFrame or an Arrow table. Indexes are not columns."""
    if isinstance(result, DataFrame):
        return result
    # Only a pandas-on-Spark result imports pyspark.pandas (no import cost otherwise). Its class says
    # so; `sys.modules` would not do: there another thread's model may be importing it half-way.
    if type(result).__module__.startswith("pyspark.pandas.") and isinstance(result, _pandas_on_spark_frame()):
        with warnings.catch_warnings():  # dropping the index is the rule here, not news to the user
            warnings.filterwarnings("ignore", message=".*index_col.*")
            return result.to_spark()  # stays distributed; the index is dropped, as for pandas below
    import pandas as pd
    import pyarrow as pa

    if isinstance(result, pa.Table):
        return runtime.spark.createDataFrame(result)
    if isinstance(result, pd.DataFrame):
        return runtime.spark.createDataFrame(pa.Table.from_pandas(result, preserve_index=False))
    raise TypeError(
        f"Python model {model_name!r} returned {type(result).__name__}; return a Spark DataFrame, "
        "a pandas-on-Spark DataFrame, a pandas DataFrame or a pyarrow Table"
    )


def _pandas_on_spark_frame() -> type[Any]:
    import pyspark.pandas  # already imported by the model that made the frame: no cost

    return pyspark.pandas.DataFrame
