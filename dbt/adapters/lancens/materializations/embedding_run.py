"""The `embeddings` config in a build: the model's frame with its vector columns computed by Spark.

Before anything is written, each entry is checked in dbt's process: the source column must be a
string column of the model, the vector column must not be (the build adds it), and the function
must be found, created and embed a probe text (`functions.checked_dimension`). On an incremental run
the table must already hold the vector column with the same function and size (else: run with
`--full-refresh`, which re-embeds every row).

The vectors are computed in Spark tasks (`mapInArrow`, `batches.embed_batches`), never on the
driver. With a `unique_key`, an incremental run first joins the model's rows to the table's stored
text and vector (same key): a row whose text is unchanged keeps its vector, so only new or changed
text is embedded. The vector column is written as `fixed_size_list<float32, N>` and carries its
LanceDB entry in its Spark field metadata, which `commits/writes.py` records in the table's schema
metadata (`embedding_functions`) on a full write; appends and merges keep the table's schema.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from dbt.adapters.events.logging import AdapterLogger
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from dbt.adapters.lancens.embeddings import functions
from dbt.adapters.lancens.embeddings.batches import BatchPlan, Reuse, embed_batches
from dbt.adapters.lancens.embeddings.config import EmbeddingSpec, parse_embeddings
from dbt.adapters.lancens.metadata.engine_dataset import latest
from dbt.adapters.lancens.namespace import errors
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.runtime.table_frames import table_frame
from dbt.adapters.lancens.spark.column_names import ColumnMap
from dbt.adapters.lancens.spark.types import FIXED_SIZE_METADATA, spark_arrow_schema

logger = AdapterLogger("lancens")
_HELPER = "__lancens_stored_"


class EmbeddingBuildError(ValueError):
    """An `embeddings` entry that this build cannot apply; raised before anything is written."""


@dataclass
class Embedded:
    """The frame to write, and the counts its tasks report once it has been written."""

    frame: DataFrame
    relation: str = ""
    counters: tuple[Any, Any] | None = None

    def summary(self) -> str:
        """`; N embedded, M reused` for the run's response, and the same in the log."""
        if not self.relation:
            return ""
        if self.counters is None:  # Spark Connect has no accumulators
            logger.info(f"embeddings of {self.relation}: computed in Spark (counts need classic Spark)")
            return ""
        embedded, reused = (int(counter.value) for counter in self.counters)
        logger.info(f"embeddings of {self.relation}: {embedded} rows embedded, {reused} reused")
        return f"; {embedded} embedded, {reused} reused"


def embedded_frame(
    runtime: LancensRuntime,
    table_id: list[str],
    frame: DataFrame,
    raw: Any,
    key: Sequence[str] = (),
    adds_rows: bool = False,
) -> Embedded:
    """`frame` with each entry's vector column added (lazily: Spark computes it when the frame is
    written); unchanged without an `embeddings` config."""
    specs = parse_embeddings(raw)
    if not specs:
        return Embedded(frame)
    fields = ColumnMap((field.name, field) for field in frame.schema.fields)
    specs = [_checked_columns(spec, fields) for spec in specs]
    dimensions = [functions.checked_dimension(spec) for spec in specs]
    entries = [functions.entry_metadata(spec) for spec in specs]
    stored = _stored(runtime, table_id) if adds_rows else None
    if stored is not None:
        for spec, dimension, entry in zip(specs, dimensions, entries, strict=True):
            _check_stored(stored.schema, spec, dimension, entry)
    keys = [fields[name].name for name in key if name in fields]
    reuse = stored is not None and bool(keys) and len(keys) == len(key)
    source = _joined(runtime, frame, stored, specs, keys) if reuse else frame
    columns = tuple(frame.columns)
    vectors = [T.StructField(spec.vector, T.ArrayType(T.FloatType(), True), True) for spec in specs]
    output = T.StructType([*frame.schema.fields, *vectors])
    plan = BatchPlan(
        tuple(specs),
        tuple(dimensions),
        tuple(_reuse(n) if reuse else None for n in range(len(specs))),
        columns,
        spark_arrow_schema(output),
    )
    counters = _counters(frame)
    computed = source.mapInArrow(functools.partial(embed_batches, plan, counters), output)
    projection = [F.col(_quoted(name)) for name in columns]
    for spec, dimension, entry in zip(specs, dimensions, entries, strict=True):
        metadata = {FIXED_SIZE_METADATA: dimension, functions.FIELD_METADATA_KEY: json.dumps(entry)}
        projection.append(F.col(_quoted(spec.vector)).alias(spec.vector, metadata=metadata))
    return Embedded(computed.select(*projection), ".".join(table_id), counters)


