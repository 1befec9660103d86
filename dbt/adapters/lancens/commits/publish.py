"""Atomic publish: every table a dbt run builds becomes visible to namespace readers together.

`begin` (the adapter's on-run-start hook) gives the runtime a `RunPublisher`, so the run's writes
stage instead of committing (`staging.py`); `finish` (its on-run-end hook) publishes every staged
version of the run (each table's write and the index versions staged on top of it) and the views
the run created or replaced in ONE `__manifest` commit (the engine's BatchCreateTableVersions)
when the run succeeded, and discards them when any node failed. A run that dies before its end
publishes nothing: staged versions have no row, and the engine never reports them. A run that
another run beat to one of its tables (it published a version or a table this run staged) publishes
nothing either, and says so in those words (`LostRace`).

Inside the run, the Spark catalog entry of a staged table reads its staged content (the runtime's
`refresh_table`), so downstream models see their upstream's new rows while every other reader sees
the previous versions.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dbt.artifacts.schemas.results import RunStatus

from dbt.adapters.lancens.definitions import names
from dbt.adapters.lancens.definitions.sql_text import spark_string
from dbt.adapters.lancens.namespace import errors
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.runtime.staging import SCRATCH_DIR, RunPublisher, unpublished_files

FAILED_STATUSES = frozenset({"error", "fail", "runtime error", "partial success"})


class LostRace(errors.ConcurrentModificationError):
    """Another run published a version or a table this run staged: nothing of this run was
    published. `objects`: the ids of everything the run had staged (its tables and views)."""

    def __init__(self, detail: str, objects: list[tuple[str, ...]]) -> None:
        shown = ", ".join(".".join(object_id) for object_id in objects)
        super().__init__(
            f"atomic publish: another run published or changed some of this run's tables first ({detail}); "
            f"nothing of this run was published ({shown} discarded): run it again"
        )
        self.objects = objects


def failed(statuses: Iterable[str]) -> bool:
    """Whether a node of the run failed, which makes the run publish nothing."""
    return bool(FAILED_STATUSES.intersection(str(status).lower() for status in statuses))


def begin(runtime: LancensRuntime, run_id: str) -> None:
    """Start staging this process's writes (needs table version management, which it turns on)."""
    if runtime.branch_landing is not None:
        raise errors.InvalidInputError(
            f"atomic publish: the target builds on branch {runtime.branch_landing.name!r}, whose writes "
            "main never sees; `lancens.promote_branch` makes them main's together: turn one of the two off"
        )
    runtime.enable_version_management()
    with runtime.lock:
        stale, runtime.publisher = runtime.publisher, RunPublisher.start(runtime.namespace, run_id)
    if stale is not None:
        _cleanup(runtime, stale, discard_staged=True)


def staged_objects(runtime: LancensRuntime) -> list[tuple[str, ...]]:
    """The ids of every table and view the run in progress staged or held (none outside a run):
    taken before `finish`, to report the nodes that built them when nothing is published."""
    publisher = runtime.publisher
    return publisher.objects() if publisher is not None else []


def finish(runtime: LancensRuntime, statuses: list[str]) -> dict[tuple[str, ...], int]:
    """End of run: publish everything staged when no node failed, else discard it all. The
    actions deferred to the publish (`RunPublisher.defer`) run for the tables it published."""
    with runtime.lock:
        publisher, runtime.publisher = runtime.publisher, None
    if publisher is None or not (publisher.writes or publisher.views):
        return {}
    if failed(statuses):
        _cleanup(runtime, publisher, discard_staged=True)
        return {}
    try:
        published = runtime.namespace.publish(publisher.staged_commits(), list(publisher.views.values()))
    except (errors.TableVersionAlreadyExistsError, errors.ConcurrentModificationError) as exc:
        # 12: a version this run staged was published by another run; 14: a table or view it
        # created was, or other writers kept changing `__manifest`. Nothing of this run landed.
        _cleanup(runtime, publisher, discard_staged=True)
        raise LostRace(exc.message, publisher.objects()) from exc
    except Exception:
        # the engine raises only before its commit point: nothing was published
        _cleanup(runtime, publisher, discard_staged=True)
        raise
    except BaseException:
        # interrupted: the versions may be published, so their files stay (unreferenced: garbage)
        _cleanup(runtime, publisher, discard_staged=False)
        raise
    _cleanup(runtime, publisher, discard_staged=False)
    for table_id, actions in publisher.after_publish.items():
        for action in actions if table_id in published else ():
            action()
    return published


def _cleanup(runtime: LancensRuntime, publisher: RunPublisher, discard_staged: bool) -> None:
    """Delete what no version can reference (scratch copies, the scratch root when no other run
    has one, detached versions' files) and, with `discard_staged`, the staged versions' files (the
    run published nothing); point Spark's catalog at the published tables so later invocations of
    this process read what readers see."""
    namespace = runtime.namespace
    storage = namespace.storage
    for table_id, written in publisher.writes.items():
        garbage = list(written.garbage)
        if discard_staged:
            garbage.extend(unpublished_files(storage, written))
            if written.first.table_row is not None:
                garbage.append(written.first.location)  # a new table's directory: nobody else knows it
        for path in garbage:
            if storage.exists(path):
                storage.rm(path, recursive=True)
        try:
            runtime.refresh_table(table_id)
        except errors.NamespaceError:  # storage trouble after the publish: Spark registers it again when used
            runtime.catalog.forget(table_id)
    if discard_staged:
        for view_id in publisher.views:  # Spark's session has the held view: read the published one
            runtime.catalog.forget(view_id)
    if storage.exists(publisher.scratch):
        storage.rm(publisher.scratch, recursive=True)
    storage.remove_if_empty(storage.join(SCRATCH_DIR))  # kept while another run has a copy there


def report_lost_race(results: Iterable[Any], lost: LostRace, message: str) -> str:
    """Say in dbt's own report that nothing of the run was published (`message`: why, in words);
    returns the on-run-end hook's SQL, which fails with `message`.

    dbt reports an on-run-end hook as failed only when its SQL fails as it runs: an error raised
    while the hook is rendered (where the publish happens) stops dbt as if it was interrupted
    ("Exited because of keyboard interrupt", dbt-core's `RunTask.after_run`)."""
    report_not_published(results, lost.objects, message)
    return f"select raise_error({spark_string(message)})"


def report_not_published(results: Iterable[Any], objects: Iterable[tuple[str, ...]], message: str) -> None:
    """Each node reported OK that built one of `objects` (what the run staged, none of it
    published) becomes an error with `message`: dbt's summary, run_results.json and `dbt retry`
    must not count as built what nobody will see."""
    staged = set(objects)
    for result in results:
        node = getattr(result, "node", None)
        if node is None or str(getattr(result.status, "value", result.status)) != RunStatus.Success:
            continue
        try:
            built = tuple(names.table_id(str(node.schema), str(node.alias)))
        except (AttributeError, names.InvalidNameError):  # not a relation of this adapter
            continue
        if built in staged:
            result.status = RunStatus.Error
            result.message = f"built, but not published: {message}"
