"""The `indexes` model config (dbt-postgres's convention) read into typed Lance index specs.

Parsing happens while dbt parses the project (the relation of every node is created then), so an
unknown key, type or value fails there, naming the node and the key, before any connection or
Spark starts. No Lance import here: the parse must stay cheap.

```sql
{{ config(indexes=[
    {'columns': ['embedding'], 'type': 'ivf_pq', 'metric': 'cosine', 'num_sub_vectors': 2},
    {'columns': ['body'], 'type': 'fts'},
    {'columns': ['id'], 'type': 'btree', 'name': 'id_lookup'}]) }}
```
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

CONFIG_KEY = "indexes"

VECTOR_TYPES = {"ivf_pq": "IVF_PQ", "ivf_hnsw_sq": "IVF_HNSW_SQ", "ivf_flat": "IVF_FLAT"}
SCALAR_TYPES = {"fts": "INVERTED", "btree": "BTREE", "bitmap": "BITMAP", "label_list": "LABEL_LIST"}
METRICS = ("l2", "cosine", "dot")

_IVF: dict[str, type] = {"metric": str, "num_partitions": int}
# Each type's own parameters, with the Python type their value must have; passed to pylance as is.
PARAMETERS: dict[str, dict[str, type]] = {
    "ivf_pq": {**_IVF, "num_sub_vectors": int, "num_bits": int},
    "ivf_hnsw_sq": {**_IVF, "m": int, "ef_construction": int},
    "ivf_flat": dict(_IVF),
    "fts": {
        "with_position": bool,
        "base_tokenizer": str,
        "language": str,
        "max_token_length": int,
        "lower_case": bool,
        "stem": bool,
        "remove_stop_words": bool,
        "custom_stop_words": list,
        "ascii_folding": bool,
        "min_ngram_length": int,
        "max_ngram_length": int,
        "prefix_only": bool,
    },
    "btree": {},
    "bitmap": {},
    "label_list": {},
}
COMMON_KEYS = ("columns", "type", "name")
# Values Lance accepts (pylance 14), checked here so that a bad one fails `dbt parse` rather than the
# index build, which runs after the rows are committed.
TOKENIZERS = ("simple", "whitespace", "raw", "ngram", "icu", "icu/split")
TOKENIZER_FAMILIES = ("jieba/", "lindera/")  # with a language model name: `jieba/default`
PQ_BITS = (4, 8)


class IndexConfigError(ValueError):
    """An `indexes` entry that cannot become a Lance index; the message names the key."""


@dataclass(frozen=True)
class IndexSpec:
    """One configured index: its column, dbt type name, Lance name and the type's own parameters."""

    column: str
    type: str
    name: str
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def is_vector(self) -> bool:
        return self.type in VECTOR_TYPES

    @property
    def lance_type(self) -> str:
        return VECTOR_TYPES.get(self.type) or SCALAR_TYPES[self.type]

    def fingerprint(self) -> str:
        """What the index was built from; a different fingerprint under the same name is a rebuild."""
        return json.dumps(
            {"column": self.column, "type": self.type, "parameters": self.parameters}, sort_keys=True
        )


def parse_indexes(raw: Any) -> list[IndexSpec]:
    """The specs of a model's `indexes` config (None or [] means none); raises IndexConfigError."""
    if raw is None:
        return []
    if isinstance(raw, Mapping) or not isinstance(raw, Sequence) or isinstance(raw, str):
        raise IndexConfigError(f"`{CONFIG_KEY}` must be a list of index configs, got {raw!r}")
    specs = [_parse_one(entry, position) for position, entry in enumerate(raw)]
    seen: dict[str, int] = {}
    for position, spec in enumerate(specs):
        if spec.name in seen:
            raise IndexConfigError(
                f"`{CONFIG_KEY}`[{position}]: index name {spec.name!r} is already used by "
                f"`{CONFIG_KEY}`[{seen[spec.name]}]; give one of them a different `name`"
            )
        seen[spec.name] = position
    return specs


