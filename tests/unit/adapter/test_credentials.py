"""The lancens profile: required keys, the unused database, and secrets kept out of what dbt prints."""

import os

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lancens.definitions.credentials import LancensCredentials, redact_connect_url


def credentials(**overrides: object) -> LancensCredentials:
    fields = {"root": "./warehouse", "schema": "analytics", **overrides}
    return LancensCredentials.from_dict(fields)


def test_defaults_follow_the_profile_table() -> None:
    creds = credentials()
    assert (creds.manifest_enabled, creds.dir_listing_enabled) == (True, True)
    assert creds.table_version_management is False
    assert creds.master == "local[*]"
    assert creds.database == "warehouse"  # the root directory's name


def test_relative_root_resolves_against_the_project(tmp_path) -> None:
    properties = credentials(storage_options={"region": "r1"}).namespace_properties(str(tmp_path))
    assert properties["root"] == os.path.join(str(tmp_path), "warehouse")
    assert properties["storage.region"] == "r1"
    assert credentials(root="s3://b/p").namespace_properties(str(tmp_path))["root"] == "s3://b/p"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"root": ""}, "`root` is required"),
        ({"schema": ""}, "`schema` is required"),
        ({"schema": "Bad-Name"}, "Invalid schema level"),
        ({"database": "elsewhere"}, "`database` is not used"),
        ({"remote": "sc://h:15002", "master": "local[2]"}, "`master` and `remote` are both set"),
        ({"remote": "http://h:15002/;token=t0ps3cret"}, "`remote` is a Spark Connect URL"),
    ],
)
def test_bad_profiles_fail_clearly(overrides: dict, message: str) -> None:
    with pytest.raises(DbtRuntimeError, match=message):
        credentials(**overrides)


def test_database_may_name_the_root() -> None:
    assert credentials(root="/data/warehouse", database="warehouse").database == "warehouse"


def test_secrets_are_not_part_of_the_printed_connection_info() -> None:
    creds = credentials(storage_options={"secret_access_key": "s3cr3t", "region": "r1"})
    printed = dict(creds.connection_info())
    assert "s3cr3t" not in repr(printed)
    assert creds.redacted_storage_options() == {"secret_access_key": "****", "region": "r1"}


def test_a_connect_token_is_masked_wherever_the_url_or_an_error_shows_it() -> None:
    url = "sc://spark.example.com:15002/;use_ssl=true;token=t0ps3cret;user_id=ana"
    assert redact_connect_url(url) == "sc://spark.example.com:15002/;use_ssl=true;token=****;user_id=ana"
    creds = credentials(remote=url)
    assert creds.redact(f"failed to reach {url}: refused") == (
        "failed to reach sc://spark.example.com:15002/;use_ssl=true;token=****;user_id=ana: refused"
    )
    assert "t0ps3cret" not in str(creds.connection_info())
    with pytest.raises(DbtRuntimeError) as raised:
        credentials(remote="http://h:15002/;token=t0ps3cret")
    assert "t0ps3cret" not in str(raised.value)


def test_the_catalog_cache_is_on_for_object_stores_and_off_for_local_roots(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DBT_LANCENS_CACHE_DIR", str(tmp_path / "user-cache"))
    s3 = credentials(root="s3://b/p").namespace_properties(str(tmp_path))
    assert s3["catalog_cache_dir"] == str(tmp_path / "user-cache" / "catalog")
    assert "catalog_cache_dir" not in credentials().namespace_properties(str(tmp_path))
    assert "catalog_cache_dir" not in credentials(root="memory://w").namespace_properties(str(tmp_path))
    off = credentials(root="s3://b/p", catalog_cache=False).namespace_properties(str(tmp_path))
    assert "catalog_cache_dir" not in off
    assert "catalog_cache_dir" not in credentials(root="s3://b/p", catalog_cache="off").namespace_properties()
    on = credentials(catalog_cache=True).namespace_properties(str(tmp_path))
    assert on["catalog_cache_dir"] == str(tmp_path / "user-cache" / "catalog")
    own = credentials(root="s3://b/p", catalog_cache="cache/here").namespace_properties(str(tmp_path))
    assert own["catalog_cache_dir"] == os.path.join(str(tmp_path), "cache", "here")


def test_the_catalog_cache_defaults_to_the_users_cache_directory(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("DBT_LANCENS_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    properties = credentials(root="s3://b/p").namespace_properties()
    assert properties["catalog_cache_dir"] == str(tmp_path / "dbt-lancens" / "catalog")
