"""The `indexes` model config: what parses, and the key every bad entry is refused by."""

from __future__ import annotations

import pytest

from dbt.adapters.lancens.definitions.index_config import (
    IndexConfigError,
    IndexSpec,
    check_sub_vectors,
    parse_indexes,
    vector_columns,
)


def test_every_type_parses_with_its_own_parameters() -> None:
    specs = parse_indexes(
        [
            {
                "columns": ["embedding"],
                "type": "ivf_pq",
                "metric": "Cosine",
                "num_partitions": 4,
                "num_sub_vectors": 2,
            },
            {"columns": ["embedding"], "type": "ivf_hnsw_sq", "name": "hnsw", "m": 8, "ef_construction": 50},
            {"columns": "embedding", "type": "IVF_FLAT", "name": "flat", "metric": "dot"},
            {"columns": ["body"], "type": "fts", "with_position": True, "stem": False, "language": "English"},
            {"columns": ["id"], "type": "btree"},
            {"columns": ["topic"], "type": "bitmap"},
            {"columns": ["tags"], "type": "label_list"},
        ]
    )
    assert [(s.column, s.type, s.name, s.lance_type) for s in specs] == [
        ("embedding", "ivf_pq", "embedding_ivf_pq", "IVF_PQ"),
        ("embedding", "ivf_hnsw_sq", "hnsw", "IVF_HNSW_SQ"),
        ("embedding", "ivf_flat", "flat", "IVF_FLAT"),
        ("body", "fts", "body_fts", "INVERTED"),
        ("id", "btree", "id_btree", "BTREE"),
        ("topic", "bitmap", "topic_bitmap", "BITMAP"),
        ("tags", "label_list", "tags_label_list", "LABEL_LIST"),
    ]
    assert specs[0].parameters == {"metric": "cosine", "num_partitions": 4, "num_sub_vectors": 2}
    assert vector_columns(specs) == ["embedding"]
    assert parse_indexes(None) == [] and parse_indexes([]) == []


def test_lance_values_that_parse_and_sub_vectors_that_must_divide_the_dimension() -> None:
    for tokenizer in ("simple", "ngram", "icu/split", "jieba/default", "lindera/ipadic"):
        assert parse_indexes([{"columns": ["b"], "type": "fts", "base_tokenizer": tokenizer}])
    (pq,) = parse_indexes([{"columns": ["v"], "type": "ivf_pq", "num_sub_vectors": 3, "num_bits": 4}])
    check_sub_vectors(pq, 6)
    with pytest.raises(
        IndexConfigError, match="`num_sub_vectors` 3 must divide the dimension of column 'v', 4"
    ):
        check_sub_vectors(pq, 4)


def test_fingerprint_changes_with_the_config_only() -> None:
    one = IndexSpec("v", "ivf_pq", "v_ivf_pq", {"metric": "l2", "num_partitions": 2})
    same = IndexSpec("v", "ivf_pq", "v_ivf_pq", {"num_partitions": 2, "metric": "l2"})
    other = IndexSpec("v", "ivf_pq", "v_ivf_pq", {"metric": "cosine", "num_partitions": 2})
    assert one.fingerprint() == same.fingerprint() != other.fingerprint()


@pytest.mark.parametrize(
    ("entry", "named"),
    [
        ({"columns": ["b"], "type": "fts", "tokenizer": "x"}, "unknown key `tokenizer` for a fts index"),
        ({"columns": ["v"], "type": "ivf_flat", "num_sub_vectors": 2}, "unknown key `num_sub_vectors`"),
        ({"columns": ["v"], "type": "hnsw"}, "unknown index `type` 'hnsw'"),
        ({"columns": ["v"]}, "the key `type` is missing"),
        ({"type": "btree"}, "the key `columns` must list the indexed column"),
        ({"columns": ["a", "b"], "type": "btree"}, "`columns` must name exactly one column"),
        ({"columns": ["v"], "type": "ivf_pq", "metric": "hamming"}, "`metric` 'hamming' is not one of"),
        ({"columns": ["v"], "type": "ivf_pq", "num_partitions": "4"}, "`num_partitions` must be a int"),
        ({"columns": ["v"], "type": "ivf_pq", "num_partitions": 0}, "`num_partitions` must be a positive"),
        ({"columns": ["b"], "type": "fts", "stem": "yes"}, "`stem` must be a bool"),
        ({"columns": ["b"], "type": "fts", "custom_stop_words": [1]}, "`custom_stop_words` must be a list"),
        ({"columns": ["b"], "type": "btree", "name": ""}, "`name` must be a non-empty string"),
        ({"columns": ["b"], "type": "fts", "base_tokenizer": "bogus"}, "`base_tokenizer` 'bogus' is not one"),
        ({"columns": ["v"], "type": "ivf_pq", "num_bits": 1}, "`num_bits` must be one of 4, 8"),
    ],
)
def test_a_bad_entry_names_its_key(entry: dict, named: str) -> None:
    with pytest.raises(IndexConfigError) as info:
        parse_indexes([{"columns": ["id"], "type": "btree"}, entry])
    assert "`indexes`[1]" in str(info.value)
    assert named in str(info.value)


def test_not_a_list_and_duplicate_names_are_refused() -> None:
    with pytest.raises(IndexConfigError, match="must be a list"):
        parse_indexes({"columns": ["id"], "type": "btree"})
    with pytest.raises(IndexConfigError, match=r"name 'id_btree' is already used by `indexes`\[0\]"):
        parse_indexes([{"columns": ["id"], "type": "btree"}, {"columns": ["id"], "type": "btree"}])