def _checked_columns(spec: EmbeddingSpec, fields: ColumnMap[T.StructField]) -> EmbeddingSpec:
    """`spec` with its source column as the model spells it."""
    names = ", ".join(field.name for field in fields.values())
    source = fields.get(spec.source)
    if source is None:
        raise EmbeddingBuildError(
            f"embeddings: source column {spec.source!r} is not in the model's result (its columns: {names})"
        )
    if not isinstance(source.dataType, T.StringType):
        raise EmbeddingBuildError(
            f"embeddings: source column {source.name!r} must be a string column, "
            f"got {source.dataType.simpleString()}"
        )
    if spec.vector in fields:
        raise EmbeddingBuildError(
            f"embeddings: the model selects {fields[spec.vector].name!r}, the vector column the "
            "`embeddings` config computes; remove it from the model's columns"
        )
    return dataclasses.replace(spec, source=source.name)


def _check_stored(schema: pa.Schema, spec: EmbeddingSpec, dimension: int, entry: dict[str, Any]) -> None:
    """An incremental run adds rows to vectors made by the same function, of the same size."""
    rebuild = "run with --full-refresh to re-embed every row"
    field = ColumnMap((f.name, f) for f in schema).get(spec.vector)
    if field is None:
        raise EmbeddingBuildError(
            f"embeddings: the table has no vector column {spec.vector!r} yet; {rebuild}"
        )
    if not pa.types.is_fixed_size_list(field.type) or field.type.list_size != dimension:
        raise EmbeddingBuildError(
            f"embeddings: vector column {field.name!r} holds {field.type}, but function "
            f"{spec.function!r} makes {dimension}-dimensional vectors; {rebuild}"
        )
    recorded = ColumnMap(functions.recorded_entries(schema.metadata).items()).get(spec.vector)
    wanted = {key: entry[key] for key in ("name", "model")}
    if recorded is None or {key: recorded.get(key) for key in wanted} != wanted:
        was = "no function" if recorded is None else f"{recorded.get('name')} {recorded.get('model')}"
        raise EmbeddingBuildError(
            f"embeddings: vector column {field.name!r} was made by {was}, the config now names "
            f"{entry['name']} {entry['model']}; {rebuild}"
        )


def _stored(runtime: LancensRuntime, table_id: list[str]) -> Any:
    """The table's latest version; None when it does not exist or has no data yet."""
    try:
        if runtime.namespace.describe_table(table_id).declared_only:
            return None
    except errors.TableNotFoundError:
        return None
    return latest(runtime.namespace, table_id)


def _joined(
    runtime: LancensRuntime, frame: DataFrame, dataset: Any, specs: list[EmbeddingSpec], keys: list[str]
) -> DataFrame:
    """`frame` with, per entry, the stored text and vector of the table's row with the same key
    (one row per key; NULL where there is none)."""
    stored = ColumnMap((name, name) for name in dataset.schema.names)
    wanted = [stored[k] for k in keys]
    for spec in specs:
        wanted += [stored[spec.source]] if spec.source in stored else []
        wanted.append(stored[spec.vector])
    table = table_frame(runtime, dataset.uri, dataset.version, list(dict.fromkeys(wanted)))
    tag = uuid.uuid4().hex[:8]
    renamed = [F.col(_quoted(stored[k])).alias(f"{_HELPER}key_{tag}_{n}") for n, k in enumerate(keys)]
    for n, spec in enumerate(specs):
        text = F.col(_quoted(stored[spec.source])) if spec.source in stored else F.lit(None).cast("string")
        reuse = _reuse(n)
        renamed += [text.alias(reuse.text), F.col(_quoted(stored[spec.vector])).alias(reuse.vector)]
    table = table.select(*renamed).dropDuplicates([f"{_HELPER}key_{tag}_{n}" for n in range(len(keys))])
    on = [frame[_quoted(k)] == table[f"{_HELPER}key_{tag}_{n}"] for n, k in enumerate(keys)]
    return frame.join(table, on, "left")


def _reuse(position: int) -> Reuse:
    return Reuse(f"{_HELPER}text_{position}", f"{_HELPER}vector_{position}")


def _counters(frame: DataFrame) -> tuple[Any, Any] | None:
    """Two int accumulators (rows embedded, rows reused) in classic Spark; None through Spark Connect."""
    try:
        context = frame.sparkSession.sparkContext
    except Exception:  # noqa: BLE001 - Spark Connect raises here
        return None
    return context.accumulator(0), context.accumulator(0)


def _quoted(name: str) -> str:
    return f"`{name.replace('`', '``')}`"
