"""Keeping a table's Lance indexes as its `indexes` config says, after every build.

After a model, seed or snapshot build the table's latest version is compared with the config:

* an index that is missing, or whose config changed since it was built, is built (a changed one
  replaces the old under the same name); indexes dbt built that the config no longer names are
  dropped. All of them in ONE Lance `CreateIndex` commit (`index_commits.py`: the table's next
  version through the runtime's landing, or staged with the run's rows in an atomic-publish run):
  each index is built uncommitted on every fragment (`create_index_uncommitted`), then committed
  together;
* an index kept as it was but not covering every row (an incremental run or a merge added
  fragments) is optimised: Lance adds the new rows to it (`optimize_indices`), without retraining.
  In an atomic-publish run it is rebuilt instead (Lance's optimisation commits by itself);
* what dbt built is recorded in the table metadata (`lancens.indexes`: name -> the config it was
  built from), so a later run knows which indexes are its own and whether their config changed.
  Indexes made by other tools are left alone unless the config names them.

A full rebuild (a table model, `--full-refresh`, a seed) is a Lance Overwrite, which keeps no index,
so every configured index is built again on the new rows. An empty table gets no index yet (there
is nothing to train on; searches scan it), the next build with rows builds it.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import lance
import pyarrow as pa
from lance.dataset import Index

from dbt.adapters.lancens.definitions.index_config import IndexSpec, check_sub_vectors
from dbt.adapters.lancens.materializations.index_commits import index_commits
from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.runtime.landing import DIRECT, Landing
from dbt.adapters.lancens.spark.column_names import ColumnMap

RECORD_KEY = "lancens.indexes"
PARTIAL_DIR = "staging/"


@dataclass
class IndexPlan:
    """What one table needs so that its indexes match the config."""

    build: list[IndexSpec] = field(default_factory=list)
    drop: list[str] = field(default_factory=list)
    optimize: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)  # not trainable on the rows there are yet
    record: dict[str, str] | None = None  # the new `lancens.indexes` record, None when unchanged


@dataclass(frozen=True)
class IndexOutcome:
    """What `apply_indexes` changed, for the run's log line."""

    built: list[str]
    dropped: list[str]
    optimized: list[str]
    waiting: list[str]
    version: int | None  # the table's version afterwards; None when nothing was committed

    def summary(self) -> str:
        changes = (
            ("built", self.built),
            ("optimized", self.optimized),
            ("dropped", self.dropped),
            ("waiting for rows", self.waiting),
        )
        parts = [f"{label} {', '.join(names)}" for label, names in changes if names]
        return "; ".join(parts) if parts else "unchanged"


def recorded(dataset: lance.LanceDataset) -> dict[str, str]:
    """The indexes dbt built on this table: name -> the config fingerprint it was built from."""
    text = dataset.metadata.get(RECORD_KEY)
    return dict(json.loads(text)) if text else {}


def plan_indexes(dataset: lance.LanceDataset, specs: Sequence[IndexSpec]) -> IndexPlan:
    """Compare the table's latest version with the configured indexes (their columns as the table
    spells them: `check_columns`)."""
    built_by_dbt = recorded(dataset)
    present = {description.name for description in dataset.describe_indices()}
    rows = dataset.count_rows()
    plan = IndexPlan()
    stale_names = set()
    for spec in specs:
        stats = dataset.stats.index_stats(spec.name) if spec.name in present else None
        stale = stats is None or built_by_dbt.get(spec.name) != spec.fingerprint()
        if stale:
            stale_names.add(spec.name)
        if stale or (rows and not stats["num_indexed_rows"]):  # type: ignore[index]
            if rows >= min_rows(spec):
                plan.build.append(spec)
            elif rows:
                plan.waiting.append(f"{spec.name} (trains on at least {min_rows(spec)} rows, has {rows})")
        elif stats["num_unindexed_rows"]:  # type: ignore[index]
            plan.optimize.append(spec.name)
    wanted = {spec.name for spec in specs}
    plan.drop = sorted(name for name in built_by_dbt if name not in wanted and name in present)
    record = _record(specs, plan, present, built_by_dbt, stale_names)
    if record != built_by_dbt:
        plan.record = record
    return plan


