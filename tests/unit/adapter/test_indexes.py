"""Indexes kept as the config says, on tables of a real namespace (local disk and moto S3), with the
searches they serve checked through pylance."""

from __future__ import annotations

import lance
import numpy as np
import pyarrow as pa
import pytest

from dbt.adapters.lancens.definitions.index_config import parse_indexes
from dbt.adapters.lancens.materializations.indexes import RECORD_KEY, apply_indexes, check_columns, recorded
from dbt.adapters.lancens.metadata import catalog
from dbt.adapters.lancens.namespace import DirectoryNamespace, errors
from dbt.adapters.lancens.namespace.storage import Storage
from dbt.adapters.lancens.namespace.versions import TVM_KEY
from dbt.adapters.lancens.runtime.staging import RunPublisher
from tests.unit.adapter.helpers import namespace_on

DIMENSION = 8
CONFIG = [
    {
        "columns": ["embedding"],
        "type": "ivf_pq",
        "metric": "cosine",
        "num_partitions": 2,
        "num_sub_vectors": 2,
    },
    {"columns": ["body"], "type": "fts"},
    {"columns": ["id"], "type": "btree"},
    {"columns": ["topic"], "type": "bitmap"},
    {"columns": ["tags"], "type": "label_list"},
]
TYPES = {
    "embedding_ivf_pq": "IVF_PQ",
    "body_fts": "Inverted",
    "id_btree": "BTree",
    "topic_bitmap": "Bitmap",
    "tags_label_list": "LabelList",
}
WHO = {"dbt_invocation_id": "test-run"}


def documents(start: int, count: int) -> pa.Table:
    """Rows with deterministic embeddings: each row's vector is its own, seeded by its id."""
    ids = list(range(start, start + count))
    vectors = np.array(
        [np.random.default_rng(i).random(DIMENSION, dtype=np.float32) for i in ids], dtype=np.float32
    )
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "body": pa.array(
                [f"document {i} about {'lance tables' if i % 2 else 'spark jobs'}" for i in ids], pa.string()
            ),
            "topic": pa.array([["search", "storage", "compute"][i % 3] for i in ids], pa.string()),
            "tags": pa.array([["a", "b", "c"][: 1 + i % 3] for i in ids], pa.list_(pa.string())),
            "embedding": pa.FixedSizeListArray.from_arrays(
                pa.array(vectors.ravel(), pa.float32()), DIMENSION
            ),
        }
    )


@pytest.fixture(params=["local", "s3", "s3-managed"])
def namespace(request: pytest.FixtureRequest, tmp_path) -> DirectoryNamespace:
    ns = namespace_on(
        request, request.param.split("-")[0], tmp_path, managed=request.param.endswith("managed")
    )
    ns.create_namespace(["docs"])
    return ns


def dataset(ns: DirectoryNamespace, table: list[str]) -> lance.LanceDataset:
    return lance.dataset(ns.describe_table(table).location, storage_options=ns.storage_options or None)


def index_types(ds: lance.LanceDataset) -> dict[str, str]:
    return {d.name: ds.stats.index_stats(d.name)["index_type"] for d in ds.describe_indices()}


def unindexed(ds: lance.LanceDataset) -> dict[str, int]:
    return {d.name: ds.stats.index_stats(d.name)["num_unindexed_rows"] for d in ds.describe_indices()}


def append(ns: DirectoryNamespace, table: list[str], rows: pa.Table) -> None:
    location = ns.describe_table(table).location
    fragments = lance.fragment.write_fragments(rows, location, storage_options=ns.storage_options or None)
    ns.commit_table(
        table, lance.LanceOperation.Append(fragments), read_version=ns.describe_table(table).version
    )


def nearest(ds: lance.LanceDataset, vector: list[float]) -> int:
    query = {"column": "embedding", "q": vector, "k": 1, "nprobes": 2, "refine_factor": 5}
    return ds.to_table(nearest=query, columns=["id"])["id"][0].as_py()


