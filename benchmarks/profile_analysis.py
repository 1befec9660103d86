"""Turn one profiled `dbt run` (probe spans, Spark event log, run_results.json) into profile lines.

Every instant of a model's build (dbt's compile start to execute end) is given to exactly one line,
so a model's lines add up to its wall time. The dbt process's innermost probe span at that instant
decides, except that everything inside a session start or a catalog sync counts for that line:

- no span: P1 dbt itself; a dbt-lancens span outside the engine and Spark calls: P2;
- an engine call (``DirectoryNamespace.*``, ``ManifestTable.*``): P3;
- a call into the JVM (``SparkSession.sql``, ``DataFrameWriter.save``, ``collect``, any py4j round
  trip of 1 ms or more): what the other processes do meanwhile: a Python planner or commit worker
  serving a request (P7-P11 by worker module), else a Spark job running (P5, event log), else a
  Python worker starting (P6: daemon interpreter start, fork, worker module import), else the JVM
  alone (P4).

Inside a catalog sync (P12) or the session start (P13) the same classification is kept as sub-lines.
Cross-cutting sums (imports in workers, executor task work, manifest opens) are listed apart: they
overlap the lines above.
"""

from __future__ import annotations

import collections
import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

LINES = {
    "P1": "dbt: compile, materialization macros, adapter glue, results (dbt process, no adapter call)",
    "P2": "dbt-lancens Python outside engine and Spark calls (dbt process)",
    "P3": "namespace lookups and manifest reads/commits (engine in the dbt process)",
    "P4": "Spark JVM alone: analysis, planning, scheduling, metastore, file commit",
    "P5": "Spark jobs running (tasks; lancens: Lance reads/writes in executor Python workers)",
    "P6": "Python worker start: daemon interpreter, fork, worker module import",
    "P7": "planner worker: data source schema() (create_data_source)",
    "P8": "planner worker: reader planning (plan_data_source_read)",
    "P9": "planner worker: filter pushdown (data_source_pushdown_filters)",
    "P10": "planner worker: writer planning (write_into_data_source)",
    "P11": "commit worker: engine from properties, manifest reads, Lance commit (commit_data_source_write)",
    "P12": "catalog sync: register read/written tables in Spark's catalog (sub-lines: where it goes)",
    "P13": "Spark session start: JVM launch, data source registration (sub-lines)",
}
WORKER_LINES = {
    "create_data_source": "P7",
    "lookup_data_sources": "P6",
    "plan_data_source_read": "P8",
    "data_source_pushdown_filters": "P9",
    "write_into_data_source": "P10",
    "commit_data_source_write": "P11",
}
STICKY = {
    "P13": ("get_or_create_session", "SparkSession.Builder.getOrCreate"),
    "P12": ("SessionCatalog.register_table", "SessionCatalog.register_view",
            "LancensRuntime.refresh_table", "LancensRuntime.register_relation",
            "LancensRuntime._register_missing"),
}  # fmt: skip
JVM_CALLS = (
    "SparkSession.sql",
    "DataFrameWriter.save",
    "DataFrameWriter.saveAsTable",
    "DataFrame.collect",
    "DataFrame.toArrow",
    "DataFrame.toPandas",
    "Cursor.execute",
    "GatewayClient.send_command",
)
ENGINE_PREFIXES = ("DirectoryNamespace.", "ManifestTable.")


@dataclass(frozen=True)
class Span:
    pid: int
    ppid: int
    thread: str
    name: str
    start: float
    end: float
    cpu: float
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def dur(self) -> float:
        return self.end - self.start


@dataclass
class Run:
    """Everything recorded about one profiled `dbt run`."""

    spans: list[Span]
    roles: dict[int, str]
    dbt_pid: int
    jobs: list[tuple[float, float]]
    statements: list[tuple[float, float, str]]
    models: list[tuple[str, float, float]]
    process_start: float
    process_end: float


def load_run(probe_dir: Path, event_dir: Path, run_results: Path) -> Run:
    spans = []
    argv: dict[int, str] = {}
    for path in probe_dir.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            extra = {k: v for k, v in record.items() if k not in Span.__dataclass_fields__ and k != "dur"}
            spans.append(
                Span(record["pid"], record["ppid"], record["thread"], record["name"], record["start"],
                     record["start"] + record["dur"], record.get("cpu") or 0.0, extra)
            )  # fmt: skip
            if record["name"] == "process":
                argv[record["pid"]] = record.get("argv", "")
    roles: dict[int, str] = {}
    for pid, command in argv.items():
        if "pyspark.daemon" in command:
            roles[pid] = "daemon " + command.split()[-1].rsplit(".", 1)[-1]
        elif "dbt" in command and " run" in command:
            roles[pid] = "dbt"
    for span in spans:
        if span.pid not in roles and span.ppid in roles and roles[span.ppid].startswith("daemon"):
            roles[span.pid] = "worker " + roles[span.ppid].split()[1]
    dbt_pid = next(pid for pid, role in roles.items() if role == "dbt")
    jobs, statements = _event_log(event_dir)
    models = _models(run_results)
    process = next(s for s in spans if s.pid == dbt_pid and s.name == "process")
    process_end = max(s.end for s in spans if s.pid == dbt_pid)
    return Run(spans, roles, dbt_pid, jobs, statements, models, process.start, process_end)


