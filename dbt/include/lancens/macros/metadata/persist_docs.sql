{#-- persist_docs: descriptions go into Lance table/field metadata (tables) or the view's properties,
     through the engine (metadata/docs.py), so any Lance tool sees them and the catalog reads them back.
     Documented columns are checked by dbt's validate_doc_columns (it warns about missing ones). --#}
{% macro lancens__persist_docs(relation, model, for_relation, for_columns) -%}
  {%- set persist_relation = for_relation and config.persist_relation_docs() -%}
  {%- set persist_columns = for_columns and config.persist_column_docs() and model.columns -%}
  {%- set documented = {} -%}
  {%- set physical = [] -%}
  {%- if persist_columns -%}
    {%- do physical.extend(adapter.get_columns_in_relation(relation) | map(attribute="name") | list) -%}
    {%- do documented.update(validate_doc_columns(relation, model.columns, physical)) -%}
  {%- endif -%}
  {%- if persist_relation or documented -%}
    {%- do adapter.persist_relation_docs(relation, model.description, persist_relation, documented, physical) -%}
  {%- endif -%}
{%- endmacro %}
