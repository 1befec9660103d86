"""dbt-tests-adapter's sample_mode suite (`--sample` filters refs on their event_time)."""

from dbt.tests.adapter.sample_mode.test_sample_mode import BaseSampleModeTest


class TestSampleMode(BaseSampleModeTest):
    pass
