"""Which reader Spark uses for Lance tables in this process: the JVM connector or the Python data
source (the profile's `spark_connector`: `auto`, `jvm` or `python`; docs/jvm-connector.md).

Decided in two steps, because the second needs the JVM: `plan` before Spark starts (are the
connector's jars there? they must be on the class path the JVM starts with), `confirm` once it
runs (does the driver, or the Spark Connect server, load the connector's classes?). With the
profile's `connector_jars_on_nodes`, the jars are the cluster's or the server's own (installed on
every node, on their class path): the adapter adds no class path and only `confirm` decides.
`auto` (the default) takes the JVM path when both hold and the Python data source otherwise, with
the reason logged and shown by `dbt debug`; `jvm` fails instead, naming what is missing;
`python` never touches the JVM connector. Per table, the session catalog still checks that
lance-core can read it (`spark/jvm_connector.unreadable`).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import SparkSession

from dbt.adapters.lancens.spark import jvm_connector

CHOICES = ("auto", "jvm", "python")
DEFAULT = "auto"
JVM = "jvm"
PYTHON = "python"
ON_NODES = "connector_jars_on_nodes: the Spark it reaches loads the connector from its own class path"


@dataclass(frozen=True)
class ConnectorChoice:
    """The profile's request, the path taken and why (what `dbt debug` shows)."""

    requested: str
    path: str
    reason: str
    class_path: tuple[str, ...] = ()

    @property
    def jvm(self) -> bool:
        return self.path == JVM

    def describe(self) -> str:
        return f"lancens spark_connector: {self.path} (requested {self.requested}: {self.reason})"


def plan(requested: str | None, remote: str | None, jars_on_nodes: bool = False) -> ConnectorChoice:
    """The choice before Spark starts; raises ValueError for an unknown value, and
    ConnectorUnavailable when `jvm` is asked for and cannot be had. `jars_on_nodes`: the profile's
    `connector_jars_on_nodes` (the Spark it reaches has the jars; none are added here)."""
    wanted = (requested or DEFAULT).strip().lower()
    if wanted not in CHOICES:
        raise ValueError(
            f"lancens profile: spark_connector must be one of {', '.join(CHOICES)}, got {requested!r}"
        )
    if wanted == PYTHON:
        return ConnectorChoice(wanted, PYTHON, "the profile's choice")
    if jars_on_nodes:
        return ConnectorChoice(wanted, JVM, ON_NODES)
    if remote is not None:
        return _fallback(
            wanted,
            "a Spark Connect server reads through its own class path: install the connector's jars "
            "there and set connector_jars_on_nodes: true (docs/spark-connect.md)",
        )
    try:
        entries = jvm_connector.class_path()
    except jvm_connector.ConnectorUnavailable as exc:
        return _fallback(wanted, str(exc))
    return ConnectorChoice(
        wanted, JVM, "the connector's jars are on the driver's and executors' class path", tuple(entries)
    )


def confirm(choice: ConnectorChoice, spark: SparkSession) -> ConnectorChoice:
    """The choice once Spark runs: the JVM path only if the driver loads the connector."""
    if not choice.jvm:
        return choice
    reason = jvm_connector.loaded(spark)
    return choice if reason is None else _fallback(choice.requested, reason)


def _fallback(requested: str, reason: str) -> ConnectorChoice:
    if requested == JVM:
        raise jvm_connector.ConnectorUnavailable(
            f"lancens profile asks for spark_connector: jvm, but {reason}"
        )
    return ConnectorChoice(requested, PYTHON, reason)
