"""Where a model build's seconds go: one `dbt run` per adapter with real instrumentation, as profile lines.

    python benchmarks/model_profile.py --shape many --rows 10000 --select +step_08   # small models
    python benchmarks/model_profile.py --shape wide --models events_enriched user_activity   # 1M rows
    python benchmarks/model_profile.py --shape many --select +step_03 --pyspy --out /tmp/prof   # keep files

Each adapter builds the same project (``dbt_projects.py``, threads 1 so models do not overlap) in a
fresh `dbt run` process with:
- the timing probe (``probe/``: ``PYTHONPATH`` + ``LANCENS_PROBE_DIR``) in the dbt process and in
  every Spark Python daemon and worker;
- Spark's event log (jobs and SQL executions, uncompressed);
- with ``--pyspy`` (``pip install py-spy`` first: not a project dependency), py-spy sampling the
  dbt process (idle included: time blocked on the JVM); its stacks are summarised by what they
  were in (imports, py4j, Jinja, engine, ...).

Printed as Markdown: the run's phases, each model's lines P1-P13 (``profile_analysis.py``: every
instant of the build given to one line) before the first model, for the first model and the median
of the others (or the ``--models`` named), cross-cutting sums (imports in workers, executor work,
manifest opens) and the slowest Spark statements of the first model profiled.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import sys
import tempfile
from pathlib import Path

from dbt_projects import ADAPTERS, SHAPES, write_project
from harness import BENCHMARKS, dbt_executable, machine, run_measured
from profile_analysis import (
    STICKY,
    Run,
    Timeline,
    cross_cutting,
    load_run,
    merge,
    render,
    statements_in,
    totals,
)

PYSPY_IDLE = (
    "FinalizerWorker",
    "accumulators.py",
    "Pool._handle_",
    "serve_forever",
    "_PollLikeSelector.select",
)
PYSPY_CATEGORIES = (  # the innermost frame that matches decides
    ("waiting on the JVM (py4j)", ("py4j/",)),
    ("imports", ("_find_and_load",)),
    ("namespace engine", ("lancens/namespace/",)),
    ("lance / pyarrow", ("lance/", "pyarrow/")),
    ("dbt-lancens adapter", ("dbt/adapters/lancens/",)),
    ("Jinja rendering", ("jinja2/",)),
    ("dbt parsing", ("dbt/parser/",)),
    ("dbt artifacts (mashumaro serialisation)", ("mashumaro/",)),
    ("dbt events and logging", ("dbt_common/events", "logging/")),
    ("dbt-spark adapter", ("dbt/adapters/spark/",)),
    ("dbt core", ("dbt/", "dbt_common/", "dbt_adapters")),
)


def profiled_run(shape_name: str, adapter: str, base: Path, rows: int, select: list[str], master: str,
                 pyspy: bool) -> Path:  # fmt: skip
    """Build the project once with every instrument on; returns the directory holding the records."""
    shape = SHAPES[shape_name]
    home = base / adapter
    events = home / "events"
    events.mkdir(parents=True)
    config = {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": str(events),
        "spark.eventLog.compress": "false",
        "spark.eventLog.rolling.enabled": "false",
    }
    project = home / "project"
    write_project(shape, adapter, project, master, config)
    profiles = project / "profiles.yml"
    profiles.write_text(profiles.read_text().replace("threads: 2", "threads: 1"))
    generate = [sys.executable, str(BENCHMARKS / "dbt_run.py"), "--generate", adapter, "--shape", shape_name,
                "--project", str(project), "--rows", str(rows), "--master", master]  # fmt: skip
    run_measured(generate, project)
    command = [dbt_executable(), "run", "--project-dir", ".", "--profiles-dir", "."]
    if select:
        command += ["--select", *select]
    if pyspy:
        py_spy = str(Path(sys.executable).with_name("py-spy"))
        if not Path(py_spy).exists():
            sys.exit(f"--pyspy needs py-spy beside {sys.executable}: pip install py-spy")
        command = [py_spy, "record", "--idle", "--threads", "--format", "raw", "--rate", "50",
                   "--output", str(home / "pyspy.txt"), "--", *command]  # fmt: skip
    path = os.pathsep.join(p for p in (str(BENCHMARKS / "probe"), os.environ.get("PYTHONPATH")) if p)
    run = run_measured(command, project, {"PYTHONPATH": path, "LANCENS_PROBE_DIR": str(home / "probe")})
    (home / "wall.txt").write_text(f"{run.wall} {run.cpu}\n")
    shutil.copy(project / "target" / "run_results.json", home / "run_results.json")
    return home


def load(home: Path) -> Run:
    return load_run(home / "probe", home / "events", home / "run_results.json")


def phases(run: Run) -> list[str]:
    """The run's wall time: before the first model, the models, between them, after the last."""
    first, last = run.models[0][1], run.models[-1][2]
    inside = sum(end - start for _, start, end in run.models)
    between = (last - first) - inside
    return [
        f"dbt process start to first model (Python start, imports, parse, connection, Spark start): "
        f"{first - run.process_start:.2f} s",
        f"{len(run.models)} models: {inside:.2f} s, between models: {between:.2f} s",
        f"after the last model to the last probe record (artifacts, exit): {run.process_end - last:.2f} s",
    ]


