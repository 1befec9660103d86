"""The `indexes` config in dbt builds: models, incremental runs, seeds and snapshots get the configured
Lance indexes, vector columns are fixed-size float32 lists, and the searches they serve answer
(checked with pylance against the rows the model selected)."""

from __future__ import annotations

from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture
from dbt_common.exceptions import CompilationError

from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.functional.atomic_publish_project import AtomicPublishProject

DIMENSION = 8
# Deterministic embeddings in SQL: component i of row `id` is sin(id * (i + 1)).
EMBEDDING = f"transform(sequence(1, {DIMENSION}), i -> sin(id * i))"

DOCUMENTS = f"""
{{{{ config(materialized='table', indexes=[
    {{'columns': ['embedding'], 'type': 'ivf_pq', 'metric': 'l2', 'num_partitions': 2, 'num_sub_vectors': 2}},
    {{'columns': ['body'], 'type': 'fts'}},
    {{'columns': ['id'], 'type': 'btree'}},
    {{'columns': ['topic'], 'type': 'bitmap'}}]) }}}}
select id,
       concat('document ', id,
              case when id % 7 = 0 then ' about lance vectors' else ' about spark' end) as body,
       element_at(array('search', 'storage', 'compute'), cast(id % 3 + 1 as int)) as topic,
       {EMBEDDING} as embedding
from range(300)
"""

# Round 1: ids 0..299; round 2 updates ids 290..299 and adds 300..339. After each build the table is
# compacted once it has more than 1 fragment (however many tasks wrote its first build: the merge
# always adds one), and only its 2 newest versions are kept.
GROWING = f"""
{{{{ config(materialized='incremental', unique_key='id', indexes=[
    {{'columns': ['embedding'], 'type': 'ivf_flat', 'num_partitions': 2}},
    {{'columns': ['id'], 'type': 'btree'}}],
    lance_maintenance={{'optimize_over_fragments': 1, 'retain_versions': 2, 'older_than_days': 0}}) }}}}
select id, {EMBEDDING} as embedding
from range({{{{ 0 if var('round', 1) == 1 else 290 }}}}, {{{{ 300 if var('round', 1) == 1 else 340 }}}})
"""

RAGGED = """
{{ config(materialized='table', indexes=[{'columns': ['embedding'], 'type': 'ivf_flat'}]) }}
select id, case when id = 3 then array(1.0D, 2.0D) else array(1.0D, 2.0D, 3.0D) end as embedding
from range(5)
"""

SEED = "id,name\n1,alpha\n2,beta\n3,gamma\n"
SEED_YML = """
seeds:
  - name: labels
    config:
      indexes: [{columns: [id], type: btree}, {columns: [name], type: fts}]
"""
SNAPSHOT = """
snapshots:
  - name: labels_history
    relation: ref('labels')
    config:
      unique_key: id
      strategy: check
      check_cols: all
      indexes: [{columns: [id], type: btree}]
"""


def _dataset(root: str, schema: str, name: str) -> lance.LanceDataset:
    info = DirectoryNamespace(root).describe_table([schema, name])
    return lance.dataset(info.location)


def _index_types(dataset: lance.LanceDataset) -> dict[str, str]:
    return {index.name: index.index_type for index in dataset.describe_indices()}


def _expected_embedding(row_id: int) -> np.ndarray:
    return np.sin(row_id * np.arange(1, DIMENSION + 1)).astype(np.float32)