def _parse_one(entry: Any, position: int) -> IndexSpec:
    where = f"`{CONFIG_KEY}`[{position}]"
    if not isinstance(entry, Mapping):
        raise IndexConfigError(f"{where} must be a mapping with `columns` and `type`, got {entry!r}")
    kind = entry.get("type")
    if kind is None:
        raise IndexConfigError(f"{where}: the key `type` is missing (one of {', '.join(PARAMETERS)})")
    kind = str(kind).lower()
    if kind not in PARAMETERS:
        raise IndexConfigError(
            f"{where}: unknown index `type` {entry.get('type')!r}; expected one of {', '.join(PARAMETERS)}"
        )
    allowed = PARAMETERS[kind]
    for key in entry:
        if key not in COMMON_KEYS and key not in allowed:
            raise IndexConfigError(
                f"{where}: unknown key `{key}` for a {kind} index; allowed keys: "
                f"{', '.join([*COMMON_KEYS, *allowed])}"
            )
    column = _column(entry.get("columns"), where)
    parameters = {key: _value(where, key, entry[key], allowed[key]) for key in allowed if key in entry}
    if "metric" in parameters and parameters["metric"].lower() not in METRICS:
        raise IndexConfigError(
            f"{where}: `metric` {parameters['metric']!r} is not one of {', '.join(METRICS)}"
        )
    if "metric" in parameters:
        parameters["metric"] = parameters["metric"].lower()
    _check_lance_values(where, parameters)
    name = entry.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise IndexConfigError(f"{where}: `name` must be a non-empty string, got {name!r}")
    return IndexSpec(column, kind, name or f"{column}_{kind}", parameters)


def _check_lance_values(where: str, parameters: dict[str, Any]) -> None:
    """Values of the right type that Lance still refuses, when that is known without the data."""
    tokenizer = parameters.get("base_tokenizer")
    if tokenizer is not None and not (tokenizer in TOKENIZERS or tokenizer.startswith(TOKENIZER_FAMILIES)):
        raise IndexConfigError(
            f"{where}: `base_tokenizer` {tokenizer!r} is not one Lance knows: "
            f"{', '.join(TOKENIZERS)}, or jieba/<model>, lindera/<model>"
        )
    if parameters.get("num_bits", PQ_BITS[-1]) not in PQ_BITS:
        raise IndexConfigError(
            f"{where}: `num_bits` must be one of {', '.join(map(str, PQ_BITS))} (Lance's PQ codes), "
            f"got {parameters['num_bits']!r}"
        )


def check_sub_vectors(spec: IndexSpec, dimension: int) -> None:
    """An `ivf_pq` index splits each vector into `num_sub_vectors` equal parts: they must divide the
    dimension, which is known only from the data (before it is written: `indexes.check_columns`)."""
    parts = spec.parameters.get("num_sub_vectors")
    if spec.type == "ivf_pq" and parts is not None and dimension % parts:
        raise IndexConfigError(
            f"index {spec.name!r}: `num_sub_vectors` {parts} must divide the dimension of "
            f"column {spec.column!r}, {dimension}"
        )


def _column(columns: Any, where: str) -> str:
    if isinstance(columns, str):
        columns = [columns]
    if not isinstance(columns, Sequence) or not columns:
        raise IndexConfigError(f"{where}: the key `columns` must list the indexed column, got {columns!r}")
    if len(columns) != 1 or not isinstance(columns[0], str) or not columns[0]:
        raise IndexConfigError(
            f"{where}: `columns` must name exactly one column (a Lance index covers one), "
            f"got {list(columns)!r}"
        )
    return str(columns[0])


def _value(where: str, key: str, value: Any, expected: type) -> Any:
    """`value` if it has the expected type; ints are not bools, and lists hold strings."""
    ok = isinstance(value, expected) and not (expected is int and isinstance(value, bool))
    if ok and expected is int and value <= 0:
        raise IndexConfigError(f"{where}: `{key}` must be a positive integer, got {value!r}")
    if ok and expected is list:
        ok = all(isinstance(item, str) for item in value)
        value = list(value)
    if not ok:
        raise IndexConfigError(f"{where}: `{key}` must be a {expected.__name__}, got {value!r}")
    return value


def vector_columns(specs: Sequence[IndexSpec]) -> list[str]:
    """Columns a vector index names: they are written as fixed-size float32 lists."""
    return sorted({spec.column for spec in specs if spec.is_vector})
