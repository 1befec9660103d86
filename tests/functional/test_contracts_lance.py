"""Model contracts on Lance, read back with pylance: the declared names, order and types are the
Lance schema, and a row breaking `not_null` or `check` fails the build before anything is committed."""

from __future__ import annotations

import re
from pathlib import Path

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


# An incremental model's stored NOT NULL follows its contract as the YAML says it now. `null_id`
# adds a row whose customer is NULL; `dup` gives the merge two rows with one key (the run fails
# after the nullability change, which must then be undone).
def _incremental(config: str, nulls: bool = True) -> str:
    return (
        "{{ config(materialized='incremental', on_schema_change='append_new_columns', " + config + ") }}\n"
        "select cast(1 as int) as id, 'a' as customer, timestamp'2024-01-01 10:00:00' as ts\n"
        + ("{% if var('null_id', none) %}" if nulls else "{% if false %}")
        + " union all select cast({{ var('null_id') }} as int), "
        "cast(null as string), timestamp'2024-01-01 11:00:00' {% endif %}\n"
        "{% if var('dup', false) %} union all select 1, 'b', timestamp'2024-01-01 12:00:00' {% endif %}\n"
    )


NULLABILITY_MODELS = {
    "inc_merge": _incremental("unique_key='id'"),
    "inc_append": _incremental("incremental_strategy='append'"),
    "inc_micro": _incremental(
        "incremental_strategy='microbatch', event_time='ts', batch_size='day', begin='2024-01-01'"
    ),
    "inc_tight": _incremental("unique_key='id'", nulls=False),
    "inc_undo": _incremental("unique_key='id'"),
    "tbl": _incremental("unique_key='id'").replace("'incremental'", "'table'"),
}
NOT_NULL_CUSTOMER = "[{type: not_null}]"


def _nullability_yml(not_null: dict[str, bool], contract: dict[str, bool]) -> str:
    """Each model with a contract (unless `contract` says False) whose `customer` is not_null
    where `not_null` says so."""
    lines = ["models:"]
    for name in NULLABILITY_MODELS:
        constraints = f", constraints: {NOT_NULL_CUSTOMER}" if not_null.get(name) else ""
        lines += [
            f"  - name: {name}",
            f"    config: {{contract: {{enforced: {str(contract.get(name, True)).lower()}}}}}",
            "    columns:",
            "      - {name: id, data_type: int}",
            f"      - {{name: customer, data_type: string{constraints}}}",
            "      - {name: ts, data_type: timestamp}",
        ]
    return "\n".join(lines) + "\n"


