"""The optional `lance_maintenance` model config: optimize and clean up a table after its builds.

```sql
{{ config(materialized='incremental', lance_maintenance={
    'optimize_over_fragments': 16, 'retain_versions': 10, 'older_than_days': 7}) }}
```

| key | default | after a build |
|---|---|---|
| `optimize_over_fragments` | none (never) | `optimize_table` once the table has more fragments than this |
| `retain_versions` | none (keep all) | `cleanup_table_versions` keeping the newest N (and tagged ones) |
| `older_than_days` | 7 with `retain_versions` | only versions older than this go (alone: a cleanup by age) |

Without the config nothing runs after a build (the default behaviour is unchanged). Each build adds
at least one fragment to an incremental table, so `optimize_over_fragments: N` compacts about
every N runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CONFIG_KEY = "lance_maintenance"
DEFAULT_OLDER_THAN_DAYS = 7.0


class MaintenanceConfigError(ValueError):
    """A `lance_maintenance` config that cannot be applied; the message names the key."""


@dataclass(frozen=True)
class MaintenanceConfig:
    optimize_over_fragments: int | None = None
    retain_versions: int | None = None
    older_than_days: float | None = None  # None: the default with `retain_versions`, no cleanup alone


def parse_maintenance(raw: Any) -> MaintenanceConfig | None:
    """The config, or None when the model has none."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise MaintenanceConfigError(f"`{CONFIG_KEY}` must be a mapping, got {raw!r}")
    known = {"optimize_over_fragments", "retain_versions", "older_than_days"}
    for key in raw:
        if key not in known:
            raise MaintenanceConfigError(
                f"`{CONFIG_KEY}`: unknown key `{key}`; allowed keys: {', '.join(sorted(known))}"
            )
    optimize = _positive_int(raw, "optimize_over_fragments")
    retain = _positive_int(raw, "retain_versions")
    older = raw.get("older_than_days")
    if older is not None and (isinstance(older, bool) or not isinstance(older, int | float) or older < 0):
        raise MaintenanceConfigError(
            f"`{CONFIG_KEY}`: `older_than_days` must be a number >= 0, got {older!r}"
        )
    return MaintenanceConfig(optimize, retain, None if older is None else float(older))


def _positive_int(raw: Mapping[str, Any], key: str) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise MaintenanceConfigError(f"`{CONFIG_KEY}`: `{key}` must be a positive integer, got {value!r}")
    return value
