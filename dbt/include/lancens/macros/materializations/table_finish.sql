{#-- The end of every materialization that builds a Lance table (table, incremental, seed,
     snapshot), once its data is committed or staged: the model's `indexes`, its `lance_maintenance`,
     grants, the warning for Spark layout configs Lance ignores, persisted docs, then the post-hooks.
     The caller still returns its relations. --#}
{% macro lancens_finish_table(target_relation) %}
  {% do lancens_build_table_indexes(target_relation) %}
  {% do lancens_run_table_maintenance(target_relation) %}

  {% do apply_grants(target_relation, config.get('grants')) %}
  {% do lancens_warn_spark_layout_configs(target_relation) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks) }}
{% endmacro %}
