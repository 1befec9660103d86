{#-- dbt's column and table maintenance macros as DDL dbt-lancens applies to the Lance table
     (statements/ddl.py): each is one new version of the table, the Spark catalog follows.
     dbt-spark's versions refuse to drop columns and need Delta for the rest. --#}
{% macro lancens__alter_relation_add_remove_columns(relation, add_columns, remove_columns) %}
  {% if add_columns %}
    {% call statement('alter_relation_add_columns') %}
      alter table {{ relation.render() }} add columns (
        {%- for column in add_columns -%}
          {{ column.quoted }} {{ lancens_ddl_type(column.data_type) }}{{ ', ' if not loop.last }}
        {%- endfor -%})
    {% endcall %}
  {% endif %}
  {% if remove_columns %}
    {% call statement('alter_relation_remove_columns') %}
      alter table {{ relation.render() }} drop columns (
        {%- for column in remove_columns -%}
          {{ column.quoted }}{{ ', ' if not loop.last }}
        {%- endfor -%})
    {% endcall %}
  {% endif %}
{% endmacro %}


{% macro lancens__alter_column_type(relation, column_name, new_column_type) %}
  {% call statement('alter_column_type') %}
    alter table {{ relation.render() }} alter column {{ adapter.quote(column_name) }} type {{ lancens_ddl_type(new_column_type) }}
  {% endcall %}
{% endmacro %}


{% macro lancens__truncate_relation(relation) %}
  {% call statement('truncate_relation') %}
    truncate table {{ relation.render() }}
  {% endcall %}
{% endmacro %}


{#-- dbt's portable string type names without a length (`varchar`, `text`, ...) are Spark's
     `string`; Spark itself wants a length for varchar and char. --#}
{% macro lancens_ddl_type(data_type) %}
  {%- if data_type | trim | lower in ('varchar', 'char', 'text', 'character varying', 'character') -%}
    {{ return('string') }}
  {%- endif -%}
  {{ return(data_type) }}
{% endmacro %}
