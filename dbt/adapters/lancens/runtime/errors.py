"""Spark errors as a dbt user should read them: the message, never a Java stack trace."""

from __future__ import annotations

import re
from collections.abc import Callable

from pyspark.errors import PySparkException

from dbt.adapters.lancens.definitions.names import namespace_id
from dbt.adapters.lancens.namespace.errors import without_source_locations
from dbt.adapters.lancens.runtime.jvm import java_error_message
from dbt.adapters.lancens.spark.writer import REMOVED_WHILE_WRITING

_JAVA_FRAME = re.compile(r"^\s+at [\w.$]+\(.*\)$|^\s*\.\.\. \d+ more$")
_RELATION_PARAM = ("relationName", "objectName", "viewName", "tableName")


def spark_error_message(exc: BaseException) -> str:
    """Spark's own message for `exc`, without the JVM stack trace that `str()` may append, nor the
    Rust source locations of a Lance error (a Lance error reaches dbt through here when no engine
    error wraps it)."""
    if isinstance(exc, PySparkException):
        raised = _raised_by_sql(exc)
        if raised is not None:
            return raised
        try:
            message = exc.getMessage()
        except Exception:  # a Python-side PySparkException has no JVM message
            message = str(exc)
    else:
        message = java_error_message(exc) or str(exc)
    message = message.split("\n\nJVM stacktrace:", 1)[0]
    # Java frames ("\tat org.apache...") are noise for a dbt user; Python tracebacks stay.
    lines = (line for line in message.splitlines() if not _JAVA_FRAME.match(line))
    return without_source_locations("\n".join(lines)).strip()


def _raised_by_sql(exc: PySparkException) -> str | None:
    """The message SQL's `raise_error(...)` raised (a contract's check, the atomic publish's
    report), as written: Spark wraps it in `[USER_RAISED_EXCEPTION] ... SQLSTATE: P0001`."""
    try:
        if exc.getCondition() != "USER_RAISED_EXCEPTION":
            return None
        return (exc.getMessageParameters() or {}).get("errorMessage")
    except Exception:  # a Python-side PySparkException has no JVM error class
        return None


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


# How file systems, object stores and Lance say that the storage refused a request, and what the
# user can do about it. Checked in order: the first group with a marker in the error text wins.
_REFUSALS: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("AccessDenied", "403 Forbidden", "lacked the necessary privileges", "Permission denied"),
        "permission denied under the namespace root {root!r}: the storage refused a request of these "
        "credentials. A root needs read and write access (on S3: s3:GetObject, s3:ListBucket, "
        "s3:PutObject, s3:DeleteObject).",
    ),
    (
        ("NoSuchBucket", "The specified bucket does not exist", "ContainerNotFound"),
        "the bucket of the namespace root {root!r} does not exist (or these credentials cannot see "
        "it): create it, or point `root` at an existing one; nothing was written.",
    ),
    (
        ("No space left on device", "Disk quota exceeded"),
        "no space left under the namespace root {root!r}: free space on its file system (or its "
        "quota), or point `root` elsewhere; nothing of this write was committed.",
    ),
    (
        (REMOVED_WHILE_WRITING,),
        "a write's files under the namespace root {root!r} were deleted before it could commit: a "
        "concurrent `cleanup_namespace` or `cleanup_table_versions` run with a grace shorter than the "
        "write (`allow_short_grace`) may have removed them. Nothing of this write was committed; run "
        "it again, and clean up with the default grace while runs write.",
    ),
    (
        ("Read-only file system",),
        "the namespace root {root!r} is on a read-only file system: point `root` at a writable "
        "directory; nothing was written.",
    ),
)


def storage_refusal_message(exc: BaseException, text: str, root: str) -> str | None:
    """One line naming the root, the cause and what to do when the storage refused a write.

    Such errors reach dbt as a bare OSError from the dbt process (the namespace's own files) or deep
    inside a Python worker traceback (Lance writing data files in a Spark task); the line that
    names the refusal is kept as the detail, the traceback is dropped."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for markers, advice in _REFUSALS:
        first = next((i for i, line in enumerate(lines) if any(m in line for m in markers)), None)
        if first is None and not (isinstance(exc, PermissionError) and "Permission denied" in markers):
            continue
        if first is None:
            detail = f"{type(exc).__name__}: {text}"
        else:  # the refusing line and the store's reply that follows it, up to Spark's SQLSTATE
            sqlstate = (i for i in range(first + 1, len(lines)) if lines[i].startswith("SQLSTATE"))
            end = next(sqlstate, len(lines))
            detail = without_source_locations(" ".join(lines[first:end]))
        return f"dbt-lancens: {advice.format(root=root)} Storage error: {detail}"
    return None


# What PySpark says once a Spark Connect server restarted or stopped under a running session.
_LOST_SESSION = (
    "NO_ACTIVE_SESSION",
    "Cannot call methods on a stopped SparkContext",
    "INVALID_HANDLE.SESSION_CLOSED",
    "INVALID_HANDLE.SESSION_NOT_FOUND",
)


def lost_session_message(text: str, server: str) -> str | None:
    """One line naming the Connect server (`server`, its URL without the token) when the session on
    it is gone; None for any other error or a local Spark (`server` empty)."""
    if not server or not any(marker in text for marker in _LOST_SESSION):
        return None
    return (
        f"dbt-lancens lost its session on the Spark Connect server {server} (the server restarted or "
        "stopped): every table committed before stands; this node may have committed its data before "
        "the loss (its indexes, docs or catalog refresh came after), so check its latest version "
        "(lancens.list_table_versions) before running an appending model again"
    )


def missing_relation_message(
    exc: BaseException, root: str, namespace_exists: Callable[[list[str]], bool]
) -> str | None:
    """A missing table or view named as dbt and the namespace name it (`analytics.raw.events`),
    not by the Spark database that mirrors the namespace (`analytics__raw`). Spark reports a table
    of a schema that does not exist as a missing table; the message names the missing schema then,
    since that is what to fix."""
    relation = missing_relation(exc)
    if relation is None:
        return None
    database, name = relation
    try:
        namespace = namespace_id(database)
    except ValueError:  # not a database this adapter made: Spark's own message says it best
        return None
    missing = f"dbt-lancens: {'.'.join([*namespace, name.lower()])} not found"
    if not namespace_exists(namespace):
        return (
            f"{missing}: the namespace (schema) {'.'.join(namespace)!r} does not exist under the "
            f"namespace root {root!r}. Check the source's or model's schema, or build it first."
        )
    where = f"the namespace {'.'.join(namespace)!r}" if namespace else "the root namespace"
    return (
        f"{missing}: {where} under the namespace root {root!r} has no table or view "
        f"{name.lower()!r}. Check the source's or model's schema and name, or build it first."
    )
