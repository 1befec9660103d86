"""Seeds: dbt-tests-adapter's simple_seed classes, and CSV edge cases read back with pylance.

The suite's `setUp` fixture creates `seed_expected` with Postgres DDL (`TEXT`, `TIMESTAMP WITHOUT
TIME ZONE`, two statements in one call); here the same rows (the suite's own VALUES list) are built
with Spark SQL and written as a Lance table, so `check_relations_equal` compares the same data.
The column-type class gets its expected types in Spark's names (what dbt-spark reports too), and
the custom-schema class gets dbt's default `generate_schema_name` (`<target>_<custom>`) through its
`macros` fixture, since dbt-lancens nests custom schemas instead.
"""

from __future__ import annotations

import shutil
from decimal import Decimal
from pathlib import Path

import lance
import pytest
from dbt.tests.adapter.simple_seed import seeds
from dbt.tests.adapter.simple_seed.test_seed import (
    BaseBasicSeedTests,
    BaseSeedConfigFullRefreshOff,
    BaseSeedConfigFullRefreshOn,
    BaseSeedCustomSchema,
    BaseSeedParsing,
    BaseSeedWithEmptyDelimiter,
    BaseSeedWithUniqueDelimiter,
    BaseSeedWithWrongDelimiter,
    BaseSimpleSeedEnabledViaConfig,
    BaseSimpleSeedWithBOM,
    BaseTestEmptySeed,
)
from dbt.tests.adapter.simple_seed.test_seed_type_override import BaseSimpleSeedColumnOverride
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lancens.namespace import DirectoryNamespace


def _create_seed_expected(project) -> None:
    """`seed_expected` from the suite's own rows, as a Lance table."""
    values = seeds.seeds__expected_sql.split("VALUES", 1)[1].strip().rstrip(";")
    sql = (
        "select cast(seed_id as bigint) as seed_id, first_name, email, ip_address, "
        f"cast(birthday as timestamp) as birthday from values {values} "
        "as t(seed_id, first_name, email, ip_address, birthday)"
    )
    adapter = project.adapter
    relation = adapter.Relation.create(schema=project.test_schema, identifier="seed_expected")
    with adapter.connection_named("_test"):
        adapter.write_relation(relation, sql)


class SeedExpectedInLance:
    """Replaces the suite's Postgres `setUp` with the same rows written as a Lance table."""

    @pytest.fixture(scope="class", autouse=True)
    def setUp(self, project) -> None:
        _create_seed_expected(project)


class TestBasicSeedTests(SeedExpectedInLance, BaseBasicSeedTests):
    pass


class TestSeedConfigFullRefreshOn(SeedExpectedInLance, BaseSeedConfigFullRefreshOn):
    pass


class TestSeedConfigFullRefreshOff(SeedExpectedInLance, BaseSeedConfigFullRefreshOff):
    pass


DEFAULT_SCHEMA_NAMES = """
{% macro generate_schema_name(custom_schema_name, node) -%}
  {{ target.schema }}{% if custom_schema_name %}_{{ custom_schema_name | trim }}{% endif %}
{%- endmacro %}
"""


class TestSeedCustomSchema(SeedExpectedInLance, BaseSeedCustomSchema):
    @pytest.fixture(scope="class")
    def macros(self) -> dict[str, str]:
        return {"generate_schema_name.sql": DEFAULT_SCHEMA_NAMES}


class TestSeedWithUniqueDelimiter(SeedExpectedInLance, BaseSeedWithUniqueDelimiter):
    pass


class TestSeedWithWrongDelimiter(SeedExpectedInLance, BaseSeedWithWrongDelimiter):
    pass


class TestSeedWithEmptyDelimiter(SeedExpectedInLance, BaseSeedWithEmptyDelimiter):
    pass


class TestSimpleSeedEnabledViaConfig(BaseSimpleSeedEnabledViaConfig):
    pass


class TestSeedParsing(SeedExpectedInLance, BaseSeedParsing):
    pass


class TestSimpleSeedWithBOM(BaseSimpleSeedWithBOM):
    @pytest.fixture(scope="class", autouse=True)
    def setUp(self, project) -> None:
        _create_seed_expected(project)
        bom_file = Path(seeds.__file__).parent / "seed_bom.csv"
        shutil.copy(bom_file, Path(project.project_root) / "seeds" / "seed_bom.csv")


class TestEmptySeed(BaseTestEmptySeed):
    pass


class TestSeedFormatsWithoutDots:
    """BaseSeedSpecificFormats' big and unicode seeds (its `seed.with.dots` cannot be a Spark table)."""

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        big = "seed_id\n" + "".join(f"{i}\n" for i in range(20000))
        return {"big_seed.csv": big, "seed_unicode.csv": seeds.seed__unicode_csv}

    def test_big_and_unicode_seeds(self, project, lancens_root: str) -> None:
        assert len(run_dbt(["seed"])) == 2
        ns = DirectoryNamespace(lancens_root)
        big = lance.dataset(ns.describe_table([project.test_schema, "big_seed"]).location)
        assert big.count_rows() == 20000
        assert sorted(big.to_table().column("seed_id").to_pylist()) == list(range(20000))
        unicode = lance.dataset(ns.describe_table([project.test_schema, "seed_unicode"]).location)
        expected = seeds.seed__unicode_csv.strip().splitlines()
        assert unicode.count_rows() == len(expected) - 1
        assert [str(v) for v in unicode.to_table().column(0).to_pylist()] == [
            line.split(",")[0] for line in expected[1:]
        ]


