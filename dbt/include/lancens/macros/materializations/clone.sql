{#-- `dbt clone --state` is dbt's own clone materialization: a table when the state's relation is a
     table, else a view (dbt-spark's version needs Delta's SHALLOW CLONE). A Lance table is cloned
     zero-copy: a Lance shallow clone registered under the target name, which reads the source's
     data files and writes its own (materializations/clone.py). --#}
{#-- dbt's clone makes a view (`select * from` the state's relation) when the state's relation is not
     a table; a Python model has no SQL for that view (dbt would run `create ... view ... as None`),
     so a Python model whose state relation is missing is refused, naming it. --#}
{% materialization clone, adapter='lancens' %}
  {%- if defer_relation and model.language == 'python' and not load_cached_relation(defer_relation) -%}
    {%- do exceptions.raise_compiler_error(
        "dbt clone: " ~ model.unique_id ~ " was never built in the state's target: " ~ defer_relation
        ~ " does not exist, so there is nothing to clone (a Python model cannot be cloned as a view)."
        ~ " Build it there first, or leave it out of the clone (--exclude " ~ model.name ~ ")."
    ) -%}
  {%- endif -%}
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
