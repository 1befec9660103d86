"""Python models run in-process on the dbt process's SparkSession.

dbt compiles a Python model into its source plus helpers (`dbtObj`, `ref`, `source`, `config`).
The model's `ref()`/`source()` load relations through the runtime, so namespace tables are
registered in Spark's catalog on first use, exactly as for SQL models.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame

from dbt.adapters.lancens.core.runtime import LancensRuntime


def run_python_model(runtime: LancensRuntime, compiled_code: str, model_name: str) -> DataFrame:
    """Execute the compiled model and return its result as a Spark DataFrame."""
    # `spark` is a global of the model's module too, as on Databricks and in dbt-spark's models.
    scope: dict[str, Any] = {"__name__": f"dbt_python_model_{model_name}", "spark": runtime.spark}
    exec(compile(compiled_code, f"<dbt python model {model_name}>", "exec"), scope)
    dbt = scope["dbtObj"](lambda name: runtime.sql(f"SELECT * FROM {name}"))
    return to_spark_frame(runtime, scope["model"](dbt, runtime.spark), model_name)


def to_spark_frame(runtime: LancensRuntime, result: Any, model_name: str) -> DataFrame:
    """Accept what a model may return: a Spark DataFrame, a pandas DataFrame or an Arrow table."""
    if isinstance(result, DataFrame):
        return result
    import pandas as pd
    import pyarrow as pa

    if isinstance(result, pa.Table):
        return runtime.spark.createDataFrame(result)
    if isinstance(result, pd.DataFrame):
        return runtime.spark.createDataFrame(pa.Table.from_pandas(result, preserve_index=False))
    raise TypeError(
        f"Python model {model_name!r} returned {type(result).__name__}; return a Spark DataFrame, "
        "a pandas DataFrame or a pyarrow Table"
    )
