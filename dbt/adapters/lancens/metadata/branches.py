"""A branch target's branches across the root (`lancens.list_branches`, `lancens.delete_branch`).

Lance keeps a branch per table (`<table>/tree/<name>/`); a branch target makes one in every table it
writes, under one name, so the lifecycle works on the name: which tables have it, and deleting it
from all of them. A promoted branch is kept while main's kept versions read the files it wrote
(`promotion.py`); once main moved on and a cleanup removed those versions, it is deleted too.
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.lancens.metadata.promotion import branch_files_in_use, branched_tables
from dbt.adapters.lancens.namespace import DirectoryNamespace, all_pages, errors


def list_branches(namespace: DirectoryNamespace) -> list[dict[str, Any]]:
    """One row per branch of each table of the root: branch, table, the main version (or parent
    branch) it was made from, and its latest version; sorted by branch, then table."""
    rows = []
    for entry in namespace.list_objects():
        if entry.object_type != "table":
            continue
        for branch in all_pages(namespace.list_table_branches, entry.id):
            version = namespace.describe_table(entry.id, branch=branch.name).version
            rows.append(
                {
                    "branch": branch.name,
                    "table": ".".join(entry.id),
                    "from_branch": branch.parent_branch or "main",
                    "from_version": branch.parent_version,
                    "version": version,
                }
            )
    for name in namespace.branches_with_objects():  # tables only a branch has
        for table in branched_tables(namespace, name):
            if table.new:
                rows.append(
                    {
                        "branch": name,
                        "table": table.name,
                        "from_branch": "(new)",
                        "from_version": table.record.parent_version,
                        "version": table.branch.version,
                    }
                )
    return sorted(rows, key=lambda row: (row["branch"], row["table"]))


def format_branches(rows: list[dict[str, Any]]) -> str:
    """The rows of `list_branches` as a table for the terminal."""
    header = f"{'branch':<24} {'table':<40} {'from':<16} version"
    lines = [
        f"{row['branch']:<24} {row['table']:<40} {row['from_branch'] + ' ' + str(row['from_version']):<16} "
        f"{row['version']}"
        for row in rows
    ]
    return "\n".join([header, *lines]) if lines else "no branches"


def delete_branch(namespace: DirectoryNamespace, name: str) -> list[str]:
    """Delete branch `name` from every table that has it; returns those tables. 4 when none has it;
    13 before any deletion while kept versions read files the branch wrote (a promoted branch whose
    main has not moved on and been cleaned up), naming the tables and versions. Deleting a branch
    lets the next cleanup reclaim the main versions it held."""
    tables = branched_tables(namespace, name)
    only_here = namespace.objects_on_branch(name)
    if not tables and not only_here:
        raise errors.TableNotFoundError(f"no table has branch {name!r}")
    readers = {
        table.name: found
        for table in tables
        if not table.new and (found := branch_files_in_use(namespace, table.id, name))
    }
    if readers:
        held = "; ".join(f"{table}: {' and '.join(found)}" for table, found in sorted(readers.items()))
        raise errors.InvalidInputError(
            f"branch {name!r} was promoted and kept versions read files it wrote ({held}); deleting "
            "it would lose their rows, so nothing was deleted. Once main has a later version that "
            "does not read them (a rebuild), remove the older versions with lancens.cleanup "
            "(retain_versions) and delete the branch then"
        )
    for table in tables:
        if not table.new:
            namespace.delete_table_branch(table.id, name)
    for item in only_here:  # main never had them: their directories go too
        namespace.forget_on_branch(item, drop=True)
    return [table.name for table in tables]
