"""dbt-tests-adapter's `--empty` suite: models built from zero-row inputs, seeds loaded empty."""

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
    pass


class TestMetadataWithEmptyFlag(MetadataWithEmptyFlag):
    pass
