{#-- `dbt clone --state` is dbt's own clone materialization: a table when the state's relation is a
     table, else a view (dbt-spark's version needs Delta's SHALLOW CLONE). A Lance table is cloned
     as a copy of its current version, written as one commit of the target table. --#}
{% materialization clone, adapter='lancens' %}
  {{ return(context['materialization_clone_default']()) }}
{% endmaterialization %}


{% macro lancens__can_clone_table() %}
  {{ return(True) }}
{% endmacro %}


{#-- Called inside dbt's `statement('main')`: the copy is committed through the engine, so the
     statement itself is empty. --#}
{% macro lancens__create_or_replace_clone(this_relation, defer_relation) %}
  {%- do adapter.write_relation(this_relation, 'select * from ' ~ defer_relation, 'sql', 'overwrite',
        lancens_provenance()) -%}
{% endmacro %}
