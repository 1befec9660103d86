"""Embedding one Arrow batch as a Spark task does: NULL and blank text give NULL vectors, unchanged
text keeps its stored vector, everything else is embedded in calls of `batch_size` texts."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from dbt.adapters.lancens.embeddings.batches import Reuse, embed_column
from dbt.adapters.lancens.embeddings.config import EmbeddingSpec
from dbt.adapters.lancens.embeddings.functions import EmbeddingFunctionError, checked_dimension
from tests.embedding_functions import hashed_vector, logged_texts


def _spec(tmp_path, **args: object) -> EmbeddingSpec:
    return EmbeddingSpec(
        "body", "v", "lancens-test-hash", json.dumps({"dims": 4, "log": str(tmp_path / "log"), **args}),
        batch_size=2, imports=("tests.embedding_functions",),
    )  # fmt: skip


def test_null_blank_reused_and_embedded(tmp_path) -> None:
    spec = _spec(tmp_path)
    stored = [hashed_vector("old", 4).tolist(), [9.0, 9.0, 9.0, 9.0], None, None, None]
    batch = pa.RecordBatch.from_pydict(
        {
            "body": ["same", "changed", None, " \t", "new"],
            "old_text": ["same", "before", None, " \t", None],
            "old_vector": pa.array(stored, pa.list_(pa.float32())),
        }
    )
    vectors, embedded, reused = embed_column(spec, 4, batch, Reuse("old_text", "old_vector"))
    assert (embedded, reused) == (2, 1)
    assert logged_texts(str(tmp_path / "log")) == ["changed", "new"]
    found = vectors.to_pylist()
    assert found[0] == pytest.approx(stored[0])  # kept, not recomputed
    assert found[1] == pytest.approx(hashed_vector("changed", 4).tolist())
    assert found[2] is None and found[3] is None
    assert found[4] == pytest.approx(hashed_vector("new", 4).tolist())


def test_without_reuse_every_text_is_embedded(tmp_path) -> None:
    batch = pa.RecordBatch.from_pydict({"body": ["a", "b", "c", ""]})
    vectors, embedded, reused = embed_column(_spec(tmp_path), 4, batch, None)
    assert (embedded, reused, vectors.null_count) == (3, 0, 1)
    assert vectors.type == pa.list_(pa.float32())


def test_a_function_is_checked_before_use(tmp_path) -> None:
    assert checked_dimension(_spec(tmp_path)) == 4
    broken = EmbeddingSpec("body", "v", "lancens-test-broken", imports=("tests.embedding_functions",))
    with pytest.raises(EmbeddingFunctionError, match="cannot load the model"):
        checked_dimension(broken)
    with pytest.raises(EmbeddingFunctionError, match="unknown embedding function 'nope'"):
        checked_dimension(EmbeddingSpec("body", "v", "nope"))
    with pytest.raises(EmbeddingFunctionError, match="cannot import module 'no_such_module'"):
        checked_dimension(EmbeddingSpec("body", "v", "nope", imports=("no_such_module",)))