class TestIndexesFromConfig:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"documents.sql": DOCUMENTS, "growing.sql": GROWING}

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"labels.csv": SEED, "schema.yml": SEED_YML}

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"labels_history.yml": SNAPSHOT}

    def test_model_indexes_and_searches(self, project, lancens_root: str) -> None:
        run_dbt(["run", "--select", "documents"])
        documents = _dataset(lancens_root, project.test_schema, "documents")
        assert _index_types(documents) == {
            "embedding_ivf_pq": "IVF_PQ",
            "body_fts": "Inverted",
            "id_btree": "BTree",
            "topic_bitmap": "Bitmap",
        }
        assert documents.schema.field("embedding").type == pa.list_(pa.float32(), DIMENSION)

        # vector search: row 42's own embedding finds row 42 first (exact rerank of the PQ candidates)
        found = documents.to_table(
            nearest={"column": "embedding", "q": _expected_embedding(42), "k": 3, "refine_factor": 10},
            columns=["id"],
        )
        assert found.column("id").to_pylist()[0] == 42
        # full-text search: exactly the rows whose body mentions "vectors" (ids divisible by 7)
        hits = documents.to_table(full_text_query="vectors", columns=["id"]).column("id").to_pylist()
        assert sorted(hits) == list(range(0, 300, 7))
        assert documents.to_table(filter="topic = 'storage' AND id < 10").num_rows == 3

    def test_incremental_run_leaves_no_row_unindexed(self, project, lancens_root: str) -> None:
        run_dbt(["run", "--select", "growing"])
        growing = _dataset(lancens_root, project.test_schema, "growing")
        assert _index_types(growing) == {"embedding_ivf_flat": "IVF_FLAT", "id_btree": "BTree"}

        run_dbt(["run", "--select", "growing", "--vars", "{round: 2}"])
        growing = _dataset(lancens_root, project.test_schema, "growing")
        assert growing.count_rows() == 340
        assert len(growing.get_fragments()) == 1  # lance_maintenance compacted it
        assert len(growing.versions()) == 2  # and kept the newest two versions
        for name in ("embedding_ivf_flat", "id_btree"):
            stats = growing.stats.index_stats(name)
            assert stats["num_unindexed_rows"] == 0, name
            assert stats["num_indexed_rows"] == 340, name
        found = growing.to_table(
            nearest={"column": "embedding", "q": _expected_embedding(333), "k": 1}, columns=["id"]
        )
        assert found.column("id").to_pylist() == [333]

    def test_seed_and_snapshot_accept_indexes(self, project, lancens_root: str) -> None:
        run_dbt(["seed"])
        labels = _dataset(lancens_root, project.test_schema, "labels")
        assert _index_types(labels) == {"id_btree": "BTree", "name_fts": "Inverted"}
        assert labels.to_table(full_text_query="beta", columns=["id"]).column("id").to_pylist() == [2]

        run_dbt(["snapshot"])
        history = _dataset(lancens_root, project.test_schema, "labels_history")
        assert _index_types(history) == {"id_btree": "BTree"}


class TestRaggedVector:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"ragged.sql": RAGGED}

    def test_ragged_row_fails_naming_its_key(self, project, lancens_root: str) -> None:
        _, output = run_dbt_and_capture(["run"], expect_pass=False)
        assert "vector column 'embedding' holds 3 values per row" in output
        assert "row id = (3) has 2" in output
        assert not DirectoryNamespace(lancens_root).table_exists([project.test_schema, "ragged"])


VECTOR_TABLE = """
{{ config(materialized='table', indexes=[{'columns': ['emb'], 'type': 'ivf_flat', 'num_partitions': 1}]) }}
select id, array(cast(id as float), 1.0f) as emb from {{ ref('vector_input') }}
"""


class TestEmptyRebuildOfAVectorTable:
    def test_an_empty_rebuild_keeps_the_tables_vector_size(self, project, lancens_root: str) -> None:
        """`dbt run --empty` (or any empty result) has no vector to take the size from: the table
        the rows replace has one."""
        run_dbt(["run"])
        run_dbt(["run", "--empty"])
        info = DirectoryNamespace(lancens_root).describe_table([project.test_schema, "vector_table"])
        dataset = lance.dataset(info.location)
        assert dataset.count_rows() == 0
        assert dataset.schema.field("emb").type == pa.list_(pa.float32(), 2)

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "vector_input.sql": "{{ config(materialized='view') }} select id from range(5)",
            "vector_table.sql": VECTOR_TABLE,
        }


ROUND = "var('round', 1) >= 2"
# Round 1 builds each model without trouble; in round 2 each one's indexes cannot be built.
LATE_VECTOR_INDEX = f"""
{{{{ config(materialized='incremental',
    indexes=([{{'columns': ['emb'], 'type': 'ivf_flat', 'num_partitions': 1}}] if {ROUND} else [])) }}}}
select id + {{{{ var('round', 1) }}}} * 100 as id, array(cast(id as float), 1.0f) as emb from range(5)
"""
MISSING_COLUMN = f"""
{{{{ config(materialized='table',
    indexes=([{{'columns': ['nope'], 'type': 'btree'}}] if {ROUND} else [])) }}}}
select id, {{{{ var('round', 1) }}}} as run from range(3)
"""
OTHER_CASE = """
{{ config(materialized='table', indexes=[{'columns': ['id'], 'type': 'btree'}]) }}
select id as ID from range(3)
"""
ALL_NULL = """
{{ config(materialized='table', indexes=[{'columns': ['emb'], 'type': 'ivf_flat', 'num_partitions': 1}]) }}
select id, cast(null as array<float>) as emb from range(3)
"""
SUB_VECTORS = """
{{ config(materialized='table', indexes=[{'columns': ['emb'], 'type': 'ivf_pq', 'num_sub_vectors': 3,
    'num_partitions': 1, 'num_bits': 4}]) }}
select id, transform(sequence(1, 4), i -> cast(id * i as float)) as emb from range(40)
"""
VECTOR_SEEDS_YML = """
seeds:
  - name: vecs
    config: &vectors
      column_types: {emb: 'array<float>'}
      indexes: [{columns: [emb], type: ivf_flat, num_partitions: 1}]
  - name: ragged_vecs
    config: *vectors
"""