def test_indexes_are_built_in_one_commit_and_serve_searches(namespace: DirectoryNamespace) -> None:
    table = ["docs", "documents"]
    namespace.create_table(table, documents(0, 300))
    before = namespace.describe_table(table).version

    outcome = apply_indexes(namespace, table, parse_indexes(CONFIG), WHO)

    ds = dataset(namespace, table)
    assert index_types(ds) == TYPES
    assert sorted(outcome.built) == sorted(TYPES) and outcome.dropped == [] and outcome.optimized == []
    # one CreateIndex commit for all five, one metadata commit recording what dbt built
    assert ds.version == before + 2
    assert set(recorded(ds)) == set(TYPES)
    assert ds.read_transaction(before + 1).transaction_properties == WHO  # who built the indexes
    rows = documents(0, 300)
    assert nearest(ds, rows["embedding"][123].as_py()) == 123
    found = ds.to_table(full_text_query="lance", columns=["id"])["id"].to_pylist()
    assert found and all(i % 2 == 1 for i in found)
    assert ds.to_table(filter="id = 42", columns=["id"])["id"].to_pylist() == [42]
    # `dbt docs` shows them: the catalog's `indexes` stat
    entry = next(e for e in namespace.list_objects() if e.id == table)
    shown = catalog.table_relation(namespace, entry).stats["indexes"]  # type: ignore[union-attr]
    assert "embedding_ivf_pq (IVF_PQ on embedding)" in shown and "body_fts (Inverted on body)" in shown


def test_new_rows_are_indexed_and_nothing_changes_when_nothing_is_due(namespace: DirectoryNamespace) -> None:
    table = ["docs", "growing"]
    namespace.create_table(table, documents(0, 300))
    specs = parse_indexes(CONFIG)
    apply_indexes(namespace, table, specs, WHO)
    append(namespace, table, documents(300, 40))
    assert set(unindexed(dataset(namespace, table)).values()) == {40}

    outcome = apply_indexes(namespace, table, specs, WHO)

    ds = dataset(namespace, table)
    assert sorted(outcome.optimized) == sorted(TYPES) and outcome.built == []
    assert set(unindexed(ds).values()) == {0}
    assert ds.count_rows() == 340
    assert nearest(ds, documents(300, 40)["embedding"][7].as_py()) == 307
    assert ds.to_table(full_text_query="document 333", columns=["id"])["id"].to_pylist()[0] == 333
    again = apply_indexes(namespace, table, specs, WHO)
    assert again.summary() == "unchanged" and again.version is None
    assert dataset(namespace, table).version == ds.version


def test_a_changed_config_replaces_and_a_removed_one_drops_only_what_dbt_built(
    namespace: DirectoryNamespace,
) -> None:
    table = ["docs", "changing"]
    namespace.create_table(table, documents(0, 100))
    apply_indexes(namespace, table, parse_indexes(CONFIG[2:4]), WHO)
    ds = dataset(namespace, table)
    ds.create_scalar_index("body", "INVERTED", name="made_elsewhere")  # another tool's index

    changed = [{"columns": ["id"], "type": "bitmap", "name": "id_btree"}]  # same name, new type
    outcome = apply_indexes(namespace, table, parse_indexes(changed), WHO)

    ds = dataset(namespace, table)
    assert outcome.built == ["id_btree"] and outcome.dropped == ["topic_bitmap"]
    assert index_types(ds) == {"id_btree": "Bitmap", "made_elsewhere": "Inverted"}
    assert len(next(d for d in ds.describe_indices() if d.name == "id_btree").segments) == 1
    assert set(recorded(ds)) == {"id_btree"}
    assert ds.to_table(filter="id = 7", columns=["id"])["id"].to_pylist() == [7]


def test_an_overwritten_table_gets_its_indexes_again(namespace: DirectoryNamespace) -> None:
    table = ["docs", "rebuilt"]
    namespace.create_table(table, documents(0, 100))
    specs = parse_indexes(CONFIG[1:])
    apply_indexes(namespace, table, specs, WHO)
    location = namespace.describe_table(table).location
    fragments = lance.fragment.write_fragments(
        documents(100, 50), location, storage_options=namespace.storage_options or None
    )
    namespace.commit_table(
        table,
        lance.LanceOperation.Overwrite(documents(0, 1).schema, fragments),
        read_version=namespace.describe_table(table).version,
    )
    assert dataset(namespace, table).describe_indices() == []
    assert RECORD_KEY in dataset(namespace, table).metadata  # Overwrite keeps the table metadata

    outcome = apply_indexes(namespace, table, specs, WHO)

    assert sorted(outcome.built) == sorted(n for n in TYPES if n != "embedding_ivf_pq")
    assert set(unindexed(dataset(namespace, table)).values()) == {0}


