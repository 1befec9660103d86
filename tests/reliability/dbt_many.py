"""Run several dbt invocations in ONE child process and print their outcomes as one JSON line.

Each invocation is a real `dbt` command (dbtRunner, the same code path as the CLI) with its own
project and profile; they share the process's JVM, which saves a Spark start-up per case. Used for
the bad-input cases, where each case is a separate root but the point is the error, not Spark.

Usage: python dbt_many.py '[["/path/to/project", "build"], ...]'
"""

from __future__ import annotations

import json
import sys
from typing import Any

MARKER = "DBT_MANY_RESULT "


def invoke(project: str, args: list[str]) -> dict[str, Any]:
    """One dbt invocation: success flag, the exception text if dbt raised, and node results."""
    from dbt.cli.main import dbtRunner

    outcome = dbtRunner().invoke([*args, "--project-dir", project, "--profiles-dir", project])
    nodes: dict[str, dict[str, str]] = {}
    results = getattr(outcome.result, "results", None) or []
    for result in results:
        nodes[result.node.name] = {"status": str(result.status), "message": str(result.message or "")}
    return {
        "success": bool(outcome.success),
        "exception": "" if outcome.exception is None else str(outcome.exception),
        "nodes": nodes,
    }


def main(plan: list[list[str]]) -> None:
    outcomes = [invoke(project, args) for project, *args in plan]
    print(MARKER + json.dumps(outcomes), flush=True)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