def _record(
    specs: Sequence[IndexSpec],
    plan: IndexPlan,
    present: set[str],
    built_by_dbt: dict[str, str],
    stale: set[str],
) -> dict[str, str]:
    """The `lancens.indexes` record after `plan`: an index built now, or present and up to date, is
    recorded with its config. A present index whose config changed but that waits for rows keeps the
    fingerprint it was built from, so the run that brings enough rows rebuilds it; recording the new
    config would make the old index look current forever."""
    record = {}
    for spec in specs:
        if spec in plan.build or (spec.name in present and spec.name not in stale):
            record[spec.name] = spec.fingerprint()
        elif spec.name in present and spec.name in built_by_dbt:
            record[spec.name] = built_by_dbt[spec.name]
    return record


def min_rows(spec: IndexSpec) -> int:
    """Rows an index needs to be trained: Lance builds an IVF_PQ index on fewer rows than its codebook
    has entries (2^num_bits) as an index of no rows, which later optimisations never fill."""
    if spec.type == "ivf_pq":
        return int(2 ** spec.parameters.get("num_bits", 8))
    return 1


def apply_indexes(
    namespace: DirectoryNamespace,
    table_id: Sequence[str],
    specs: Sequence[IndexSpec],
    properties: dict[str, str],
    landing: Landing = DIRECT,
) -> IndexOutcome:
    """Make the table's indexes match `specs`; at most one version per kind of change.

    `landing`: the runtime's; in an atomic-publish run the changes are staged on top of the run's
    version of the table (`index_commits.py`), else they are the table's next versions."""
    commits = index_commits(namespace, table_id, properties, landing)
    if commits is None:
        raise ValueError(f"indexes: {'.'.join(table_id)} is not a table")
    dataset = commits.dataset
    specs = check_columns(specs, [(f.name, f.type) for f in dataset.schema])
    plan = plan_indexes(dataset, specs)
    if plan.optimize and not commits.optimizes:
        by_name = {spec.name: spec for spec in specs}
        plan.build.extend(by_name[name] for name in plan.optimize)
        plan.optimize = []
    version: int | None = None
    if plan.build or plan.drop:
        adopted = [commits.adopt(_build_uncommitted(dataset, spec)) for spec in plan.build]
        replaced = [*(spec.name for spec in plan.build), *plan.drop]
        removed = [segment for name in replaced for segment in _segments(dataset, name)]
        operation = lance.LanceOperation.CreateIndex([index for index, _ in adopted], removed)
        version = commits.commit(operation, [path for _, files in adopted for path in files])
    if plan.optimize:
        version = commits.optimize(plan.optimize)
    if plan.record is not None:
        record = lance.LanceOperation.UpdateMap({RECORD_KEY: json.dumps(plan.record, sort_keys=True)})
        version = commits.commit(lance.LanceOperation.UpdateConfig(table_metadata_updates=record))
    return IndexOutcome([s.name for s in plan.build], plan.drop, plan.optimize, plan.waiting, version)


