"""dbt-tests-adapter's caching suite: the relation cache dbt fills from the namespace listing.

`database` is not used by dbt-lancens (the namespace root is the whole warehouse), so cached
relations carry the root directory's name or nothing, and the suite compares them either way.
"""

from dbt.tests.adapter.caching.test_caching import (
    BaseCachingLowercaseModel,
    BaseCachingSelectedSchemaOnly,
    BaseCachingUppercaseModel,
    BaseNoPopulateCache,
)


class TestCachingLowercaseModel(BaseCachingLowercaseModel):
    pass


class TestCachingUppercaseModel(BaseCachingUppercaseModel):
    pass


class TestCachingSelectedSchemaOnly(BaseCachingSelectedSchemaOnly):
    pass


class TestNoPopulateCache(BaseNoPopulateCache):
    pass
