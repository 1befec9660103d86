"""dbt-tests-adapter's persist_docs suite, plus where the descriptions live: Lance table and field
metadata (read with pylance, as any Lance tool would) and the view's namespace properties."""

from __future__ import annotations

import lance
from dbt.tests.adapter.persist_docs.test_persist_docs import (
    BasePersistDocs,
    BasePersistDocsAllColumnsMissing,
    BasePersistDocsColumnMissing,
    BasePersistDocsCommentOnQuotedColumn,
    BasePersistDocsQuotedColumnCaseSensitive,
    BasePersistDocsQuotedDescriptionNotAppliedOnMismatch,
)

from dbt.adapters.lancens.namespace import DirectoryNamespace


class TestPersistDocs(BasePersistDocs):
    def test_descriptions_are_lance_metadata(self, project, lancens_root: str) -> None:
        namespace = DirectoryNamespace(lancens_root)
        table = lance.dataset(namespace.describe_table([project.test_schema, "table_model"]).location)
        assert table.metadata["comment"].startswith("Table model description")
        assert table.schema.field("id").metadata[b"comment"].decode().startswith("id Column description")
        assert b"comment" in table.schema.field("name").metadata
        view = namespace.describe_view([project.test_schema, "view_model"])
        assert view.properties["comment"].startswith("View model description")
        assert view.properties["column.id.comment"].startswith("id Column description")
        assert "column.name.comment" not in view.properties
        no_docs = namespace.describe_view([project.test_schema, "no_docs_model"])
        assert not any("comment" in key for key in no_docs.properties)

    def test_unchanged_docs_commit_nothing(self, project, lancens_root: str) -> None:
        namespace = DirectoryNamespace(lancens_root)
        table_id = [project.test_schema, "table_model"]
        before = namespace.describe_table(table_id)
        with project.adapter.connection_named("__test"):
            relation = project.adapter.get_relation(project.database, project.test_schema, "table_model")
            changed = project.adapter.persist_relation_docs(
                relation, before.properties["comment"], True, {}, ["id", "name"]
            )
        assert changed is False
        assert namespace.describe_table(table_id).version == before.version


class TestPersistDocsColumnMissing(BasePersistDocsColumnMissing):
    pass


class TestPersistDocsAllColumnsMissing(BasePersistDocsAllColumnsMissing):
    pass


class TestPersistDocsQuotedColumnCaseSensitive(BasePersistDocsQuotedColumnCaseSensitive):
    pass


class TestPersistDocsQuotedDescriptionNotAppliedOnMismatch(
    BasePersistDocsQuotedDescriptionNotAppliedOnMismatch
):
    pass


class TestPersistDocsCommentOnQuotedColumn(BasePersistDocsCommentOnQuotedColumn):
    pass
