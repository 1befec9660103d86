"""Spark errors as a dbt user should read them: the message, never a Java stack trace."""

from __future__ import annotations

import re

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException

_JAVA_FRAME = re.compile(r"^\s+at [\w.$]+\(.*\)$|^\s*\.\.\. \d+ more$")
_RELATION_PARAM = ("relationName", "objectName", "viewName", "tableName")


def spark_error_message(exc: BaseException) -> str:
    """Spark's own message for `exc`, without the JVM stack trace that `str()` may append."""
    if isinstance(exc, PySparkException):
        try:
            message = exc.getMessage()
        except Exception:  # a Python-side PySparkException has no JVM message
            message = str(exc)
    elif isinstance(exc, Py4JJavaError):
        message = str(exc.java_exception.getMessage())
    else:
        message = str(exc)
    message = message.split("\n\nJVM stacktrace:", 1)[0]
    # Java frames ("\tat org.apache...") are noise for a dbt user; Python tracebacks stay.
    return "\n".join(line for line in message.splitlines() if not _JAVA_FRAME.match(line)).strip()


def missing_relation(exc: BaseException) -> tuple[str, str] | None:
    """(database, table) when Spark failed because a table or view is not in its catalog."""
    if not isinstance(exc, PySparkException) or exc.getCondition() != "TABLE_OR_VIEW_NOT_FOUND":
        return None
    params = exc.getMessageParameters() or {}
    name = next((params[key] for key in _RELATION_PARAM if key in params), None)
    if name is None:
        return None
    parts = [part.strip("`") for part in re.findall(r"`[^`]*`|[^.]+", name)]
    if len(parts) < 2:
        return None
    return parts[-2], parts[-1]


def missing_database(exc: BaseException) -> str | None:
    """The database name when Spark failed because a schema does not exist in its catalog."""
    if not isinstance(exc, PySparkException) or exc.getCondition() != "SCHEMA_NOT_FOUND":
        return None
    name = (exc.getMessageParameters() or {}).get("schemaName", "")
    parts = [part.strip("`") for part in re.findall(r"`[^`]*`|[^.]+", name)]
    return parts[-1] if parts else None


def spark_start_error(exc: BaseException, files_dir: str | None = None) -> str:
    """Why Spark did not start, naming the usual cause (no Java 17) when that is what happened, and
    where the JVM's own output went (it is kept off the console, see spark/session.py)."""
    text = spark_error_message(exc)
    where = f" The JVM's output is in {files_dir}/spark.log." if files_dir else ""
    if "JAVA_GATEWAY_EXITED" in text or "Java gateway process exited" in text or "JAVA_HOME" in text:
        return (
            "dbt-lancens could not start Spark: Java 17 is required (install a JDK 17 and set "
            f"JAVA_HOME, or put `java` on PATH). Spark said: {text}{where}"
        )
    return f"dbt-lancens could not start Spark: {text}{where}"
