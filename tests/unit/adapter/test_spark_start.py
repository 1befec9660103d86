"""Spark starts on first use, and a missing Java says so instead of a gateway error."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    from dbt.adapters.lancens.runtime.process import LancensRuntime
    runtime = LancensRuntime.shared({"root": ROOT}, "local[1]", {})
    print("namespaces:", runtime.namespace.list_namespaces([]).items)  # works without a JVM
    try:
        runtime.spark
    except Exception as exc:
        print(type(exc).__name__, exc)
    """
)


def test_missing_java_is_named(tmp_path: Path) -> None:
    env = {
        "HOME": os.environ.get("HOME", "/root"),
        "PATH": "/nonexistent-bin",  # no java, no shell tools beyond what spark-class finds
        "JAVA_HOME": str(tmp_path / "no-jdk"),
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    script = SCRIPT.replace("ROOT", repr(str(tmp_path / "root")))
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert "namespaces: []" in done.stdout
    assert "SparkStartError" in done.stdout and "Java 17 is required" in done.stdout
