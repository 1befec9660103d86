{#-- What a view reads is known for the model being built; a view made by other macros records none. --#}
{% macro lancens__create_view_as(relation, sql) -%}
  {%- set reads = lancens_model_reads(model) if (model is defined and this is defined
        and relation.identifier == this.identifier) else [] -%}
  {%- do lancens_run_sql_header() -%}
  {%- do adapter.create_view(relation, sql, reads) -%}
{%- endmacro %}
