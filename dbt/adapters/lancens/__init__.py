"""dbt-lancens: a dbt adapter whose warehouse is a Lance directory namespace.

The subpackages ``namespace`` (the catalog engine) and ``spark`` (the Spark data source) know
nothing of dbt, and Spark's Python workers import them on every executor. dbt-core only needs
``Plugin`` from this module, so it is resolved lazily: importing ``dbt.adapters.lancens.spark`` in a
worker must not pay for importing dbt.
"""

import os
from typing import Any

from dbt.adapters.lancens.__version__ import version as __version__

# Lance's Rust logger reads LANCE_LOG once, when pylance is imported (in the dbt process and in every
# Spark Python worker, both of which import this package first). At its default level it prints a
# WARN for every new table ("No existing dataset ... will be created") among dbt's lines; errors
# still show. A user who sets LANCE_LOG keeps their level.
os.environ.setdefault("LANCE_LOG", "error")


def __getattr__(name: str) -> Any:
    if name == "Plugin":
        from dbt.adapters.lancens.plugin import Plugin

        return Plugin
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Plugin", "__version__"]
