"""dbt-tests-adapter's ephemeral suite."""

from dbt.tests.adapter.ephemeral.test_ephemeral import (
    BaseEphemeralErrorHandling,
    BaseEphemeralMulti,
    BaseEphemeralNested,
)


class TestEphemeralMulti(BaseEphemeralMulti):
    pass


class TestEphemeralNested(BaseEphemeralNested):
    pass


class TestEphemeralErrorHandling(BaseEphemeralErrorHandling):
    pass
