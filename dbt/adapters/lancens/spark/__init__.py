"""How Spark reads and writes Lance tables (no dbt here: Spark's Python workers import this).

Public API: ``get_or_create_session``, ``register_data_source``, ``LanceDataSource`` (short name
``lance``). Spark's session catalog is mirrored by the adapter (``runtime/session_catalog.py``).
"""

from dbt.adapters.lancens.spark.datasource import LanceDataSource, register_data_source
from dbt.adapters.lancens.spark.session import get_or_create_session

__all__ = ["LanceDataSource", "get_or_create_session", "register_data_source"]