class TestIndexProblemsCommitNothing:
    """Whatever can be checked before the write is: a build whose indexes cannot be built fails naming
    the problem and leaves the table as it was (or absent)."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "late.sql": LATE_VECTOR_INDEX,
            "missing.sql": MISSING_COLUMN,
            "upper.sql": OTHER_CASE,
            "nulls.sql": ALL_NULL,
            "parts.sql": SUB_VECTORS,
        }

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {
            "vecs.csv": 'id,emb\n1,"[1.0, 0.0]"\n2,"[0.0, 1.0]"\n3,\n',
            "ragged_vecs.csv": 'id,emb\n1,"[1.0, 0.0]"\n2,"[0.5]"\n',
            "schema.yml": VECTOR_SEEDS_YML,
        }

    def test_failed_index_checks_leave_the_tables_as_they_were(self, project, lancens_root: str) -> None:
        schema, exists = project.test_schema, DirectoryNamespace(lancens_root).table_exists
        run_dbt(["run", "--select", "late", "missing", "upper"])
        assert _index_types(_dataset(lancens_root, schema, "upper")) == {"id_btree": "BTree"}
        before = {name: _dataset(lancens_root, schema, name).version for name in ("late", "missing")}

        _, output = run_dbt_and_capture(["run", "--vars", "{round: 2}"], expect_pass=False)

        assert "index 'nope_btree': column 'nope' is not in the table (its columns: id, run)" in output
        assert "needs column 'emb' to be a vector" in output and "(`--full-refresh`)" in output
        assert "vector column 'emb' has no non-NULL vector to take its size" in output
        assert "`num_sub_vectors` 3 must divide the dimension of column 'emb', 4" in output
        for name, version in before.items():
            assert _dataset(lancens_root, schema, name).version == version, name
        assert _dataset(lancens_root, schema, "missing").to_table()["run"].to_pylist() == [1, 1, 1]
        assert _dataset(lancens_root, schema, "late").count_rows() == 5
        assert not exists([schema, "nulls"]) and not exists([schema, "parts"])

        run_dbt(["run", "--select", "late", "--vars", "{round: 2}", "--full-refresh"])  # as the error says
        late = _dataset(lancens_root, schema, "late")
        assert _index_types(late) == {"emb_ivf_flat": "IVF_FLAT"}
        assert late.schema.field("emb").type == pa.list_(pa.float32(), 2)

    def test_seed_vectors_are_fixed_size_and_a_ragged_row_is_named(self, project, lancens_root: str) -> None:
        _, output = run_dbt_and_capture(["seed"], expect_pass=False)
        vecs = _dataset(lancens_root, project.test_schema, "vecs")
        assert vecs.schema.field("emb").type == pa.list_(pa.float32(), 2)
        assert _index_types(vecs) == {"emb_ivf_flat": "IVF_FLAT"}
        found = vecs.to_table(nearest={"column": "emb", "q": [0.1, 0.9], "k": 1}, columns=["id"])
        assert found["id"].to_pylist() == [2]
        assert "vector column 'emb' holds 2 values per row, but row id = (2) has 1" in output
        assert not DirectoryNamespace(lancens_root).table_exists([project.test_schema, "ragged_vecs"])


class TestUnknownIndexKey:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "bad.sql": "{{ config(materialized='table', indexes=[{'columns': ['id'], 'type': 'btree', "
            "'metrc': 'l2'}]) }} select 1 as id"
        }

    def test_fails_when_dbt_parses(self, project) -> None:
        with pytest.raises(CompilationError, match="unknown key `metrc` for a btree index"):
            run_dbt(["parse"])


ATOMIC_GROWING = f"""
{{{{ config(materialized='incremental', unique_key='id', indexes=[
    {{'columns': ['embedding'], 'type': 'ivf_flat', 'num_partitions': 2}},
    {{'columns': ['id'], 'type': 'btree'}}]) }}}}
