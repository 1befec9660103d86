"""dbt-tests-adapter's `--empty` suite: models built from zero-row inputs, seeds loaded empty, and
dbt's metadata macros (columns, comments, type changes, truncation) under `--empty`.

BaseTestEmptySeedFlag's `dbt seed --empty` tests need dbt-core 1.12 (1.11 has no `--empty` on
`dbt seed`); its `dbt build --empty` test runs: a seed is loaded with its columns and no rows.
"""

from dbt.tests.adapter.empty.test_empty import (
    BaseTestEmpty,
    BaseTestEmptyInlineSourceRef,
    BaseTestEmptySeedFlag,
    MetadataWithEmptyFlag,
)


class TestEmpty(BaseTestEmpty):
    pass


class TestEmptyInlineSourceRef(BaseTestEmptyInlineSourceRef):
    pass


class TestEmptySeedFlag(BaseTestEmptySeedFlag):
    # pytest collects callables only: the `dbt seed --empty` tests (a dbt-core 1.12 option) are not run
    test_seed_empty_creates_table_with_zero_rows = None
    test_seed_empty_preserves_column_types = None


class TestMetadataWithEmptyFlag(MetadataWithEmptyFlag):
    pass