def _event_log(directory: Path) -> tuple[list[tuple[float, float]], list[tuple[float, float, str]]]:
    """Spark jobs (start, end) and SQL executions (start, end, description), epoch seconds."""
    jobs: dict[int, list[float]] = {}
    sql: dict[int, list] = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file() and not p.name.startswith(".")):
        for line in path.read_text(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            kind = event.get("Event", "")
            if kind == "SparkListenerJobStart":
                jobs[event["Job ID"]] = [event["Submission Time"] / 1000, 0.0]
            elif kind == "SparkListenerJobEnd" and event["Job ID"] in jobs:
                jobs[event["Job ID"]][1] = event["Completion Time"] / 1000
            elif kind.endswith("SparkListenerSQLExecutionStart"):
                plan = (event.get("sparkPlanInfo") or {}).get("simpleString") or event.get("description", "")
                sql[event["executionId"]] = [event["time"] / 1000, 0.0, plan]
            elif kind.endswith("SparkListenerSQLExecutionEnd") and event["executionId"] in sql:
                sql[event["executionId"]][1] = event["time"] / 1000
    return (
        sorted((a, b) for a, b in jobs.values() if b),
        sorted((a, b, text) for a, b, text in sql.values() if b),
    )


def _models(run_results: Path) -> list[tuple[str, float, float]]:
    """(model name, compile start, execute end) in epoch seconds, in run order."""
    models = []
    for result in json.loads(run_results.read_text())["results"]:
        timing = {t["name"]: t for t in result["timing"]}
        if "compile" not in timing or "execute" not in timing:
            continue
        start = _epoch(timing["compile"]["started_at"])
        models.append((result["unique_id"].split(".")[-1], start, _epoch(timing["execute"]["completed_at"])))
    return sorted(models, key=lambda model: model[1])


def _epoch(text: str) -> float:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class Timeline:
    """Answers "what was running at instant t" for the classification."""

    def __init__(
        self,
        driver: list[Span],
        requests: list[tuple[Span, str]],
        jobs: list[tuple[float, float]],
        starting: list[tuple[float, float]],
    ) -> None:
        self.driver, self.requests, self.jobs, self.starting = driver, requests, jobs, starting

    @classmethod
    def of(cls, run: Run) -> Timeline:
        driver = [
            s for s in run.spans if s.pid == run.dbt_pid and not s.name.startswith(("import ", "process"))
        ]
        requests = [
            (s, run.roles.get(s.pid, "?").split()[-1])
            for s in run.spans
            if s.name.startswith("worker ") and s.pid != run.dbt_pid
        ]
        return cls(driver, requests, run.jobs, _worker_starts(run, requests))

    def window(self, start: float, end: float) -> Timeline:
        """The same timeline restricted to what overlaps [start, end) (keeps classify fast)."""

        def overlaps(a: float, b: float) -> bool:
            return a < end and b > start

        return Timeline(
            [s for s in self.driver if overlaps(s.start, s.end)],
            [(s, kind) for s, kind in self.requests if overlaps(s.start, s.end)],
            [(a, b) for a, b in self.jobs if overlaps(a, b)],
            [(a, b) for a, b in self.starting if overlaps(a, b)],
        )

    def classify(self, t: float) -> tuple[str, str | None]:
        """(line, sub-line or None) for instant ``t`` of the dbt process."""
        active = sorted((s for s in self.driver if s.start <= t < s.end), key=lambda s: (s.start, -s.end))
        sticky = next((line for s in active for line, names in STICKY.items() if s.name in names), None)
        inner = self._inner(t, active[-1] if active else None)
        return (sticky, inner) if sticky else (inner, None)

    def _inner(self, t: float, innermost: Span | None) -> str:
        if innermost is None:
            return "P1"
        if innermost.name.startswith(ENGINE_PREFIXES):
            return "P3"
        if innermost.name not in JVM_CALLS and not innermost.name.endswith("getOrCreate"):
            return "P2"
        for span, kind in self.requests:
            if span.start <= t < span.end and kind in WORKER_LINES:
                return WORKER_LINES[kind]
        if any(a <= t < b for a, b in self.jobs):
            return "P5"
        if any(span.start <= t < span.end and kind == "worker" for span, kind in self.requests):
            return "P5"
        if any(a <= t < b for a, b in self.starting):
            return "P6"
        return "P4"

    def attribute(self, start: float, end: float) -> dict[tuple[str, str | None], float]:
        """Seconds per (line, sub-line) over [start, end), from the elementary segments between
        every span, job and start-interval boundary."""
        local = self.window(start, end)
        cuts = {start, end}
        for span in local.driver:
            cuts.update((span.start, span.end))
        for span, _ in local.requests:
            cuts.update((span.start, span.end))
        for a, b in [*local.jobs, *local.starting]:
            cuts.update((a, b))
        points = sorted(c for c in cuts if start <= c <= end)
        seconds: dict[tuple[str, str | None], float] = collections.defaultdict(float)
        for a, b in zip(points, points[1:], strict=False):
            if b > a:
                seconds[local.classify((a + b) / 2)] += b - a
        return dict(seconds)


def _worker_starts(run: Run, requests: list[tuple[Span, str]]) -> list[tuple[float, float]]:
    """Intervals in which a Python worker was starting: a daemon from its process start to its first
    fork, a forked worker from the fork to its first request."""
    first_request: dict[int, float] = {}
    for span, _ in requests:
        first_request[span.pid] = min(first_request.get(span.pid, span.start), span.start)
    intervals = [
        (s.start, first_request[s.pid]) for s in run.spans if s.name == "fork" and s.pid in first_request
    ]
    first_fork: dict[int, float] = {}
    for span in run.spans:
        if span.name == "fork":
            first_fork[span.ppid] = min(first_fork.get(span.ppid, span.start), span.start)
    for span in run.spans:
        if span.name == "process" and run.roles.get(span.pid, "").startswith("daemon"):
            intervals.append((span.start, first_fork.get(span.pid, span.end)))
    return intervals


def cross_cutting(run: Run, start: float, end: float) -> dict[str, tuple[float, float, int]]:
    """Sums that overlap the lines: (wall s, CPU s, count) of spans inside [start, end)."""
    sums: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])

    def add(key: str, span: Span, seconds: float | None = None) -> None:
        entry = sums[key]
        entry[0] += span.dur if seconds is None else seconds
        entry[1] += span.cpu
        entry[2] += 1

    for span in run.spans:
        if not (start <= span.start < end):
            continue
        role = run.roles.get(span.pid, "?")
        where = "dbt process" if span.pid == run.dbt_pid else role
        if span.name.startswith("import ") and span.pid != run.dbt_pid:
            module = span.name.split()[1]
            if not (span.extra.get("parent") or "").startswith("import"):
                add("imports in Python workers (outermost imports)", span)
            if module in ("lance", "pyarrow", "pandas"):
                add(f"  of which import {module} (inclusive; pyarrow may sit inside lance)", span)
        elif span.name == "process" and role.startswith("daemon"):
            add("daemon interpreter start (process start to site)", span)
        elif span.name == "LanceReader.read":
            add("executor: LanceReader.read (time inside the generator)", span, span.extra.get("inner"))
        elif span.name == "LanceWriter.write":
            add("executor: LanceWriter.write (whole task)", span)
            add("executor: LanceWriter.write waiting for Spark's batches", span, span.extra.get("input_wait"))
        elif span.name == "write_fragments":
            add("executor: lance write_fragments", span)
        elif span.name == "ManifestTable._open":
            add(f"__manifest opens ({where})", span)
        elif span.name == "LanceDataset.to_table" and span.extra.get("parent") == "ManifestTable._refresh":
            add(f"__manifest full reads ({where})", span)
        elif span.name == "DirectoryNamespace.from_properties":
            add(f"engine rebuilt from properties ({where})", span)
        elif span.name.startswith("worker ") and span.pid != run.dbt_pid:
            add(f"requests served: {role}", span)
    return {key: (value[0], value[1], int(value[2])) for key, value in sums.items()}


