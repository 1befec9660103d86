"""dbt's column and table maintenance macros on a Lance table, read back with pylance: adding and
dropping columns, changing a column's type and truncating are each one new version."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lancens.namespace import DirectoryNamespace

MACROS = """
{% macro lancens_test_change(action) %}
  {% set people = api.Relation.create(
        database=target.database, schema=target.schema, identifier='people', type='table') %}
  {% if action == 'add' %}
    {% do alter_relation_add_remove_columns(people, [api.Column('nickname', 'varchar')], none) %}
  {% elif action == 'drop' %}
    {% do alter_relation_add_remove_columns(people, none, [api.Column('name', 'string')]) %}
  {% elif action == 'retype' %}
    {% do alter_column_type(people, 'ID', 'string') %}
  {% elif action == 'truncate' %}
    {% do truncate_relation(people) %}
  {% endif %}
{% endmacro %}
"""


class TestAlterColumnsOnLance:
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"people.csv": "id,name\n1,a\n2,b\n"}

    @pytest.fixture(scope="class")
    def macros(self) -> dict[str, str]:
        return {"change.sql": MACROS}

    def _people(self, project, lancens_root: str) -> lance.LanceDataset:
        info = DirectoryNamespace(lancens_root).describe_table([project.test_schema, "people"])
        return lance.dataset(info.location)

    def _change(self, project, lancens_root: str, action: str) -> lance.LanceDataset:
        before = self._people(project, lancens_root).version
        run_dbt(["run-operation", "lancens_test_change", "--args", f"{{action: {action}}}"])
        people = self._people(project, lancens_root)
        assert people.version == before + 1, action
        return people

    def test_each_change_is_one_version(self, project, lancens_root: str) -> None:
        run_dbt(["seed"])
        people = self._change(project, lancens_root, "add")
        assert people.schema.names == ["id", "name", "nickname"]
        assert people.schema.field("nickname").type == pa.string()
        assert people.to_table().column("nickname").to_pylist() == [None, None]

        people = self._change(project, lancens_root, "drop")
        assert people.schema.names == ["id", "nickname"]

        people = self._change(project, lancens_root, "retype")
        assert people.schema.field("id").type == pa.string()
        assert sorted(people.to_table().column("id").to_pylist()) == ["1", "2"]
        # Spark reads the new type too
        assert project.run_sql(f"select max(id) from {project.test_schema}.people", fetch="one")[0] == "2"

        people = self._change(project, lancens_root, "truncate")
        assert people.count_rows() == 0 and people.schema.names == ["id", "nickname"]
        assert people.checkout_version(people.version - 1).count_rows() == 2  # history kept
