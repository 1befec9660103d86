"""Run several dbt invocations in ONE child process and print their outcomes as one JSON line.

Each invocation is a real `dbt` command (dbtRunner, the same code path as the CLI) with its own
project and profile; they share the process's JVM, which saves a Spark start-up per invocation.
Used where the point is what dbt does or says, not a separate JVM (``helpers.run_many``): the
bad-input cases and the maintenance sequences.

Usage: python dbt_many.py '[["/path/to/project", "build"], ...]'
       python dbt_many.py --serve   (``helpers.DbtSession``: one `[project, *args]` JSON line read
       from stdin at a time, its outcome printed before the next is read, until stdin closes; the
       test looks at the root between two invocations while the JVM stays up)
"""

from __future__ import annotations

import json
import sys
from typing import Any

MARKER = "DBT_MANY_RESULT "


def invoke(project: str, args: list[str]) -> dict[str, Any]:
    """One dbt invocation: success flag, the exception text if dbt raised, node results and the
    text of every event it logged (what its console shows, without colours or timestamps)."""
    from dbt.cli.main import dbtRunner

    logged: list[str] = []
    runner = dbtRunner(callbacks=[lambda event: logged.append(event.info.msg)])
    outcome = runner.invoke([*args, "--project-dir", project, "--profiles-dir", project])
    nodes: dict[str, dict[str, str]] = {}
    results = getattr(outcome.result, "results", None) or []
    for result in results:
        # a run-operation's results are artifacts with a unique id, not nodes
        name = result.node.name if hasattr(result, "node") else result.unique_id.rsplit(".", 1)[-1]
        nodes[name] = {"status": str(result.status), "message": str(result.message or "")}
    return {
        "success": bool(outcome.success),
        "exception": "" if outcome.exception is None else str(outcome.exception),
        "nodes": nodes,
        "log": "\n".join(logged),
    }


def main(plan: list[list[str]]) -> None:
    outcomes = [invoke(project, args) for project, *args in plan]
    print(MARKER + json.dumps(outcomes), flush=True)


def serve() -> None:
    for line in sys.stdin:
        project, *args = json.loads(line)
        print(MARKER + json.dumps([invoke(project, args)]), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        serve()
    else:
        main(json.loads(sys.argv[1]))
