"""A model with a vector index keeps its rows whose vector is NULL.

The vector's size is read from the data before the write. That query (`embedding IS NOT NULL`) ran
on the model's frame, whose single read of a Lance table has filter pushdown; PySpark kept the
reader it planned for the size query on the relation and the write reused it, so the rows with a
NULL vector were lost. Checked on a table model and on an incremental run that adds the column,
which must add it as a vector (a fixed-size list), or the index cannot be built on it.
"""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lancens.namespace import DirectoryNamespace

DOCS = 'id,embedding\n1,"[1.0, 2.0]"\n2,\n3,"[3.0, 4.0]"\n4,\n'
INDEX = "indexes=[{'columns': ['embedding'], 'type': 'ivf_flat', 'num_partitions': 1}]"
TABLE = f"{{{{ config(materialized='table', {INDEX}) }}}} select id, embedding from {{{{ ref('docs') }}}}"
INCREMENTAL = """
{% set second = var('round', 1) == 2 %}
{% set index = {'columns': ['embedding'], 'type': 'ivf_flat', 'num_partitions': 1} %}
{{ config(materialized='incremental', unique_key='id', on_schema_change='append_new_columns',
          indexes=([index] if second else [])) }}
select id{% if second %}, embedding{% endif %} from {{ ref('docs') }}
"""


class TestVectorModelKeepsNullVectors:
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"docs.csv": DOCS}

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return {"seeds": {"+column_types": {"embedding": "array<float>"}}}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"vectors_table.sql": TABLE, "vectors_incremental.sql": INCREMENTAL}

    def _rows(self, project, lancens_root: str, name: str) -> list[tuple]:
        info = DirectoryNamespace(lancens_root).describe_table([project.test_schema, name])
        table = lance.dataset(info.location).to_table().sort_by("id")
        return list(zip(table.column("id").to_pylist(), table.column("embedding").to_pylist(), strict=True))

    def test_null_vectors_are_written(self, project, lancens_root: str) -> None:
        run_dbt(["seed"])
        run_dbt(["run", "--select", "vectors_table"])
        expected = [(1, [1.0, 2.0]), (2, None), (3, [3.0, 4.0]), (4, None)]
        assert self._rows(project, lancens_root, "vectors_table") == expected
        run_dbt(["run", "--select", "vectors_incremental"])
        run_dbt(["run", "--select", "vectors_incremental", "--vars", "{round: 2}"])
        assert self._rows(project, lancens_root, "vectors_incremental") == expected
        for name in ("vectors_table", "vectors_incremental"):
            info = DirectoryNamespace(lancens_root).describe_table([project.test_schema, name])
            dataset = lance.dataset(info.location)
            assert dataset.schema.field("embedding").type == pa.list_(pa.field("item", pa.float32()), 2)
            assert [index["name"] for index in dataset.list_indices()] == ["embedding_ivf_flat"], name
