{#-- dbt-core and dbt-spark macros build tables with `create_table_as` inside a statement. Here the
     table is written through the namespace engine, so the statement itself is empty. --#}
{% macro lancens__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if temporary -%}
    {{ create_temporary_view(relation, compiled_code) }}
  {%- else -%}
    {%- do adapter.write_relation(relation, compiled_code, language, 'overwrite', lancens_provenance()) -%}
  {%- endif -%}
{%- endmacro %}


{#-- What a view reads is known for the model being built; a view made by other macros records none. --#}
{% macro lancens__create_view_as(relation, sql) -%}
  {%- set reads = lancens_model_reads(model) if (model is defined and this is defined
        and relation.identifier == this.identifier) else [] -%}
  {%- do adapter.create_view(relation, sql, reads) -%}
{%- endmacro %}
