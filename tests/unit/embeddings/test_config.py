"""The `embeddings` config as dbt parses it: entries, defaults, and every refusal naming its key."""

from __future__ import annotations

import pytest

from dbt.adapters.lancens.embeddings.config import EmbeddingConfigError, EmbeddingSpec, parse_embeddings

ENTRY = {"source": "body", "vector": "body_vector", "function": "lancens-minilm"}


def test_a_mapping_or_a_list() -> None:
    assert parse_embeddings(None) == []
    (spec,) = parse_embeddings(ENTRY)
    assert spec == EmbeddingSpec("body", "body_vector", "lancens-minilm")
    assert (spec.args, spec.batch_size, spec.imports) == ({}, 256, ())
    (spec,) = parse_embeddings([{**ENTRY, "args": {"b": 1, "a": "x"}, "batch_size": 8, "imports": "my.mod"}])
    assert (spec.args_json, spec.batch_size, spec.imports) == ('{"a": "x", "b": 1}', 8, ("my.mod",))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("body", "must be a mapping or a list"),
        ([1], "entry 1 must be a mapping"),
        ({**ENTRY, "model": "x"}, "unknown key `model`"),
        ({"vector": "v", "function": "f"}, "`source` must be a non-empty string"),
        ({**ENTRY, "vector": "BODY"}, "name the same column"),
        ({**ENTRY, "args": [1]}, "`args` must be a mapping"),
        ({**ENTRY, "args": {"x": object()}}, "plain values"),
        ({**ENTRY, "batch_size": 0}, "`batch_size` must be a positive integer"),
        ({**ENTRY, "imports": [""]}, "`imports` must be module names"),
        ([ENTRY, {**ENTRY, "source": "title"}], "vector column 'body_vector' is named twice"),
        ([ENTRY, {**ENTRY, "source": "body_vector", "vector": "v2"}], "is another entry's vector column"),
    ],
)
def test_refusals(raw: object, message: str) -> None:
    with pytest.raises(EmbeddingConfigError, match=message):
        parse_embeddings(raw)