def check_columns(
    specs: Sequence[IndexSpec], columns: Sequence[tuple[str, pa.DataType | None]]
) -> list[IndexSpec]:
    """`specs` with each column spelled as the table spells it (matched as Spark matches names, so
    `columns: ['id']` finds a column `ID`); raises naming the index when its column is missing, a
    vector index's column is not a vector, or an `ivf_pq` index's sub-vectors do not divide its size.

    `columns`: the table's columns and types, or those it will have after a build, checked before the
    build writes anything; a type is None for a column the build writes from the model's result,
    whose vector columns `vectors.prepare_vectors` shapes (or fails on) itself."""
    table = ColumnMap((name, (name, kind)) for name, kind in columns)
    resolved = []
    for spec in specs:
        if spec.column not in table:
            raise ValueError(
                f"index {spec.name!r}: column {spec.column!r} is not in the table "
                f"(its columns: {', '.join(table)})"
            )
        name, kind = table[spec.column]
        if spec.is_vector and kind is not None and not lance_vector(kind):
            raise ValueError(
                f"index {spec.name!r} ({spec.type}) needs column {name!r} to be a vector "
                f"(a fixed-size list of floats); it is {kind}{_rebuild_hint(kind)}"
            )
        resolved.append(dataclasses.replace(spec, column=name))
    fixed = [(n, k) for n, k in columns if k is not None and pa.types.is_fixed_size_list(k)]
    check_dimensions(resolved, ColumnMap((n, k.list_size) for n, k in fixed))
    return resolved


def check_dimensions(specs: Sequence[IndexSpec], sizes: Mapping[str, int]) -> None:
    """The vector sizes (`sizes`: column -> dimension) suit the indexes' parameters."""
    for spec in specs:
        if spec.column in sizes:
            check_sub_vectors(spec, sizes[spec.column])


def _rebuild_hint(kind: pa.DataType) -> str:
    """A variable-length list of floats was written before a vector index named the column: only a
    rebuild writes it again, as vectors."""
    if pa.types.is_list(kind) and pa.types.is_floating(kind.value_type):
        return (
            ", as the table was written before a vector index named it; rebuild the table "
            "(`--full-refresh`) to store the column as vectors"
        )
    return ""


def lance_vector(kind: pa.DataType) -> bool:
    """A type vector indexes accept: a fixed-size list of floats."""
    return pa.types.is_fixed_size_list(kind) and pa.types.is_floating(kind.value_type)


def _build_uncommitted(dataset: lance.LanceDataset, spec: IndexSpec) -> Index:
    """One index on every fragment of `dataset`, written under `_indices/` but in no version yet."""
    fragments = [fragment.fragment_id for fragment in dataset.get_fragments()]
    parameters = dict(spec.parameters)
    if spec.is_vector:
        parameters = _vector_defaults(dataset, spec, parameters)
    index = dataset.create_index_uncommitted(
        spec.column, spec.lance_type, name=spec.name, fragment_ids=fragments, replace=True, **parameters
    )
    if any(file.path.startswith(PARTIAL_DIR) for file in index.files or ()):
        # An inverted (full-text) index is built as partial files to merge: merged in place, the
        # committed index then lists no file of its own (Lance reads the merged ones).
        dataset.merge_index_metadata(index.uuid, spec.lance_type)
        index = dataclasses.replace(index, files=None)
    return index


def _vector_defaults(dataset: lance.LanceDataset, spec: IndexSpec, parameters: dict) -> dict:
    """LanceDB's defaults for what the config leaves out: sqrt(rows) partitions, and PQ
    sub-vectors of 16 (else 8, else 1) dimensions."""
    if "num_partitions" not in parameters:
        parameters["num_partitions"] = max(1, math.isqrt(dataset.count_rows()))
    if spec.type == "ivf_pq" and "num_sub_vectors" not in parameters:
        dimension = dataset.schema.field(spec.column).type.list_size
        parameters["num_sub_vectors"] = next(
            (dimension // size for size in (16, 8) if dimension % size == 0 and dimension >= size), 1
        )
    return parameters


def _segments(dataset: lance.LanceDataset, name: str) -> list[Index]:
    """The committed segments of index `name` (to remove it in a CreateIndex commit)."""
    for description in dataset.describe_indices():
        if description.name == name:
            return [
                Index(
                    uuid=segment.uuid,
                    name=description.name,
                    fields=list(description.fields),
                    dataset_version=segment.dataset_version_at_last_update,
                    fragment_ids=segment.fragment_ids,
                    index_version=segment.index_version,
                    created_at=segment.created_at,
                    base_id=segment.base_id,
                )
                for segment in description.segments
            ]
    return []
