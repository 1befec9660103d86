"""Java classes are reached by their full names, never through py4j's package walk."""

from __future__ import annotations

import ast
from pathlib import Path

from dbt.adapters.lancens.spark.java_classes import java_class

_PACKAGES = {"org", "java", "javax", "scala", "com", "py4j"}
PACKAGE_DIR = Path(__file__).resolve().parents[3] / "dbt" / "adapters" / "lancens"


def test_a_class_by_its_full_name_answers_static_calls(spark) -> None:
    jvm = spark._jvm
    system = java_class(jvm, "java.lang.System")
    assert system.identityHashCode(spark._jsparkSession) == jvm.System.identityHashCode(spark._jsparkSession)
    assert str(system.getProperty("java.version")) == str(jvm.java.lang.System.getProperty("java.version"))
    session_class = java_class(jvm, "org.apache.spark.sql.SparkSession")
    session_class.setActiveSession(spark._jsparkSession)
    assert session_class.getActiveSession().get().equals(spark._jsparkSession)


def test_the_package_never_walks_py4j_packages() -> None:
    """`jvm.org.apache...`, `jvm.java.lang...` and `jvm.System` each cost failed `Class.forName`
    searches of every jar on the driver's class path, several per query (spark/java_classes.py)."""
    walks = []
    for path in PACKAGE_DIR.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            # a class (`jvm.System`) or a top-level package (`jvm.org`) of a py4j view
            if not isinstance(node, ast.Attribute) or not (node.attr[0].isupper() or node.attr in _PACKAGES):
                continue
            owner = node.value
            name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", None)
            if name in ("jvm", "_jvm"):
                walks.append(f"{path.relative_to(PACKAGE_DIR)}:{node.lineno}: {ast.unparse(node)}")
    assert walks == []
