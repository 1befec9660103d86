"""The `embeddings` config: vectors computed by Spark from a text column with a function from
LanceDB's registry (`tests/embedding_functions.py`), recorded for LanceDB, kept current by
incremental runs that embed only new or changed text, and bad input refused before any commit."""

from __future__ import annotations

import json

import lance
import pyarrow as pa
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture
from dbt_common.exceptions import CompilationError

from dbt.adapters.lancens.embeddings.functions import _PROBE_TEXT
from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.embedding_functions import hashed_vector, logged_texts

ROUND_1 = [
    (1, "refund for a damaged order"),
    (2, "reset your password"),
    (3, None),
    (4, "  "),
    (5, "ship abroad"),
]
# round 2: row 2 changed, row 6 new, row 5 gone from the result, the others unchanged
ROUND_2 = [
    (1, "refund for a damaged order"),
    (2, "change your password"),
    (3, None),
    (4, "  "),
    (6, "track a parcel"),
]


def _values(rows: list[tuple[int, str | None]]) -> str:
    body = ", ".join(f"({i}, {'cast(null as string)' if t is None else repr(t)})" for i, t in rows)
    return f"select * from values {body} as t(id, body)"


def _model(
    materialized: str, log: str, extra: str = "", dims: int = 16, function: str = "lancens-test-hash"
) -> str:
    embeddings = {
        "source": "body",
        "vector": "body_vector",
        "function": function,
        "args": {"dims": dims, "log": log} if function == "lancens-test-hash" else {},
        "batch_size": 2,
        "imports": ["tests.embedding_functions"],
    }
    rounds = f"{{% if var('round', 1) == 1 %}}{_values(ROUND_1)}{{% else %}}{_values(ROUND_2)}{{% endif %}}"
    return (
        f"{{{{ config(materialized='{materialized}', unique_key='id', {extra} "
        f"embeddings=[{json.dumps(embeddings)}]) }}}}\n{rounds}\n"
    )


def _dataset(project, root: str, name: str) -> lance.LanceDataset:
    return lance.dataset(DirectoryNamespace(root).describe_table([project.test_schema, name]).location)


def _vectors(dataset: lance.LanceDataset) -> dict[int, list[float] | None]:
    table = dataset.to_table(columns=["id", "body_vector"])
    return dict(zip(table["id"].to_pylist(), table["body_vector"].to_pylist(), strict=True))


def _expected(rows: list[tuple[int, str | None]]) -> dict[int, list[float] | None]:
    return {i: (hashed_vector(t).tolist() if t and t.strip() else None) for i, t in rows}


def _embedded(log: str) -> list[str]:
    return sorted(text for text in logged_texts(log) if text != _PROBE_TEXT)


def _assert_vectors(found: dict, expected: dict) -> None:
    assert found.keys() == expected.keys()
    for key, vector in expected.items():
        assert (found[key] is None) == (vector is None), key
        if vector is not None:
            assert found[key] == pytest.approx(vector, abs=1e-6), key


