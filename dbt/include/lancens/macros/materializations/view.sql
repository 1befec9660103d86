{#-- A view lives in the namespace (a manifest row with its SQL and, in base_objects, what it reads)
     and is re-created in Spark's session catalog whenever a later process needs it. --#}
{% materialization view, adapter='lancens' %}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='view') -%}

  {{ run_hooks(pre_hooks) }}

  {% if existing_relation is not none and not existing_relation.is_view %}
    {% do lancens_drop_for_kind_switch(existing_relation, 'view', config.get('on_drop', 'purge')) %}
  {% endif %}

  {%- do lancens_run_sql_header() -%}
  {%- if config.get('contract').enforced -%}
    {%- do get_assert_columns_equivalent(sql) -%}
  {%- endif -%}
  {%- do write(lancens_sql_header_text() ~ 'create or replace view ' ~ target_relation ~ ' as\n' ~ sql) -%}
  {%- set response = adapter.create_view(target_relation, sql, lancens_model_reads(model)) -%}
  {% do store_result('main', response=response) %}

  {% do apply_grants(target_relation, config.get('grants')) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
