"""Whether an invocation asks for atomic publish, and the one rule that follows from it.

Atomic publish is asked for by the profile (`atomic_publish: true`) or by the project var
`lancens_atomic_publish` (`--vars` or `vars:` in dbt_project.yml). Only the project's on-run-start
hook starts the staging (`commits/publish.begin`), so a run without the hooks would otherwise commit
model by model, each visible at once: exactly what the user asked not to happen. The rule: while
atomic publish is asked for, every write dbt makes to build a node (a table, an incremental model and
each microbatch batch, a seed, a snapshot, a view, a clone, and the drops, renames, indexes, docs and
maintenance that come with them) needs a run in progress, or it is refused before anything is
written. `dbt run-operation` is not a run (dbt runs no on-run hooks for it) and its macros commit
directly, as documented.
"""

from __future__ import annotations

from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lancens.adapter.macro_arguments import flag
from dbt.adapters.lancens.runtime.process import LancensRuntime

VAR = "lancens_atomic_publish"


def requested_by(config: Any) -> str | None:
    """What asks this invocation for atomic publish (for the error), or None when nothing does.

    The var is looked up as dbt's `var()` does for the root project: `--vars`, then the project's
    own `vars:` block, then the global ones; it is read as strictly as the hook reads it."""
    if config.credentials.atomic_publish:
        return "atomic_publish: true in the profile"
    if flag(_var(config), f"var {VAR}"):
        return f"var {VAR}"
    return None


def require_run(config: Any, runtime: LancensRuntime) -> None:
    """Refuse a node's write that would commit directly although atomic publish is asked for."""
    if runtime.atomic_run or _command(config) == "run-operation":
        return
    reason = requested_by(config)
    if reason is None:
        return
    raise DbtRuntimeError(
        f"atomic publish is on ({reason}) but no atomic-publish run is in progress, so this write "
        "would be visible at once: add the run hooks to dbt_project.yml, "
        'on-run-start: ["{{ lancens_begin_atomic_publish() }}"] and '
        'on-run-end: ["{{ lancens_end_atomic_publish(results) }}"] (see the README). '
        "dbt clone runs no on-run hooks: clone with atomic publish off."
    )


def _var(config: Any) -> Any:
    cli_vars: dict[str, Any] = getattr(config, "cli_vars", None) or {}
    if VAR in cli_vars:
        return cli_vars[VAR]
    provider = getattr(config, "vars", None)
    project_vars: dict[str, Any] = getattr(provider, "vars", None) or {}
    scoped = project_vars.get(getattr(config, "project_name", ""), {})
    if isinstance(scoped, dict) and VAR in scoped:
        return scoped[VAR]
    return project_vars.get(VAR)


def _command(config: Any) -> str | None:
    """The dbt command of this invocation (`run`, `build`, `run-operation`, ...)."""
    return getattr(getattr(config, "args", None), "WHICH", None)


def refuse_in_run(runtime: LancensRuntime, action: str) -> None:
    """Refuse a change an atomic-publish run in progress could not hold back: a model changing
    kind drops its old table or view at once, so a failed run would publish that drop (a table's
    data deleted) and nothing else."""
    if not runtime.atomic_run:
        return
    raise DbtRuntimeError(
        f"{action} is refused in an atomic-publish run: the old object would be dropped at once, not "
        "with the run's publish, so a failed run would not leave everything as it was. Make this "
        "change in a run without atomic publish (or drop the old object first)."
    )
