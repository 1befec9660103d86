"""The dbt plugin: built on dbt-spark, so `spark__` macros serve wherever lancens has none."""

from dbt.adapters.base import AdapterPlugin

from dbt.adapters.lancens.adapter.impl import LancensAdapter
from dbt.adapters.lancens.definitions.credentials import LancensCredentials
from dbt.include import lancens

Plugin = AdapterPlugin(
    adapter=LancensAdapter,  # type: ignore[arg-type]
    credentials=LancensCredentials,
    include_path=lancens.PACKAGE_PATH,
    # macros are called as `lancens.<macro>` (README "Versions, registration, time travel")
    project_name="lancens",
    dependencies=["spark"],
)
