"""Java classes reached through py4j by their full names, without py4j's package walk.

``spark._jvm.org.apache.spark.sql.SparkSession`` makes py4j ask the JVM about ``org``, then
``org.apache``, ``org.apache.spark``, ... in turn, and a short name (``jvm.System``) is tried under
every package PySpark imports into the view first. Each name that is not a class is a
``Class.forName`` that fails only after searching every jar on the driver's class path (~280 for
Spark): 0.3-1 ms a lookup, several per query (measured in a microbatch backfill: 8% of the driver
JVM's CPU). A ``JavaClass`` built from the full name sends that name with the call, once.
"""

from __future__ import annotations

from typing import Any

from py4j.java_gateway import JavaClass, JVMView


def java_class(jvm: JVMView, name: str) -> JavaClass:
    """The Java class `name` (fully qualified) of the JVM behind `jvm`, for static calls."""
    return JavaClass(name, jvm._gateway_client)


def seq_elements(sequence: Any) -> list[Any]:
    """A Scala ``Seq``'s elements: its size and each element, one round trip each (an iterator
    takes two per element and one more to find the end)."""
    return [sequence.apply(i) for i in range(int(sequence.size()))]
