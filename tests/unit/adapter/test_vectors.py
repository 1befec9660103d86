"""Vector columns written by Spark land as Lance fixed-size float32 lists; ragged rows are named."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.materializations.vectors import VectorColumnError, arrow_vectors, prepare_vectors


def write(frame, uri: str) -> lance.LanceDataset:
    frame.write.format("lance").mode("overwrite").save(uri)
    return lance.dataset(uri)


def test_double_arrays_become_fixed_size_float32_with_the_size_from_the_data(spark, tmp_path) -> None:
    frame = spark.sql(
        "select id, concat('doc ', id) as body, "
        "case when id = 2 then null else array(cast(id as double), 0.5D, 1.0D) end as embedding "
        "from range(5)"
    )
    prepared = prepare_vectors(frame, ["EMBEDDING"], key=["id"])
    dataset = write(prepared, str(tmp_path / "docs.lance"))
    assert dataset.schema.field("embedding").type == pa.list_(pa.field("item", pa.float32()), 3)
    assert dataset.schema.names == ["id", "body", "embedding"]
    rows = dataset.to_table().sort_by("id").to_pydict()
    assert rows["embedding"][1] == [1.0, 0.5, 1.0] and rows["embedding"][2] is None
    search = dataset.to_table(nearest={"column": "embedding", "q": [4.0, 0.5, 1.0], "k": 1}, columns=["id"])
    assert search["id"].to_pylist() == [4]


def test_a_ragged_row_fails_the_write_naming_its_key(spark, tmp_path) -> None:
    frame = spark.sql(
        "select id, 'x' as body, if(id = 3, array(1.0F), array(1.0F, 2.0F)) as embedding from range(6)"
    )
    prepared = prepare_vectors(frame, ["embedding"], key=["id", "body"])
    with pytest.raises(Exception) as info:
        write(prepared, str(tmp_path / "ragged.lance"))
    message = str(info.value)
    assert "vector column 'embedding' holds 2 values per row, but row id, body = (3, x) has 1" in message
    without_key = prepare_vectors(frame, ["embedding"], key=[])
    with pytest.raises(Exception, match=r"row id = \(3\) has 1"):  # the first other column names it
        write(without_key, str(tmp_path / "ragged2.lance"))


def test_rows_added_to_a_table_keep_its_size(spark) -> None:
    frame = spark.sql("select id, array(1.0D, 2.0D, 3.0D) as embedding from range(2)")
    with pytest.raises(Exception, match="holds 4 values per row, but row id = \\([01]\\) has 3"):
        prepare_vectors(frame, ["embedding"], key=["id"], table_sizes={"embedding": 4}).collect()


def test_a_column_that_is_no_float_array_or_is_missing_is_refused(spark) -> None:
    frame = spark.sql("select 1 as id, array('a') as words")
    with pytest.raises(
        VectorColumnError, match="'words' must be array<float> or array<double>, got array<string>"
    ):
        prepare_vectors(frame, ["words"], key=[])
    with pytest.raises(VectorColumnError, match="vector column 'embedding' .* is not in the model's result"):
        prepare_vectors(frame, ["embedding"], key=[])


def test_an_all_null_vector_column_is_refused_before_the_write(spark) -> None:
    frame = spark.sql("select id, cast(null as array<float>) as embedding from range(3)")
    with pytest.raises(VectorColumnError, match="'embedding' has no non-NULL vector to take its size"):
        prepare_vectors(frame, ["embedding"], key=["id"])


def test_a_seed_column_becomes_fixed_size_float32_and_a_ragged_row_is_named() -> None:
    rows = pa.table(
        {
            "id": [1, 2, 3],
            "Embedding": pa.array([[1.0, 2.0], None, [3.0, 4.0]], pa.list_(pa.float64())),
        }
    )
    shaped = arrow_vectors(rows, ["embedding"])
    assert shaped.schema.field("Embedding").type == pa.list_(pa.field("item", pa.float32()), 2)
    assert shaped.column("Embedding").to_pylist() == [[1.0, 2.0], None, [3.0, 4.0]]
    ragged = rows.set_column(1, "Embedding", pa.array([[1.0, 2.0], None, [3.0]], pa.list_(pa.float64())))
    with pytest.raises(VectorColumnError, match=r"holds 2 values per row, but row id = \(3\) has 1"):
        arrow_vectors(ragged, ["embedding"])
    with pytest.raises(VectorColumnError, match="declare it in the seed's column_types"):
        arrow_vectors(rows.set_column(1, "Embedding", pa.array(["[1, 2]", None, None])), ["embedding"])
    with pytest.raises(VectorColumnError, match="no non-NULL vector"):
        arrow_vectors(
            rows.set_column(1, "Embedding", pa.array([None] * 3, pa.list_(pa.float32()))), ["embedding"]
        )
