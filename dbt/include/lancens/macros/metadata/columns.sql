{#-- Columns come from the namespace (the Lance schema), never from Spark's `describe extended`:
     dbt-spark's macro returns describe rows, which dbt-core's macros (snapshot staging, schema
     changes) would read as column objects. --#}
{% macro lancens__get_columns_in_relation(relation) -%}
  {{ return(adapter.get_columns_in_relation(relation)) }}
{%- endmacro %}
