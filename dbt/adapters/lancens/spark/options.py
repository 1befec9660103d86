"""The ``lance`` data source options, parsed once into typed values.

Spark hands options as a case-insensitive string map whose keys arrive lower-cased, so column
names inside option keys (``fixed_size_list.<column>``) are matched case-insensitively.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from dbt.adapters.lancens.text.yes_no import yes_or_no

FIXED_SIZE_PREFIX = "fixed_size_list."
ROW_ADDRESS = "_rowaddr"
DEFAULT_ROWS_PER_PARTITION = 1 << 20
DEFAULT_MAX_ROWS_PER_FILE = 1 << 20

_Default = TypeVar("_Default", bound=int | None)


def _json_object(raw: str | None, name: str) -> dict[str, Any]:
    if not raw:
        return {}
    value = json.loads(raw)
    if not isinstance(value, dict):
        raise ValueError(f"option {name} must be a JSON object, got {raw!r}")
    return value


def _timestamp(raw: str | None) -> datetime | None:
    """ISO-8601; a timestamp without zone is taken as UTC (Lance versions are stamped in UTC)."""
    if not raw:
        return None
    parsed = datetime.fromisoformat(raw)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _int(raw: str | None, default: _Default) -> int | _Default:
    return int(raw) if raw else default


def _bool(raw: str | None, name: str, default: bool) -> bool:
    if raw in (None, ""):
        return default
    value = yes_or_no(raw)
    if value is not None:
        return value
    raise ValueError(f"option {name} must be true or false, got {raw!r}")


def _indexes(raw: str | None, name: str) -> tuple[int, ...] | None:
    if raw is None:
        return None
    try:
        indexes = tuple(int(part) for part in raw.split(",") if part.strip())
    except ValueError:
        raise ValueError(f"option {name} must be column positions like 0,2,5, got {raw!r}") from None
    if not indexes or min(indexes) < 0:
        raise ValueError(f"option {name} must name at least one column position >= 0, got {raw!r}")
    return indexes


def read_options(uri: str, storage_options: Mapping[str, str], version: int | None = None) -> dict[str, str]:
    """The string options a reader of `uri` (at `version`, else the latest) is given, as
    `LanceOptions.parse` reads them back."""
    options = {"path": uri, "storage_options": json.dumps(dict(storage_options), sort_keys=True)}
    if version is not None:
        options["version"] = str(int(version))
    return options


@dataclass(frozen=True)
class LanceOptions:
    """Everything the reader and writer need, picklable, shipped to Spark's Python workers.

    ``filter_pushdown`` is off unless a caller proves the scan is the only one of its relation
    (see ``pushdown.py``): PySpark 4.3 shares one planned reader among every scan of a relation,
    so a reader that filters would filter the other scans too (docs/spark-datasource.md).
    ``read_columns`` (positions in the relation's schema) comes with that proof: the only scan reads
    just those columns and returns the others as nulls, which the query never reads.
    ``row_address`` adds Lance's row address (``_rowaddr``, a bigint: fragment id << 32 | offset in
    the fragment) as the last column, so a query can name exact rows of a pinned version to delete.
    """

    uri: str
    storage_options: dict[str, str] = field(default_factory=dict)
    version: int | None = None
    timestamp: datetime | None = None
    batch_size: int | None = None
    columns: tuple[str, ...] = ()
    rows_per_partition: int = DEFAULT_ROWS_PER_PARTITION
    max_rows_per_file: int = DEFAULT_MAX_ROWS_PER_FILE
    fixed_sizes: dict[str, int] = field(default_factory=dict)
    commit_hook: str | None = None
    commit_hook_args: dict[str, Any] = field(default_factory=dict)
    filter_pushdown: bool = False
    read_columns: tuple[int, ...] | None = None
    row_address: bool = False

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> LanceOptions:
        """Validate the user's options; raises ValueError naming the bad option."""
        uri = options.get("path")
        if not uri:
            raise ValueError("the lance data source needs a path: .load(uri) / .save(uri) / path option")
        storage = {
            str(k): str(v) for k, v in _json_object(options.get("storage_options"), "storage_options").items()
        }
        columns = tuple(c.strip() for c in (options.get("columns") or "").split(",") if c.strip())
        fixed = {
            key[len(FIXED_SIZE_PREFIX) :]: int(value)
            for key, value in options.items()
            if key.lower().startswith(FIXED_SIZE_PREFIX)
        }
        parsed = cls(
            uri=uri,
            storage_options=storage,
            version=_int(options.get("version"), None),
            timestamp=_timestamp(options.get("timestamp")),
            batch_size=_int(options.get("batch_size"), None),
            columns=columns,
            rows_per_partition=_int(options.get("rows_per_partition"), DEFAULT_ROWS_PER_PARTITION),
            max_rows_per_file=_int(options.get("max_rows_per_file"), DEFAULT_MAX_ROWS_PER_FILE),
            fixed_sizes=fixed,
            commit_hook=options.get("commit_hook") or None,
            commit_hook_args=_json_object(options.get("commit_hook_args"), "commit_hook_args"),
            filter_pushdown=_bool(options.get("filter_pushdown"), "filter_pushdown", False),
            read_columns=_indexes(options.get("read_columns"), "read_columns"),
            row_address=_bool(options.get("row_address"), "row_address", False),
        )
        if parsed.version is not None and parsed.timestamp is not None:
            raise ValueError("options version and timestamp are exclusive: give one")
        return parsed