SCHEMA_YML = """
version: 2
seeds:
- name: seed_enabled
  columns:
  - name: birthday
    data_tests: [{column_type: {type: date}}]
  - name: seed_id
    data_tests: [{column_type: {type: string}}]
- name: seed_tricky
  columns:
  - name: seed_id
    data_tests: [{column_type: {type: bigint}}]
  - name: seed_id_str
    data_tests: [{column_type: {type: string}}]
  - name: a_bool
    data_tests: [{column_type: {type: boolean}}]
  - name: looks_like_a_bool
    data_tests: [{column_type: {type: string}}]
  - name: a_date
    data_tests: [{column_type: {type: timestamp}}]
  - name: looks_like_a_date
    data_tests: [{column_type: {type: string}}]
  - name: relative
    data_tests: [{column_type: {type: string}}]
  - name: weekday
    data_tests: [{column_type: {type: string}}]
"""


class TestSimpleSeedColumnOverride(BaseSimpleSeedColumnOverride):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"schema.yml": SCHEMA_YML}

    @staticmethod
    def seed_enabled_types() -> dict[str, str]:
        return {"seed_id": "string", "birthday": "date"}

    @staticmethod
    def seed_tricky_types() -> dict[str, str]:
        return {"seed_id_str": "string", "looks_like_a_bool": "string", "looks_like_a_date": "string"}


# Quotes, delimiters inside quotes, a newline inside a field, an empty field and `""` (both NULL,
# as dbt-core's agate loader makes them).
TRICKY_CSV = 'id;note;amount\n1;"say ""hi""; then go";1.5\n2;"two\nlines";\n3;"";2\n4;;3\n'
MALFORMED_CSV = "id;note;amount\n1;a;1\n2;b;2;extra\n"


class TestSeedEdgeCases:
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"tricky.csv": TRICKY_CSV}

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        column_types = {"tricky": {"+column_types": {"amount": "decimal(10,2)"}}}
        return {"seeds": {"+delimiter": ";", "+quote_columns": True, "test": column_types}}

    def _dataset(self, project, lancens_root: str) -> lance.LanceDataset:
        info = DirectoryNamespace(lancens_root).describe_table([project.test_schema, "tricky"])
        return lance.dataset(info.location)

    def test_show_prints_the_loaded_rows(self, project) -> None:
        """`dbt seed --show` samples the rows it loaded, as dbt-core's seed task does."""
        results, output = run_dbt_and_capture(["seed", "--show"])
        table = results.results[0].agate_table
        assert table.column_names == ("id", "note", "amount")
        assert sorted(table.rows, key=lambda row: row["id"]) == [
            (1, 'say "hi"; then go', Decimal("1.5")),
            (2, "two\nlines", None),
            (3, None, Decimal("2")),
            (4, None, Decimal("3")),
        ]
        assert f"Random sample of table: {project.test_schema}.tricky" in output  # rows go to stdout
        results = run_dbt(["seed"])  # without --show no rows come back
        assert len(results.results[0].agate_table.rows) == 0

    def test_fields_versions_and_malformed_file(self, project, lancens_root: str) -> None:
        run_dbt(["seed"])
        dataset = self._dataset(project, lancens_root)
        assert str(dataset.schema.field("amount").type) == "decimal128(10, 2)"
        rows = sorted(dataset.to_table().to_pylist(), key=lambda row: row["id"])
        assert [(r["id"], r["note"]) for r in rows] == [
            (1, 'say "hi"; then go'),
            (2, "two\nlines"),
            (3, None),  # "" is NULL, as in dbt-spark
            (4, None),  # an empty field is NULL
        ]
        assert [r["amount"] is None for r in rows] == [False, True, False, False]
        first = dataset.version

        run_dbt(["seed", "--full-refresh"])  # the same table's next version, history kept
        dataset = self._dataset(project, lancens_root)
        assert dataset.version == first + 1
        assert dataset.count_rows() == 4 == dataset.checkout_version(first).count_rows()

        Path(project.project_root, "seeds", "tricky.csv").write_text(MALFORMED_CSV)
        result = run_dbt(["seed"], expect_pass=False)
        message = result.results[0].message
        assert "tricky.csv" in message and "Expected 3 columns, got 4" in message
        dataset = self._dataset(project, lancens_root)
        assert dataset.version == first + 1  # nothing committed
        assert dataset.count_rows() == 4


class TestSeedSchemaChanges:
    """A seed whose columns or inferred types change is replaced, as dbt-spark's seed recreates its
    table: a header-only file (text columns) that gains rows, then a column."""

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"changing.csv": "id,name\n"}

    def test_reseeding_with_another_schema(self, project, lancens_root: str) -> None:
        table = [project.test_schema, "changing"]
        seed = Path(project.project_root, "seeds", "changing.csv")
        run_dbt(["seed"])
        first = DirectoryNamespace(lancens_root).describe_table(table).version

        seed.write_text("id,name\n1,a\n2,b\n")
        run_dbt(["seed"])
        seed.write_text("id,name,extra\n1,a,x\n")
        run_dbt(["seed"])
        info = DirectoryNamespace(lancens_root).describe_table(table)
        dataset = lance.dataset(info.location)
        assert info.version == first + 2
        assert dataset.schema.names == ["id", "name", "extra"]
        assert dataset.to_table().to_pylist() == [{"id": 1, "name": "a", "extra": "x"}]
        assert dataset.checkout_version(first + 1).to_table().to_pylist() == [
            {"id": 1, "name": "a"},
            {"id": 2, "name": "b"},
        ]
