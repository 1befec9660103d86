"""Embedding Arrow batches in a Spark task (`DataFrame.mapInArrow`).

Each batch is the model's rows, plus, on an incremental run with a `unique_key`, the stored text and
vector of the table's row with the same key (`reuse`). A row keeps its stored vector when its text
is the stored text; a row whose text is NULL, empty or only whitespace gets a NULL vector; every
other row's text is embedded, `batch_size` texts per call of the function, which each worker creates
once (`functions.function_for`). The counts go to Spark accumulators for the run's log.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dbt.adapters.lancens.embeddings.config import EmbeddingSpec
from dbt.adapters.lancens.embeddings.functions import EmbeddingFunctionError, spec_function


@dataclass(frozen=True)
class Reuse:
    """The helper columns holding the stored text and vector of the row with the same key."""

    text: str
    vector: str


@dataclass(frozen=True)
class BatchPlan:
    """Planned on the driver, pickled to every task."""

    specs: tuple[EmbeddingSpec, ...]
    dimensions: tuple[int, ...]
    reuse: tuple[Reuse | None, ...]
    columns: tuple[str, ...]  # the model's columns, passed through
    output: pa.Schema  # the Arrow schema Spark expects back: the model's columns, then the vectors


def embed_batches(
    plan: BatchPlan, counters: tuple[Any, Any] | None, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    embedded = reused = 0
    for batch in batches:
        arrays = [batch.column(name) for name in plan.columns]
        for spec, dimension, reuse, field in zip(
            plan.specs, plan.dimensions, plan.reuse, list(plan.output)[len(plan.columns) :], strict=True
        ):
            vectors, made, kept = embed_column(spec, dimension, batch, reuse)
            arrays.append(vectors.cast(field.type))
            embedded, reused = embedded + made, reused + kept
        yield pa.RecordBatch.from_arrays(arrays, schema=plan.output)
    if counters is not None:
        counters[0].add(embedded)
        counters[1].add(reused)


def embed_column(
    spec: EmbeddingSpec, dimension: int, batch: pa.RecordBatch, reuse: Reuse | None
) -> tuple[pa.Array, int, int]:
    """The batch's vectors for `spec` as `list<float32>`; with the rows embedded and reused."""
    texts = batch.column(spec.source).to_pylist()
    keep = [False] * len(texts)
    if reuse is not None:
        same = pc.and_(
            pc.equal(batch.column(spec.source), batch.column(reuse.text)),
            pc.is_valid(batch.column(reuse.vector)),
        )
        keep = same.fill_null(False).to_pylist()
    wanted = [row for row, text in enumerate(texts) if not keep[row] and text is not None and text.strip()]
    made = _embed(spec, dimension, [texts[row] for row in wanted])
    position: list[int | None] = [None] * len(texts)
    for index, row in enumerate(wanted):
        position[row] = index
    vectors = made.take(pa.array(position, pa.int64())).cast(pa.list_(pa.float32()))
    if reuse is not None:
        stored = batch.column(reuse.vector).cast(pa.list_(pa.float32()))
        vectors = pc.if_else(pa.array(keep, pa.bool_()), stored, vectors)
    return vectors, len(wanted), sum(keep)


def _embed(spec: EmbeddingSpec, dimension: int, texts: list[str]) -> pa.FixedSizeListArray:
    function = spec_function(spec)
    parts = [np.zeros((0, dimension), np.float32)]
    for start in range(0, len(texts), spec.batch_size):
        chunk = texts[start : start + spec.batch_size]
        vectors = function.compute_source_embeddings_with_retry(chunk)
        if len(vectors) != len(chunk):
            raise EmbeddingFunctionError(
                f"embeddings: function {spec.function!r} returned {len(vectors)} vectors "
                f"for {len(chunk)} texts"
            )
        for text, vector in zip(chunk, vectors, strict=True):
            if vector is None or len(vector) != dimension:
                raise EmbeddingFunctionError(
                    f"embeddings: function {spec.function!r} returned a vector of "
                    f"{None if vector is None else len(vector)} values (expected {dimension}) "
                    f"for the text {text[:80]!r}"
                )
        parts.append(np.asarray(vectors, dtype=np.float32).reshape(len(chunk), dimension))
    flat = np.concatenate(parts).reshape(-1)
    return pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.float32()), dimension)