def statements_in(run: Run, start: float, end: float) -> list[tuple[float, str]]:
    return [(b - a, text) for a, b, text in run.statements if start <= a < end]


def merge(values: Iterable[dict]) -> dict:
    """Median of each key over several models' attributions (absent = 0)."""
    values = list(values)
    keys = {key for value in values for key in value}
    result = {}
    for key in keys:
        series = sorted(value.get(key, 0.0) for value in values)
        middle = len(series) // 2
        result[key] = series[middle] if len(series) % 2 else (series[middle - 1] + series[middle]) / 2
    return result


def line_order(key: tuple[str, str | None]) -> tuple[int, int]:
    line, sub = key
    return int(line[1:]), int(sub[1:]) if sub else -1


def render(columns: dict[str, dict[tuple[str, str | None], float]], walls: dict[str, float]) -> list[str]:
    """Markdown table: one row per line (sub-lines indented), one column per profiled build."""
    keys = sorted({key for column in columns.values() for key in column}, key=line_order)
    names = list(columns)
    out = ["| line | where the time goes | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for key in keys:
        line, sub = key
        label = f"{line}" if sub is None else f"{line}.{sub}"
        text = LINES[line] if sub is None else f"&nbsp;&nbsp;of which {LINES[sub]}"
        cells = " | ".join(f"{columns[name].get(key, 0.0):.2f}" for name in names)
        out.append(f"| {label} | {text} | {cells} |")
    out.append(
        "| | **model wall time (sum of the lines)** | "
        + " | ".join(f"**{walls[n]:.2f}**" for n in names)
        + " |"
    )
    return out


def totals(attribution: dict[tuple[str, str | None], float]) -> dict[tuple[str, str | None], float]:
    """Add each sticky line's total (its sub-lines summed) as its own row."""
    result = dict(attribution)
    for (line, sub), seconds in attribution.items():
        if sub is not None:
            result[(line, None)] = result.get((line, None), 0.0) + seconds
    return result
