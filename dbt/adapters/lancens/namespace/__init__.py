"""The namespace engine: a Python implementation of the Lance Directory Namespace.

No dbt and no Spark here: Spark's Python workers import this package to rebuild a namespace from
``ns.properties``. ``DirectoryNamespace`` (directory.py) is the public API; docs/namespace-engine.md
describes the spec choices, the guarantees under concurrency and the error codes.
"""

from dbt.adapters.lancens.namespace import errors
from dbt.adapters.lancens.namespace.directory import DirectoryNamespace
from dbt.adapters.lancens.namespace.models import (
    BranchInfo,
    NamespaceInfo,
    ObjectEntry,
    Page,
    TableInfo,
    ViewInfo,
    all_pages,
)
from dbt.adapters.lancens.namespace.versions import TableVersion

__all__ = [
    "BranchInfo",
    "DirectoryNamespace",
    "NamespaceInfo",
    "ObjectEntry",
    "Page",
    "TableInfo",
    "TableVersion",
    "ViewInfo",
    "all_pages",
    "errors",
]
