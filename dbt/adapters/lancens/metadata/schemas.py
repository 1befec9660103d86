"""dbt schemas as namespaces: create with parents, list recursively, drop with everything inside."""

from __future__ import annotations

from dbt.adapters.lancens.definitions.names import namespace_to_schema
from dbt.adapters.lancens.metadata import clone_holds
from dbt.adapters.lancens.metadata.maintenance import table_ids
from dbt.adapters.lancens.namespace import DirectoryNamespace, all_pages, errors
from dbt.adapters.lancens.runtime.branch_landing import BranchLanding
from dbt.adapters.lancens.runtime.process import LancensRuntime


def create_schema(runtime: LancensRuntime, namespace_id: list[str]) -> None:
    """Create the namespace and any missing parent; an existing one is left as it is. A branch
    target makes a missing one on its branch only (main gets it when the branch is promoted)."""
    namespace = runtime.namespace
    if runtime.branch_landing is not None:
        runtime.branch_landing.create_schema(namespace, namespace_id)
        runtime.catalog.ensure_database(namespace_id)
        return
    for depth in range(1, len(namespace_id) + 1):
        level = namespace_id[:depth]
        if namespace.namespace_exists(level):
            continue
        try:
            namespace.create_namespace(level)
        except (errors.NamespaceAlreadyExistsError, errors.ConcurrentModificationError):
            # Another dbt thread or process created it first; anything else must still fail.
            if not namespace.namespace_exists(level):
                raise
    runtime.catalog.ensure_database(namespace_id)


def list_schemas(namespace: DirectoryNamespace, branch: BranchLanding | None = None) -> list[str]:
    """Every namespace under the root, nested ones included, in dbt's dotted form; on a branch
    target (`branch`) also those only its branch has.

    One catalog state for the whole walk (a request on S3): at the start of a run, the one the
    connection's root check read (`connections._check_root`)."""
    found: list[str] = []
    pending: list[list[str]] = [[]]
    with namespace.consistent_reads(shared=True):
        while pending:
            parent = pending.pop()
            for name in all_pages(namespace.list_namespaces, parent):
                child = [*parent, name]
                found.append(namespace_to_schema(child))
                pending.append(child)
    if branch is not None:
        found.extend(namespace_to_schema(item) for item in branch.schemas_only_here(namespace))
    return sorted(set(found))


def schema_exists(
    namespace: DirectoryNamespace, namespace_id: list[str], branch: BranchLanding | None
) -> bool:
    """Whether the schema exists on main, or (a branch target) on its branch only."""
    if namespace.namespace_exists(namespace_id):
        return True
    return branch is not None and namespace_id in branch.schemas_only_here(namespace)


def drop_schema(runtime: LancensRuntime, namespace_id: list[str], cascade: bool = True) -> None:
    """Drop the namespace with its tables, views and child namespaces (dbt's drop_schema cascades).

    Without `cascade` only an empty namespace is dropped: the engine refuses any other with
    NamespaceNotEmpty (3), naming it. With it, every table inside goes first, clones before the
    sources they read; a `dbt clone` outside that reads one of them refuses the drop before any
    change (`clone_holds`)."""
    namespace = runtime.namespace
    if not namespace.namespace_exists(namespace_id):
        return
    if cascade:
        clone_holds.purge_all(namespace, list(table_ids(namespace, namespace_id)))
    _drop_views_and_namespaces(runtime, namespace_id, cascade)


def _drop_views_and_namespaces(runtime: LancensRuntime, namespace_id: list[str], cascade: bool) -> None:
    """The namespace (with its views and child namespaces when `cascade`), its tables gone."""
    namespace = runtime.namespace
    if cascade:
        for child in all_pages(namespace.list_namespaces, namespace_id):
            _drop_views_and_namespaces(runtime, [*namespace_id, child], cascade)
        for view in all_pages(namespace.list_views, namespace_id):
            namespace.drop_view([*namespace_id, view])
    namespace.drop_namespace(namespace_id)
    runtime.catalog.drop_database(namespace_id)