class TestEmbeddings:
    @pytest.fixture(scope="class")
    def log(self, tmp_path_factory: pytest.TempPathFactory) -> str:
        return str(tmp_path_factory.mktemp("embeddings") / "embedded.jsonl")

    @pytest.fixture(scope="class")
    def models(self, log: str) -> dict[str, str]:
        index = "indexes=[{'columns': ['body_vector'], 'type': 'ivf_flat', 'num_partitions': 1}],"
        return {
            "docs_table.sql": _model("table", log + ".table", index),
            "docs_incremental.sql": _model("incremental", log, "on_schema_change='append_new_columns',"),
            "docs_delete_insert.sql": _model(
                "incremental",
                log + ".di",
                "incremental_strategy='delete+insert', on_schema_change='append_new_columns',",
            ).replace("select *", "select *{% if var('round', 1) == 3 %}, 'x' as extra{% endif %}"),
            "docs_append.sql": _model("incremental", log + ".append", "incremental_strategy='append',"),
        }

    def test_table_model_is_embedded_and_recorded(self, project, lancens_root: str, log: str) -> None:
        run_dbt(["run", "--select", "docs_table"])
        dataset = _dataset(project, lancens_root, "docs_table")
        assert dataset.schema.field("body_vector").type == pa.list_(pa.field("item", pa.float32()), 16)
        _assert_vectors(_vectors(dataset), _expected(ROUND_1))
        (entry,) = json.loads(dataset.schema.metadata[b"embedding_functions"])
        assert entry["name"] == "lancens-test-hash"
        assert (entry["source_column"], entry["vector_column"]) == ("body", "body_vector")
        assert entry["model"] == {"dims": 16, "log": log + ".table"}
        assert [index["name"] for index in dataset.list_indices()] == ["body_vector_ivf_flat"]

    def test_incremental_embeds_only_new_or_changed_text(self, project, lancens_root: str, log: str) -> None:
        run_dbt(["run", "--select", "docs_incremental"])
        assert _embedded(log) == sorted(t for _, t in ROUND_1 if t and t.strip())
        open(log, "w").close()

        _, output = run_dbt_and_capture(["run", "--select", "docs_incremental", "--vars", "{round: 2}"])
        assert _embedded(log) == ["change your password", "track a parcel"]
        assert "2 embedded, 1 reused" in output  # row 1 (same text); 3 and 4 have no text
        dataset = _dataset(project, lancens_root, "docs_incremental")
        _assert_vectors(_vectors(dataset), {**_expected(ROUND_1), **_expected(ROUND_2)})
        assert b"embedding_functions" in dataset.schema.metadata  # a merge keeps the record

        open(log, "w").close()
        run_dbt(["run", "--select", "docs_incremental", "--vars", "{round: 2}", "--full-refresh"])
        assert _embedded(log) == sorted(t for _, t in ROUND_2 if t and t.strip())
        dataset = _dataset(project, lancens_root, "docs_incremental")
        _assert_vectors(_vectors(dataset), _expected(ROUND_2))
        assert b"embedding_functions" in dataset.schema.metadata

    def test_every_write_path_keeps_the_record(self, project, lancens_root: str, log: str) -> None:
        """delete+insert, a column added by `on_schema_change`, and append keep `embedding_functions`."""
        for round_ in (1, 2, 3):
            run_dbt(
                ["run", "--select", "docs_delete_insert", "docs_append", "--vars", f"{{round: {round_}}}"]
            )
            for name in ("docs_delete_insert", "docs_append"):
                dataset = _dataset(project, lancens_root, name)
                assert b"embedding_functions" in dataset.schema.metadata, (name, round_)
        assert _embedded(log + ".di") == sorted(
            [
                "refund for a damaged order",
                "reset your password",
                "ship abroad",
                "change your password",
                "track a parcel",
            ]
        )  # round 3 changed no text: nothing embedded
        dataset = _dataset(project, lancens_root, "docs_delete_insert")
        assert "extra" in dataset.schema.names
        _assert_vectors(_vectors(dataset), {**_expected(ROUND_1), **_expected(ROUND_2)})


class TestEmbeddingsBadInput:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"docs.sql": _model("incremental", "/dev/null")}

    def _fails(self, project, lancens_root: str, model: str, expected: str, *args: str) -> None:
        before = _dataset(project, lancens_root, "docs").version
        (project.project_root / "models" / "docs.sql").write_text(model, encoding="utf-8")
        _, output = run_dbt_and_capture(["run", "--select", "docs", *args], expect_pass=False)
        assert expected in output
        assert _dataset(project, lancens_root, "docs").version == before

    def test_refused_before_any_commit(self, project, lancens_root: str) -> None:
        run_dbt(["run"])
        self._fails(project, lancens_root, _model("incremental", "/dev/null", function="no-such"),
                    "unknown embedding function 'no-such'")  # fmt: skip
        self._fails(project, lancens_root, _model("incremental", "/dev/null", function="lancens-test-broken"),
                    "cannot load the model at /nonexistent/model")  # fmt: skip
        self._fails(project, lancens_root, _model("incremental", "/dev/null", dims=8),
                    "run with --full-refresh")  # fmt: skip
        missing = _model("incremental", "/dev/null").replace("t(id, body)", "t(id, text)")
        self._fails(project, lancens_root, missing, "source column 'body' is not in the model's result")
        selected = _model("incremental", "/dev/null").replace(
            "select *", "select *, array(1.0) as body_vector"
        )
        self._fails(project, lancens_root, selected, "remove it from the model's columns")
        # the same on a rebuild: nothing is committed
        self._fails(project, lancens_root, missing, "source column 'body'", "--full-refresh")
        # a new dimension is fine on a full refresh (every row is embedded again)
        (project.project_root / "models" / "docs.sql").write_text(
            _model("incremental", "/dev/null", dims=8), encoding="utf-8"
        )
        run_dbt(["run", "--select", "docs", "--full-refresh"])
        field = _dataset(project, lancens_root, "docs").schema.field("body_vector")
        assert field.type == pa.list_(pa.field("item", pa.float32()), 8)

    def test_unknown_key_fails_parse(self, project) -> None:
        (project.project_root / "models" / "docs.sql").write_text(
            _model("table", "/dev/null").replace('"batch_size"', '"batch"'), encoding="utf-8"
        )
        with pytest.raises(CompilationError, match="unknown key `batch`"):
            run_dbt(["parse"])
