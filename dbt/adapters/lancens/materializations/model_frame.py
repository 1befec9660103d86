"""A model's result, made one way for a table build and an incremental run, before anything is written.

The model's code becomes a lazy Spark DataFrame: SQL read with Lance filter pushdown
(`LancensRuntime.sql`), or a Python model run in-process (`python_models.py`). Then, and only when
the model configures them, its `embeddings` columns are added (`embedding_run.py`) and the columns
its `indexes` name are checked and its vector columns sized (`index_run.py`); a model without them
never enters that code. `LancensAdapter.write_relation` hands the result to `commits/writes.py`,
`LancensAdapter.apply_incremental` to `incremental.py`: one hand-off each.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from pyspark.sql import DataFrame

from dbt.adapters.lancens.materializations import embedding_run, index_run, python_models
from dbt.adapters.lancens.materializations.embedding_run import Embedded
from dbt.adapters.lancens.runtime.process import LancensRuntime


def result_frame(
    runtime: LancensRuntime,
    table_id: list[str],
    compiled_code: str,
    language: str,
    *,
    indexes: Any = None,
    embeddings: Any = None,
    key: Sequence[str] = (),
    adds_rows: bool = False,
    on_schema_change: str = "append_new_columns",
) -> Embedded:
    """The frame to write (with the embedding counts its write reports).

    `adds_rows`: the rows go into the existing table (incremental runs), so a vector column keeps
    the table's size and the indexes need the columns the table has after the run
    (`on_schema_change`); `key`: the rows' unique key, by which unchanged text keeps its vector."""
    result = Embedded(model_frame(runtime, compiled_code, language, table_id))
    if embeddings is not None:
        result = embedding_run.embedded_frame(runtime, table_id, result.frame, embeddings, key, adds_rows)
    if indexes is None:
        return result
    checked = index_run.checked_frame(
        runtime,
        table_id,
        result.frame,
        indexes,
        key,
        adds_rows=adds_rows,
        on_schema_change=on_schema_change,
        sample=sample_frame(runtime, compiled_code, language),
    )
    return dataclasses.replace(result, frame=checked)


def model_frame(runtime: LancensRuntime, compiled_code: str, language: str, table_id: list[str]) -> DataFrame:
    """The model's result as a Spark DataFrame (SQL, or a Python model run in-process). A SQL
    model's frame reads with Lance filter pushdown, so it must serve one query only: see
    `sample_frame` for a second look at the same rows."""
    if language == "python":
        return python_models.run_python_model(runtime, compiled_code, table_id)
    return runtime.sql(compiled_code, pushdown=True)


def sample_frame(
    runtime: LancensRuntime, compiled_code: str, language: str
) -> Callable[[], DataFrame] | None:
    """How to get the model's rows again for a query before the write (a vector's size): a SQL
    model analysed anew without pushdown; None for a Python model, whose frame has no pushdown."""
    if language == "python":
        return None
    return lambda: runtime.sql(compiled_code)
