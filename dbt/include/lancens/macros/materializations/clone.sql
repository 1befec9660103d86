{#-- `dbt clone --state` is dbt's own clone materialization: a table when the state's relation is a
     table, else a view (dbt-spark's version needs Delta's SHALLOW CLONE). A Lance table is cloned
     zero-copy: a Lance shallow clone registered under the target name, which reads the source's
     data files and writes its own (materializations/clone.py). --#}
{% materialization clone, adapter='lancens' %}
  {{ return(context['materialization_clone_default']()) }}
{% endmaterialization %}


{% macro lancens__can_clone_table() %}
  {{ return(True) }}
{% endmacro %}


{#-- Called inside dbt's `statement('main')`: the clone is made through the engine, so the
     statement itself is empty. --#}
{% macro lancens__create_or_replace_clone(this_relation, defer_relation) %}
  {%- do adapter.shallow_clone_table(this_relation, defer_relation) -%}
{% endmacro %}