def pyspy_summary(path: Path) -> list[str]:
    """Seconds of the dbt process's busy threads by category (50 Hz samples, idle included).

    Threads that only wait (py4j finaliser, accumulator server, pool handlers) are left out, and so
    is a thread waiting on a ``threading`` condition (dbt's main thread while a node thread works),
    so the sum is roughly the process's critical path.
    """
    seconds: dict[str, float] = collections.Counter()
    for line in path.read_text().splitlines():
        stack, count = line.rsplit(" ", 1)
        frames = stack.split(";")[1:]
        if not frames or any(mark in part for part in stack.split(";") for mark in PYSPY_IDLE):
            continue
        if frames[-1].startswith(("Condition.wait", "Event.wait", "Thread.join")):
            continue
        category = "other"
        for frame in reversed(frames):
            found = next((name for name, marks in PYSPY_CATEGORIES if any(m in frame for m in marks)), None)
            if found:
                category = found
                break
        seconds[category] += int(count) / 50
    return [f"| {name} | {value:.1f} |" for name, value in sorted(seconds.items(), key=lambda kv: -kv[1])]


def report(homes: dict[str, Path], models: list[str]) -> None:
    columns: dict[str, dict] = {}
    walls: dict[str, float] = {}
    extras: dict[str, dict] = {}
    for adapter, home in homes.items():
        run = load(home)
        timeline = Timeline.of(run)
        wall, cpu = (float(x) for x in (home / "wall.txt").read_text().split())
        print(f"\n### {adapter}: `dbt run` {wall:.1f} s wall, {cpu:.1f} s CPU (process tree)\n")
        print("\n".join(f"- {line}" for line in phases(run)))
        windows = {name: (start, end) for name, start, end in run.models}
        windows["before first model"] = (run.process_start, run.models[0][1])
        names = [name for name, _, _ in run.models]
        print("\n| model | wall s | biggest lines |\n|---|---|---|")
        per_model = {}
        for name, (start, end) in windows.items():
            per_model[name] = totals(timeline.attribute(start, end))
            top = sorted(((v, k) for k, v in per_model[name].items() if k[1] is None), reverse=True)[:3]
            print(f"| {name} | {end - start:.2f} | " + ", ".join(f"{k[0]} {v:.2f}" for v, k in top) + " |")
        chosen = {f"{adapter} before first model": ["before first model"]}
        if models:
            chosen.update({f"{adapter} {name}": [name] for name in models})
        else:
            chosen[f"{adapter} first ({names[0]})"] = [names[0]]
            if len(names) > 1:
                chosen[f"{adapter} median of the other {len(names) - 1}"] = names[1:]
        for label, members in chosen.items():
            columns[label] = merge(per_model[name] for name in members)
            walls[label] = sum(
                v for (line, sub), v in columns[label].items() if sub is not None or line not in STICKY
            )
            extras[label] = merge(
                {k: v[0] for k, v in cross_cutting(run, *windows[name]).items()} for name in members
            )
        focus = models[0] if models else names[min(1, len(names) - 1)]
        start, end = next((s, e) for n, s, e in run.models if n == focus)
        slow = sorted(statements_in(run, start, end), reverse=True)[:5]
        print(f"\nslowest Spark SQL executions of `{focus}`:")
        for seconds, text in slow:
            print(f"- {seconds:.2f} s `{' '.join(text.split())[:120]}`")
        if (home / "pyspy.txt").exists():
            print("\npy-spy, dbt process threads, whole run (s):\n\n| in | s |\n|---|---|")
            print("\n".join(pyspy_summary(home / "pyspy.txt")))
    print("\n#### Lines (seconds; a one-model column sums to its wall time, a median column line by line)\n")
    print("\n".join(render(columns, walls)))
    print("\n#### Cross-cutting sums (wall s, overlap the lines above)\n")
    keys = sorted({key for extra in extras.values() for key in extra})
    print("| | " + " | ".join(extras) + " |\n|---|" + "---|" * len(extras))
    for key in keys:
        print(f"| {key} | " + " | ".join(f"{extra.get(key, 0.0):.2f}" for extra in extras.values()) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=list(SHAPES), default="many")
    parser.add_argument("--rows", type=int)
    parser.add_argument("--select", nargs="*", default=[])
    parser.add_argument(
        "--models", nargs="*", default=[], help="columns for these models (default: first, median)"
    )
    parser.add_argument("--adapters", default=",".join(ADAPTERS))
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--pyspy", action="store_true")
    parser.add_argument("--out", type=Path, help="keep the records here (default: a temp dir)")
    parser.add_argument("--report-only", action="store_true", help="re-read the records in --out")
    args = parser.parse_args()
    adapters = args.adapters.split(",")
    print(machine())
    if args.report_only:
        report({adapter: args.out / adapter for adapter in adapters}, args.models)
        return
    base = args.out or Path(tempfile.mkdtemp(prefix="dbt-profile-"))
    rows = args.rows or SHAPES[args.shape].default_rows
    print(f"shape={args.shape} rows={rows} select={args.select or 'all'} records in {base}")
    homes = {
        a: profiled_run(args.shape, a, base, rows, args.select, args.master, args.pyspy) for a in adapters
    }
    report(homes, args.models)
    if args.out is None:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
