"""LanceDB embedding functions named by an `embeddings` entry: created once per process, checked, and
recorded the way LanceDB reads them back.

A function is looked up in LanceDB's `EmbeddingFunctionRegistry` (so its built-in names and a
project's `@register`ed functions both work) after the entry's `imports` are imported, and created
with the entry's `args` once per process (`function_for`): in dbt's process to check it before the
build writes anything (`checked_dimension`), and in each Spark Python worker that embeds batches
(`batches.py`). The table records it under the Arrow schema metadata key `embedding_functions`
(`entry_metadata`, `table_metadata`), which LanceDB parses when it opens the table, so
`table.search("text")` embeds the query with the same function.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Iterable
from typing import Any

from dbt.adapters.lancens.embeddings.config import EmbeddingSpec

TABLE_METADATA_KEY = "embedding_functions"
# the vector column's Spark field metadata: its LanceDB entry (JSON), taken into the schema metadata
FIELD_METADATA_KEY = "lancens.embedding_function"
# functions this package registers (`lancens-minilm`): imported before every lookup
BUILTIN_MODULES = ("dbt.adapters.lancens.embeddings.minilm",)
_PROBE_TEXT = "dbt-lancens checks the embedding function"


class EmbeddingFunctionError(RuntimeError):
    """An embedding function that cannot be found, created or run, or that returns other vectors."""


@functools.cache
def function_for(name: str, args_json: str, imports: tuple[str, ...]) -> Any:
    """The registry's function `name` created with `args` (JSON), once per process."""
    try:
        from lancedb.embeddings import get_registry
    except ImportError as exc:
        raise EmbeddingFunctionError(
            "the `embeddings` config needs LanceDB's embedding functions: "
            "pip install 'dbt-lancens[embeddings]'"
        ) from exc
    for module in (*BUILTIN_MODULES, *imports):
        try:
            importlib.import_module(module)
        except Exception as exc:
            raise EmbeddingFunctionError(
                f"embeddings: cannot import module {module!r} (named in `imports`): {exc}"
            ) from exc
    registry = get_registry()
    try:
        kind = registry.get(name)
    except KeyError:
        known = ", ".join(sorted(getattr(registry, "_functions", {})))
        raise EmbeddingFunctionError(
            f"embeddings: unknown embedding function {name!r}; LanceDB's registry has: {known}. "
            "A project's own function must be registered (`@register`) in a module named in `imports`"
        ) from None
    try:
        return kind.create(**json.loads(args_json))
    except Exception as exc:
        raise EmbeddingFunctionError(
            f"embeddings: function {name!r} could not be created with args {args_json}: {exc}"
        ) from exc


def spec_function(spec: EmbeddingSpec) -> Any:
    return function_for(spec.function, spec.args_json, spec.imports)


def checked_dimension(spec: EmbeddingSpec) -> int:
    """The entry's vector size, after one probe text was embedded (a model that cannot load, or
    that returns vectors of another size than it declares, fails here, before any write)."""
    function = spec_function(spec)
    try:
        dimension = int(function.ndims())
        vectors = function.compute_source_embeddings([_PROBE_TEXT])
    except Exception as exc:
        raise EmbeddingFunctionError(
            f"embeddings: function {spec.function!r} (args {spec.args_json}) failed to embed a text: {exc}"
        ) from exc
    sizes = {len(vector) for vector in vectors}
    if len(vectors) != 1 or sizes != {dimension}:
        raise EmbeddingFunctionError(
            f"embeddings: function {spec.function!r} declares {dimension} dimensions but returned "
            f"vectors of sizes {sorted(sizes)} for one text"
        )
    return dimension


def entry_metadata(spec: EmbeddingSpec) -> dict[str, Any]:
    """The entry as LanceDB records it (`registry.function_to_metadata`)."""
    from lancedb.embeddings import EmbeddingFunctionConfig, get_registry

    config = EmbeddingFunctionConfig(
        source_column=spec.source, vector_column=spec.vector, function=spec_function(spec)
    )
    return dict(get_registry().function_to_metadata(config))


def table_metadata(entries: Iterable[dict[str, Any]]) -> bytes:
    """The schema metadata value LanceDB parses (`registry.get_table_metadata`'s format)."""
    return json.dumps(list(entries), indent=2).encode("utf-8")


def recorded_entries(metadata: dict[bytes, bytes] | None) -> dict[str, dict[str, Any]]:
    """The entries a table's schema metadata records, by vector column."""
    raw = (metadata or {}).get(TABLE_METADATA_KEY.encode())
    if not raw:
        return {}
    try:
        return {entry["vector_column"]: entry for entry in json.loads(raw.decode("utf-8"))}
    except (ValueError, KeyError, TypeError):
        return {}


def schema_metadata(fields: Iterable[Any]) -> dict[bytes, bytes]:
    """The `embedding_functions` schema metadata for a full write of a Spark frame's `fields`: the
    entries its vector columns carry in their field metadata (none: empty)."""
    entries = [
        json.loads(field.metadata[FIELD_METADATA_KEY])
        for field in fields
        if FIELD_METADATA_KEY in (field.metadata or {})
    ]
    return {TABLE_METADATA_KEY.encode(): table_metadata(entries)} if entries else {}
