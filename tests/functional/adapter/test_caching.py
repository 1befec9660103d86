"""dbt-tests-adapter's caching suite: the relation cache dbt fills from the namespace listing.

`database` is not used by dbt-lancens (the namespace root is the whole warehouse), so cached
relations carry the root directory's name. BaseCachingUppercaseModel (a `MODEL.sql`) joins once
upper-case model names build (issue 12, the name-case rule).
"""

from dbt.tests.adapter.caching.test_caching import (
    BaseCachingLowercaseModel,
    BaseCachingSelectedSchemaOnly,
    BaseNoPopulateCache,
)


class TestCachingLowercaseModel(BaseCachingLowercaseModel):
    pass


class TestCachingSelectedSchemaOnly(BaseCachingSelectedSchemaOnly):
    pass


class TestNoPopulateCache(BaseNoPopulateCache):
    pass
