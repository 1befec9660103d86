"""dbt-tests-adapter's dbt_debug suite.

The suite's extra targets are lancens targets: `nopass` lacks the required `root` (an invalid
profile), `wronguser` has a root that is a file (the connection test fails), `none_target` is empty.
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.dbt_debug.test_dbt_debug import BaseDebugInvalidProjectPostgres, BaseDebugPostgres


class TestDebug(BaseDebugPostgres):
    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target: dict, unique_schema: str, tmp_path_factory) -> dict:
        root_file = tmp_path_factory.mktemp("debug") / "root_is_a_file"
        root_file.write_text("not a namespace")
        default = {**dbt_profile_target, "schema": unique_schema}
        nopass = {key: value for key, value in default.items() if key != "root"}
        return {
            "test": {
                "outputs": {
                    "default": default,
                    "nopass": nopass,
                    "wronguser": {**default, "root": str(root_file)},
                    "none_target": None,
                },
                "target": "default",
            }
        }


class TestDebugInvalidProject(BaseDebugInvalidProjectPostgres):
    pass