def test_empty_table_waits_and_a_missing_or_wrong_column_is_named(namespace: DirectoryNamespace) -> None:
    table = ["docs", "empty"]
    namespace.create_table(table, documents(0, 0))
    outcome = apply_indexes(namespace, table, parse_indexes(CONFIG), WHO)
    assert outcome.built == [] and dataset(namespace, table).describe_indices() == []
    append(namespace, table, documents(0, 100))  # too few rows for IVF_PQ's 256-entry codebook
    outcome = apply_indexes(namespace, table, parse_indexes(CONFIG), WHO)
    assert "embedding_ivf_pq" not in outcome.built and len(outcome.built) == 4
    assert outcome.waiting == ["embedding_ivf_pq (trains on at least 256 rows, has 100)"]
    append(namespace, table, documents(100, 200))
    outcome = apply_indexes(namespace, table, parse_indexes(CONFIG), WHO)
    assert outcome.built == ["embedding_ivf_pq"] and sorted(outcome.optimized) == sorted(
        set(TYPES) - {"embedding_ivf_pq"}
    )
    assert set(unindexed(dataset(namespace, table)).values()) == {0}

    with pytest.raises(ValueError, match="column 'missing' is not in the table"):
        apply_indexes(namespace, table, parse_indexes([{"columns": ["missing"], "type": "btree"}]), WHO)
    with pytest.raises(ValueError, match="needs column 'body' to be a vector"):
        apply_indexes(namespace, table, parse_indexes([{"columns": ["body"], "type": "ivf_flat"}]), WHO)


def test_a_changed_config_waiting_for_rows_is_applied_when_they_arrive(tmp_path) -> None:
    ns = DirectoryNamespace(str(tmp_path / "root"))
    ns.create_namespace(["docs"])
    table = ["docs", "waiting"]
    ns.create_table(table, documents(0, 20))
    pq = {"columns": ["embedding"], "type": "ivf_pq", "num_partitions": 1, "num_sub_vectors": 2}
    first = parse_indexes([{**pq, "metric": "l2", "num_bits": 4}])  # 16 rows train it
    changed = parse_indexes([{**pq, "metric": "cosine", "num_bits": 8}])  # 256 rows train it
    assert apply_indexes(ns, table, first, WHO).built == ["embedding_ivf_pq"]
    append(ns, table, documents(20, 20))

    waiting = apply_indexes(ns, table, changed, WHO)

    assert waiting.waiting == ["embedding_ivf_pq (trains on at least 256 rows, has 40)"]
    assert recorded(dataset(ns, table)) == {"embedding_ivf_pq": first[0].fingerprint()}  # still the old
    append(ns, table, documents(40, 300))

    assert apply_indexes(ns, table, changed, WHO).built == ["embedding_ivf_pq"]

    ds = dataset(ns, table)
    assert recorded(ds) == {"embedding_ivf_pq": changed[0].fingerprint()}
    segments = ds.stats.index_stats("embedding_ivf_pq")["indices"]
    assert [(s["metric_type"], s["sub_index"]["nbits"]) for s in segments] == [("cosine", 8)]


def test_columns_are_checked_in_any_case_and_named_as_the_table_spells_them() -> None:
    vector, floats = pa.list_(pa.float32(), 8), pa.list_(pa.float32())
    specs = parse_indexes([{"columns": ["id"], "type": "btree"}, {"columns": ["emb"], "type": "ivf_flat"}])
    resolved = check_columns(specs, [("ID", pa.int64()), ("Emb", vector)])
    assert [(s.name, s.column) for s in resolved] == [("id_btree", "ID"), ("emb_ivf_flat", "Emb")]
    assert check_columns(specs, [("id", None), ("emb", None)]) == specs  # shaped by the write itself
    with pytest.raises(ValueError, match=r"column 'id' is not in the table \(its columns: key, emb\)"):
        check_columns(specs, [("key", None), ("emb", None)])
    with pytest.raises(ValueError, match=r"needs column 'emb' to be a vector .* rebuild the table \(`--full"):
        check_columns(specs, [("id", None), ("emb", floats)])
    pq = parse_indexes([{"columns": ["emb"], "type": "ivf_pq", "num_sub_vectors": 3}])
    with pytest.raises(ValueError, match="`num_sub_vectors` 3 must divide the dimension of column 'emb', 8"):
        check_columns(pq, [("emb", vector)])


def test_under_table_version_management_every_index_commit_is_a_managed_version(tmp_path) -> None:
    ns = DirectoryNamespace(str(tmp_path / "root"))
    ns.alter_namespace_properties([], {"table_version_management": "true"})
    ns.create_namespace(["docs"])
    table = ["docs", "managed"]
    ns.create_table(table, documents(0, 300))
    specs = parse_indexes(CONFIG)
    apply_indexes(ns, table, specs, WHO)
    append(ns, table, documents(300, 30))

    apply_indexes(ns, table, specs, {"dbt_invocation_id": "second-run"})

    ds = dataset(ns, table)
    assert set(unindexed(ds).values()) == {0}
    latest = ns.describe_table_version(table)
    assert latest.version == ds.version
    assert latest.metadata.get("dbt_invocation_id") == "second-run"  # the optimize commit's row
    assert latest.manifest_path.endswith(".manifest")


