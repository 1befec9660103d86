"""Model contracts on Lance, read back with pylance: the declared names, order and types are the
Lance schema, and a row breaking `not_null` or `check` fails the build before anything is committed."""

from __future__ import annotations

import re

import lance
import pyarrow as pa
import pytest
from dbt.tests.util import run_dbt_and_capture

from dbt.adapters.lancens.namespace import DirectoryNamespace

# `bad` picks the rows: none (valid), a NULL id, an id failing `id > 0`, a color failing the
# model-level check. The SELECT lists columns out of YAML order on purpose.
MODEL_SQL = """
{% set bad = var('bad', 'none') %}
select
  'blue' as color,
  cast({{ 'null' if bad == 'null' else ('-1' if bad == 'check' else '1') }} as bigint) as id,
  cast(12.5 as decimal(10,2)) as amount,
  timestamp'2024-01-02 03:04:05' as seen
union all
select
  '{{ 'red' if bad == 'model_check' else 'green' }}' as color,
  cast(2 as bigint) as id,
  cast(null as decimal(10,2)) as amount,
  cast(null as timestamp) as seen
"""

SCHEMA_YML = """
version: 2
models:
  - name: contracted
    config:
      materialized: table
      contract: {enforced: true}
    constraints:
      - type: check
        expression: "color != 'red'"
      - type: unique
        columns: [color]
    columns:
      - name: id
        data_type: bigint
        constraints:
          - type: not_null
          - type: check
            expression: "id > 0"
          - type: primary_key
      - name: color
        data_type: string
        constraints:
          - type: not_null
      - name: amount
        data_type: decimal(10,2)
      - name: seen
        data_type: timestamp
  - name: wrong_types
    config:
      materialized: table
      contract: {enforced: true}
    columns:
      - name: id
        data_type: int
      - name: color
        data_type: string
"""

WRONG_TYPES_SQL = "select cast(1 as bigint) as id, 'x' as color"


def _flat(text: str) -> str:
    """dbt wraps long warning lines: compare with single spaces."""
    return re.sub(r"\s+", " ", text)


class TestContractsOnLance:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"contracted.sql": MODEL_SQL, "wrong_types.sql": WRONG_TYPES_SQL, "schema.yml": SCHEMA_YML}

    def _dataset(self, project, lancens_root: str) -> lance.LanceDataset:
        info = DirectoryNamespace(lancens_root).describe_table([project.test_schema, "contracted"])
        return lance.dataset(info.location)

    def _data_files(self, dataset: lance.LanceDataset) -> set[str]:
        """The data files the current version reads."""
        return {data.path for fragment in dataset.get_fragments() for data in fragment.data_files()}

    def test_declared_schema_and_enforcement(self, project, lancens_root: str) -> None:
        _, log = run_dbt_and_capture(["run", "--select", "contracted"])
        dataset = self._dataset(project, lancens_root)
        schema = dataset.schema
        # YAML order and declared types are the Lance schema
        assert schema.names == ["id", "color", "amount", "seen"]
        assert schema.field("id").type == pa.int64()
        assert schema.field("color").type in (pa.string(), pa.large_string())
        assert schema.field("amount").type == pa.decimal128(10, 2)
        assert pa.types.is_timestamp(schema.field("seen").type)
        # `not_null` columns are non-nullable Lance fields: native writers cannot add nulls either
        assert [schema.field(name).nullable for name in schema.names] == [False, False, True, True]
        assert sorted(dataset.to_table().column("id").to_pylist()) == [1, 2]
        # primary_key / unique are accepted with dbt's warning; check and not_null are enforced
        flat = _flat(log)
        assert "The constraint type primary_key is not enforced by lancens" in flat
        assert "The constraint type unique is not enforced by lancens" in flat
        assert "The constraint type check is not enforced" not in flat
        assert "The constraint type not_null is not enforced" not in flat

        version, files = dataset.version, self._data_files(dataset)
        for bad, message in (
            ("null", "NOT NULL constraint violated for column id"),
            ("check", "CHECK constraint id > 0 violated"),
            ("model_check", "CHECK constraint color != 'red' violated"),
        ):
            results, log = run_dbt_and_capture(
                ["run", "--select", "contracted", "--vars", f"{{bad: '{bad}'}}"], expect_pass=False
            )
            assert message in results[0].message, results[0].message
            dataset = self._dataset(project, lancens_root)
            assert dataset.version == version, f"{bad}: a violating build committed a version"
            assert self._data_files(dataset) == files, f"{bad}: the current version changed"
            assert sorted(dataset.to_table().column("id").to_pylist()) == [1, 2]

    def test_type_mismatch_is_dbts_contract_error(self, project, lancens_root: str) -> None:
        results, log = run_dbt_and_capture(["run", "--select", "wrong_types"], expect_pass=False)
        flat = _flat(log)
        assert "This model has an enforced contract that failed" in flat
        assert "data type mismatch" in flat and "bigint" in flat and "int" in flat
        assert not DirectoryNamespace(lancens_root).table_exists([project.test_schema, "wrong_types"])