select id, {EMBEDDING} as embedding
from range({{{{ 0 if var('round', 1) == 1 else 290 }}}}, {{{{ 300 if var('round', 1) == 1 else 340 }}}})
"""
BROKEN = "{{ config(materialized='table') }} select * from {{ ref('documents') }} where assert_true(id < 0)"


def _indexes_arrive_with_rows(root: str, table_id: list[str], first_new: int) -> None:
    """No `__manifest` version shows the table's new rows (version `first_new`) without its last
    version (the one that records the indexes): readers see both or neither."""
    manifest = lance.dataset(f"{root}/__manifest")
    latest = DirectoryNamespace(root).describe_table(table_id).version
    assert latest is not None and latest > first_new  # the rows, then at least one index version
    rows, done = "$".join([*table_id, str(first_new)]), "$".join([*table_id, str(latest)])
    for version in manifest.versions():
        present = set(
            manifest.checkout_version(version["version"])
            .to_table(columns=["object_id"])["object_id"]
            .to_pylist()
        )
        assert (rows in present) == (done in present), f"__manifest version {version['version']}"


def _index_dirs(dataset: lance.LanceDataset) -> tuple[set[str], set[str]]:
    """The index directories on disk, and those the latest version references."""
    on_disk = {path.name for path in Path(dataset.uri, "_indices").iterdir()}
    return on_disk, {segment.uuid for index in dataset.describe_indices() for segment in index.segments}


class TestIndexesUnderAtomicPublish(AtomicPublishProject):
    """The indexes of an atomic run are staged on top of its staged rows and published in the same
    `__manifest` commit: no reader sees the new rows without their indexes; a failed run leaves
    neither the rows nor index files."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"documents.sql": DOCUMENTS, "growing.sql": ATOMIC_GROWING, "broken.sql": BROKEN}

    def test_indexes_published_with_their_rows(self, project, dbt_profile_target) -> None:
        root, schema = dbt_profile_target["root"], project.test_schema
        run_dbt(["run", "--exclude", "broken"])
        documents = _dataset(root, schema, "documents")  # a new table: its rows read from a scratch copy
        assert set(_index_types(documents)) == {"embedding_ivf_pq", "body_fts", "id_btree", "topic_bitmap"}
        for name in _index_types(documents):
            assert documents.stats.index_stats(name)["num_unindexed_rows"] == 0, name
        hits = documents.to_table(full_text_query="vectors", columns=["id"]).column("id").to_pylist()
        assert sorted(hits) == list(range(0, 300, 7))
        found = documents.to_table(
            nearest={"column": "embedding", "q": _expected_embedding(42), "k": 3, "refine_factor": 10},
            columns=["id"],
        )
        assert found.column("id").to_pylist()[0] == 42
        assert "ScalarIndexQuery" in documents.scanner(filter="id = 17").explain_plan()
        _indexes_arrive_with_rows(root, [schema, "documents"], 1)
        _indexes_arrive_with_rows(root, [schema, "growing"], 1)

        # an incremental run on an existing table: the new rows are read from a detached version,
        # and the indexes that miss them are rebuilt inside the publish
        before = _dataset(root, schema, "growing").version
        run_dbt(["run", "--select", "growing", "--vars", "{round: 2}"])
        growing = _dataset(root, schema, "growing")
        assert growing.count_rows() == 340
        for name in ("embedding_ivf_flat", "id_btree"):
            stats = growing.stats.index_stats(name)
            assert (stats["num_indexed_rows"], stats["num_unindexed_rows"]) == (340, 0), name
        found = growing.to_table(
            nearest={"column": "embedding", "q": _expected_embedding(333), "k": 1}, columns=["id"]
        )
        assert found.column("id").to_pylist() == [333]
        _indexes_arrive_with_rows(root, [schema, "growing"], before + 1)
        on_disk, referenced = _index_dirs(growing)
        assert referenced <= on_disk

    def test_failed_run_publishes_neither_rows_nor_indexes(self, project, dbt_profile_target) -> None:
        root, schema = dbt_profile_target["root"], project.test_schema
        run_dbt(["run", "--exclude", "broken"])
        documents = _dataset(root, schema, "documents")
        before_version, before_dirs = documents.version, _index_dirs(documents)[0]
        run_dbt(["run", "--select", "documents", "broken"], expect_pass=False)
        documents = _dataset(root, schema, "documents")
        assert documents.version == before_version
        assert _index_dirs(documents)[0] == before_dirs  # the failed run's index files are gone
        assert documents.count_rows() == 300