class TestContractNullabilityOnIncrementalRuns:
    """dbt-databricks' `TestIncrementalSetNonNullConstraint`: NOT NULL is added and removed on
    incremental runs to match the YAML; here the Lance field's nullability follows it."""

    STRICT = dict.fromkeys(("inc_merge", "inc_append", "inc_micro", "inc_undo", "tbl"), True)

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            **{f"{name}.sql": sql for name, sql in NULLABILITY_MODELS.items()},
            "schema.yml": _nullability_yml(self.STRICT, {}),
        }

    def _dataset(self, project, lancens_root: str, name: str) -> lance.LanceDataset:
        info = DirectoryNamespace(lancens_root).describe_table([project.test_schema, name])
        return lance.dataset(info.location)

    def _customer(self, project, lancens_root: str, name: str) -> tuple[bool, list[tuple[int, str | None]]]:
        """Whether `customer` is a nullable Lance field, and the distinct stored (id, customer) rows
        (the append model appends its first row again on every run)."""
        dataset = self._dataset(project, lancens_root, name)
        rows = {(r["id"], r["customer"]) for r in dataset.to_table(columns=["id", "customer"]).to_pylist()}
        return dataset.schema.field("customer").nullable, sorted(rows, key=lambda row: row[0])

    def _run(self, project, yml: str, *args: str, expect_pass: bool = True) -> str:
        (Path(project.project_root) / "models" / "schema.yml").write_text(yml)
        window = ["--event-time-start", "2024-01-01", "--event-time-end", "2024-01-02"]
        _, log = run_dbt_and_capture(["run", *window, *args], expect_pass=expect_pass)
        return log

    def test_not_null_follows_the_yaml(self, project, lancens_root: str) -> None:
        self._run(project, _nullability_yml(self.STRICT, {}))
        for name in self.STRICT:
            assert self._customer(project, lancens_root, name) == (False, [(1, "a")]), name
        assert self._customer(project, lancens_root, "inc_tight") == (True, [(1, "a")])

        # the merge finds two rows for one key after customer became nullable: the run fails and
        # the table is as it was, non-nullable field included
        loose = _nullability_yml({}, {})
        self._run(project, loose, "--select", "inc_undo", "--vars", "{dup: true}", expect_pass=False)
        assert self._customer(project, lancens_root, "inc_undo") == (False, [(1, "a")])

        # not_null dropped (inc_append: the whole contract), inc_tight gains it: a NULL customer
        # arrives where the YAML allows it, and inc_tight's stored rows hold none
        contract = {"inc_append": False}
        self._run(project, _nullability_yml({"inc_tight": True}, contract), "--vars", "{null_id: 2}")
        for name in ("inc_merge", "inc_append", "inc_micro", "tbl"):
            assert self._customer(project, lancens_root, name) == (True, [(1, "a"), (2, None)]), name
        assert self._customer(project, lancens_root, "inc_tight") == (False, [(1, "a")])

        # not_null back on a column whose stored rows hold NULL: the run's rows are checked, the
        # field stays nullable and the log says why and what rebuilds it
        log = _flat(self._run(project, _nullability_yml({"inc_merge": True}, {}), "--select", "inc_merge"))
        assert self._customer(project, lancens_root, "inc_merge") == (True, [(1, "a"), (2, None)])
        assert "column customer has a not_null constraint, but stored rows hold NULL" in log, log
        assert "--full-refresh rebuilds it as a non-nullable field" in log


ADDED_SQL = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='append_new_columns') }}
select cast({{ var('id', 1) }} as int) as id
{% if var('with_status', false) %}, 'x' as status{% endif %}
"""


def _added_yml(with_status: bool) -> str:
    status = (
        "\n      - {name: status, data_type: string, constraints: [{type: not_null}]}" if with_status else ""
    )
    return (
        "models:\n  - name: added\n    config: {contract: {enforced: true}}\n    columns:\n"
        "      - {name: id, data_type: int}" + status + "\n"
    )


class TestNotNullColumnAddedByAppendNewColumns:
    """A `not_null` column `append_new_columns` adds is nullable (the existing rows hold NULL
    there), and later runs say why it stays so rather than claim a constraint Lance does not hold."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"added.sql": ADDED_SQL, "schema.yml": _added_yml(False)}

    def test_added_not_null_column_is_nullable_with_a_warning(self, project, lancens_root: str) -> None:
        run_dbt_and_capture(["run"])
        (Path(project.project_root) / "models" / "schema.yml").write_text(_added_yml(True))
        for row_id in (2, 3):
            _, log = run_dbt_and_capture(["run", "--vars", f"{{with_status: true, id: {row_id}}}"])
            info = DirectoryNamespace(lancens_root).describe_table([project.test_schema, "added"])
            dataset = lance.dataset(info.location)
            assert dataset.schema.field("status").nullable
            rows = sorted(dataset.to_table().to_pylist(), key=lambda row: row["id"])
            assert rows[0] == {"id": 1, "status": None}
        assert rows == [{"id": 1, "status": None}, {"id": 2, "status": "x"}, {"id": 3, "status": "x"}]
        # the second run with the column: its not_null cannot be recorded, and the log says so
        assert "column status has a not_null constraint, but stored rows hold NULL" in _flat(log)
