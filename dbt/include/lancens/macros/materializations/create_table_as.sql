{#-- dbt-core and dbt-spark macros build tables with `create_table_as` inside a statement. Here the
     table is written through the namespace engine, so the statement itself is empty. --#}
{% macro lancens__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if temporary -%}
    {{ create_temporary_view(relation, compiled_code) }}
  {%- else -%}
    {%- if language == 'sql' -%}{%- do lancens_run_sql_header() -%}{%- endif -%}
    {%- do adapter.write_relation(relation, compiled_code, language, 'overwrite', lancens_provenance()) -%}
  {%- endif -%}
{%- endmacro %}
