"""The `embeddings` model config: which text column is embedded into which vector column, and how.

```sql
{{ config(materialized='incremental', unique_key='id', embeddings=[
    {'source': 'body', 'vector': 'body_vector', 'function': 'sentence-transformers',
     'args': {'name': 'all-MiniLM-L6-v2'}, 'batch_size': 64, 'imports': ['my_project.embedders']}]) }}
```

| key | meaning |
|---|---|
| `source` | the model's text column (required) |
| `vector` | the vector column the build adds (required; the model must not select it) |
| `function` | a name in LanceDB's embedding function registry (required) |
| `args` | the function's arguments (`create(**args)`), recorded with the table for LanceDB |
| `batch_size` | texts per call of the function in a Spark task (default 256) |
| `imports` | modules imported first, in dbt's process and in each Spark Python worker (where a |
|  | project's own `@register`ed functions are defined) |

A single mapping is one entry. Checked when dbt parses (`LancensRelation.create_from`), like
`indexes`; the function itself is created before the build writes anything.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

CONFIG_KEY = "embeddings"
DEFAULT_BATCH_SIZE = 256
_KEYS = ("source", "vector", "function", "args", "batch_size", "imports")


class EmbeddingConfigError(ValueError):
    """An `embeddings` config that cannot be applied; the message names the entry and the key."""


@dataclass(frozen=True)
class EmbeddingSpec:
    """One entry: `source` text column -> `vector` column, by the registry's `function`."""

    source: str
    vector: str
    function: str
    args_json: str = "{}"  # the arguments as sorted JSON: hashable, picklable, one cache key
    batch_size: int = DEFAULT_BATCH_SIZE
    imports: tuple[str, ...] = field(default_factory=tuple)

    @property
    def args(self) -> dict[str, Any]:
        return dict(json.loads(self.args_json))


def parse_embeddings(raw: Any) -> list[EmbeddingSpec]:
    """The config's entries (none without a config)."""
    if raw is None:
        return []
    entries = [raw] if isinstance(raw, Mapping) else raw
    if isinstance(entries, str | bytes) or not isinstance(entries, Sequence):
        raise EmbeddingConfigError(f"`{CONFIG_KEY}` must be a mapping or a list of mappings, got {raw!r}")
    specs = [_entry(position, entry) for position, entry in enumerate(entries)]
    vectors: set[str] = set()
    for spec in specs:
        if spec.vector.lower() in vectors:
            raise EmbeddingConfigError(f"`{CONFIG_KEY}`: vector column {spec.vector!r} is named twice")
        vectors.add(spec.vector.lower())
    for spec in specs:
        if spec.source.lower() in vectors:
            raise EmbeddingConfigError(
                f"`{CONFIG_KEY}`: source column {spec.source!r} is another entry's vector column"
            )
    return specs


def _entry(position: int, entry: Any) -> EmbeddingSpec:
    where = f"`{CONFIG_KEY}` entry {position + 1}"
    if not isinstance(entry, Mapping):
        raise EmbeddingConfigError(f"{where} must be a mapping, got {entry!r}")
    for key in entry:
        if key not in _KEYS:
            raise EmbeddingConfigError(f"{where}: unknown key `{key}`; allowed keys: {', '.join(_KEYS)}")
    names = {key: _name(where, entry, key) for key in ("source", "vector", "function")}
    if names["source"].lower() == names["vector"].lower():
        raise EmbeddingConfigError(f"{where}: `source` and `vector` name the same column")
    args = entry.get("args") or {}
    if not isinstance(args, Mapping):
        raise EmbeddingConfigError(f"{where}: `args` must be a mapping, got {args!r}")
    try:
        args_json = json.dumps(dict(args), sort_keys=True)
    except TypeError as exc:
        raise EmbeddingConfigError(f"{where}: `args` must be plain values (JSON): {exc}") from exc
    batch_size = entry.get("batch_size", DEFAULT_BATCH_SIZE)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise EmbeddingConfigError(f"{where}: `batch_size` must be a positive integer, got {batch_size!r}")
    imports = entry.get("imports") or []
    if isinstance(imports, str):
        imports = [imports]
    if not all(isinstance(module, str) and module for module in imports):
        raise EmbeddingConfigError(f"{where}: `imports` must be module names, got {imports!r}")
    return EmbeddingSpec(
        names["source"], names["vector"], names["function"], args_json, batch_size, tuple(imports)
    )


def _name(where: str, entry: Mapping[str, Any], key: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise EmbeddingConfigError(f"{where}: `{key}` must be a non-empty string, got {value!r}")
    return value.strip()
