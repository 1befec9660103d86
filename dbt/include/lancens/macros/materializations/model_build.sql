{#-- What a model build runs, written to target/run/ as every adapter does. A contracted SQL model
     (`contract: {enforced: true}`) is first checked the dbt way (column names and types against
     its YAML: dbt's contract error), then built from its rows in YAML column order with every
     `not_null` and `check` constraint checked while the rows are written, so a violating row fails
     the build before anything is committed (materializations/contracts.py). A SQL model's
     `sql_header` runs first (sql_header.sql). `statement` is what target/run/ shows before the rows'
     query; returns {'code': ..., 'not_null': [...]}. --#}
{% macro lancens_model_build(compiled_code, language, statement) %}
  {%- set build = {'code': compiled_code, 'not_null': []} -%}
  {%- if language == 'sql' -%}
    {%- do lancens_run_sql_header() -%}
    {%- set statement = lancens_sql_header_text() ~ statement -%}
  {%- endif -%}
  {%- if language == 'sql' and config.get('contract').enforced -%}
    {%- do get_assert_columns_equivalent(compiled_code) -%}
    {%- set build = adapter.enforce_contract(compiled_code, model['columns'], model['constraints']) -%}
  {%- endif -%}
  {%- do write(statement ~ '\n' ~ build['code'] if language == 'sql' else build['code']) -%}
  {{ return(build) }}
{% endmacro %}
