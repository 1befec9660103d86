"""Builds the JVM connector (`connector/`, docs/jvm-connector.md) into the package, at install time.

`pip install -e .` and wheel builds call `build_connector`: Maven compiles the connector jar and
resolves the jars it needs beside Spark's own (lance-core, lance-namespace-core, arrow-c-data,
arrow-dataset), and both land in `dbt/adapters/lancens/spark/jars/`: the connector jar, and
`classpath.txt` naming the resolved jars in Maven's local repository (lance-core alone is 188 MB:
a wheel names it rather than carries it). Nothing is rebuilt while the jar is newer than the
sources.

A build that cannot run (no `mvn` or `javac`, no network, a refused artifact) does not stop the
install: the Python data source is a complete fallback, so the package installs without the jar,
this module says why on stderr, and the runtime's `auto` connector choice logs the same reason and
takes the Python path. `DBT_LANCENS_REQUIRE_CONNECTOR=1` (CI) makes such a failure fatal instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

JARS = Path("dbt/adapters/lancens/spark/jars")
CONNECTOR_JAR = "lancens-spark-connector.jar"
CLASSPATH_FILE = "classpath.txt"
_REQUIRE = "DBT_LANCENS_REQUIRE_CONNECTOR"


def build_connector(project_root: Path) -> bool:
    """Build the connector into `project_root / JARS` unless it is up to date; False (after saying
    why on stderr) when it cannot be built and the install goes on without it."""
    module = project_root / "connector"
    target = project_root / JARS
    if not module.is_dir() or _up_to_date(module, target):
        return True
    missing = [tool for tool in ("mvn", "javac") if shutil.which(tool) is None]
    if missing:
        return _fail(f"{' and '.join(missing)} not found on PATH")
    command = [
        "mvn", "-B", "-q", "-f", str(module / "pom.xml"), "package", "dependency:build-classpath",
        "-DincludeScope=runtime", f"-Dmdep.outputFile={module / 'target' / CLASSPATH_FILE}",
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        return _fail(f"`{' '.join(command)}` failed:\n{result.stdout[-4000:]}{result.stderr[-4000:]}")
    target.mkdir(parents=True, exist_ok=True)
    for name in (CLASSPATH_FILE, CONNECTOR_JAR):
        _replace(module / "target" / name, target / name)
    return True


def _replace(source: Path, destination: Path) -> None:
    """Copy under a temporary name, then rename over `destination`: a JVM that has the old jar open
    keeps reading its file (rewriting it in place broke a running Spark: ClassNotFoundException)."""
    staged = destination.with_name(f".{destination.name}.partial")
    shutil.copyfile(source, staged)
    os.replace(staged, destination)


def _up_to_date(module: Path, target: Path) -> bool:
    jar = target / CONNECTOR_JAR
    if not jar.is_file() or not (target / CLASSPATH_FILE).is_file():
        return False
    built = jar.stat().st_mtime
    sources = [module / "pom.xml", *(path for path in (module / "src").rglob("*") if path.is_file())]
    return all(source.stat().st_mtime <= built for source in sources)


def _fail(reason: str) -> bool:
    message = (
        f"dbt-lancens: the JVM connector was not built ({reason}); installing without it, Spark "
        "reads Lance through the Python data source (docs/jvm-connector.md)"
    )
    if os.environ.get(_REQUIRE, "").strip().lower() in ("1", "true", "yes", "on"):
        raise RuntimeError(message)
    print(message, file=sys.stderr)
    return False
