"""dbt-tests-adapter's dbt_clone suite: `dbt clone --state` on Lance tables.

A table clones into a Lance shallow clone in the target schema (no data copied; it holds the source
version it reads); a view is re-created as a view. The suite's generated schemas use single underscores, which
namespace levels allow.
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.dbt_clone.test_dbt_clone import (
    BaseCloneNotPossible,
    BaseClonePossible,
    BaseCloneSameTargetAndState,
)


class DropSchemas:
    @pytest.fixture(autouse=True)
    def clean_up(self, project, other_schema):
        yield
        with project.adapter.connection_named("__test"):
            # the clones first: a table a clone reads cannot be purged (metadata/clone_holds.py)
            for schema in (other_schema, f"{project.test_schema}_seeds", project.test_schema):
                relation = project.adapter.Relation.create(database=project.database, schema=schema)
                project.adapter.drop_schema(relation)


class TestClonePossible(DropSchemas, BaseClonePossible):
    pass


class TestCloneNotPossible(DropSchemas, BaseCloneNotPossible):
    pass


class TestCloneSameTargetAndState(DropSchemas, BaseCloneSameTargetAndState):
    pass