def _staged_write(ns: DirectoryNamespace, publisher: RunPublisher, table: list[str], data: pa.Table) -> int:
    """Stage `data` as the run's version of `table`, as a model build of an atomic run does."""
    try:
        info = ns.describe_table(table)
        location, read_version = info.location, info.version
    except errors.TableNotFoundError:
        location, read_version = ns.table_location(table), None
    options = ns.storage_options or None
    fragments = lance.fragment.write_fragments(data, location, storage_options=options)
    operation = (
        lance.LanceOperation.Append(fragments)
        if read_version is not None
        else lance.LanceOperation.Overwrite(data.schema, fragments)
    )
    return publisher.land(ns, table, operation, read_version, WHO, location=location)


def test_staged_indexes_are_published_with_the_rows(namespace: DirectoryNamespace) -> None:
    """Atomic publish: the indexes are built on the run's readable copy of its staged rows (a scratch
    dataset for a new table, a detached version for an existing one), staged on top of the rows, and
    become visible in the same publish; discarded, neither rows nor index files stay."""
    namespace.alter_namespace_properties([], {TVM_KEY: "true"})
    table, specs = ["docs", "documents"], parse_indexes(CONFIG)
    publisher = RunPublisher.start(namespace, "run-1")
    assert _staged_write(namespace, publisher, table, documents(0, 300)) == 1
    outcome = apply_indexes(namespace, table, specs, WHO, landing=publisher)
    assert sorted(outcome.built) == sorted(TYPES) and outcome.version == 3
    assert not namespace.table_exists(table)  # nothing visible before the publish
    assert namespace.publish(publisher.staged_commits()) == {("docs", "documents"): 3}
    ds = dataset(namespace, table)
    assert index_types(ds) == TYPES and set(recorded(ds)) == set(TYPES)
    for name in TYPES:
        assert ds.stats.index_stats(name)["num_unindexed_rows"] == 0, name
    assert nearest(ds, documents(0, 300)["embedding"][123].as_py()) == 123
    assert ds.to_table(full_text_query="lance", columns=["id"])["id"].to_pylist()

    # the next run appends: the indexes missing the new rows are rebuilt inside its publish
    publisher = RunPublisher.start(namespace, "run-2")
    assert _staged_write(namespace, publisher, table, documents(300, 300)) == 4
    outcome = apply_indexes(namespace, table, specs, WHO, landing=publisher)
    assert sorted(outcome.built) == sorted(TYPES) and outcome.optimized == [] and outcome.version == 5
    assert dataset(namespace, table).version == 3
    namespace.publish(publisher.staged_commits())
    ds = dataset(namespace, table)
    assert ds.version == 5 and ds.count_rows() == 600
    for name in TYPES:
        assert ds.stats.index_stats(name)["num_indexed_rows"] == 600, name
    assert nearest(ds, documents(300, 300)["embedding"][150].as_py()) == 450


def test_a_discarded_run_leaves_no_index_files(namespace: DirectoryNamespace) -> None:
    namespace.alter_namespace_properties([], {TVM_KEY: "true"})
    table = ["docs", "documents"]
    namespace.create_table(table, documents(0, 300))
    storage = Storage(namespace.root, namespace.storage_options)
    indices = f"{namespace.describe_table(table).location}/_indices"
    publisher = RunPublisher.start(namespace, "run-1")
    _staged_write(namespace, publisher, table, documents(300, 10))
    apply_indexes(namespace, table, parse_indexes(CONFIG[2:4]), WHO, landing=publisher)
    written = publisher.writes[tuple(table)]
    # the three staged versions' manifests, the staged rows' data file and the two index
    # directories built on them
    assert len(written.chain) == 3
    folders = sorted(path.rsplit("/", 2)[-2] for path in written.unpublished_garbage)
    assert folders == ["_indices", "_indices", "_versions", "_versions", "_versions", "data"]
    assert len(storage.names(indices)) == 2  # built, staged, not visible
    for path in (*written.garbage, *written.unpublished_garbage):
        storage.rm_tree(path)
    assert storage.names(indices) == []
    ds = dataset(namespace, table)
    assert ds.version == 1 and ds.describe_indices() == [] and ds.count_rows() == 300
