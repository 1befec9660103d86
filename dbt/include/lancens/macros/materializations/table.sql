{#-- A table model becomes the table's next Lance version, committed once through the namespace
     engine: readers see the previous version until the commit, and a failed model commits nothing. --#}
{% materialization table, adapter='lancens', supported_languages=['sql', 'python'] %}
  {%- set language = model['language'] -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='table') -%}

  {{ run_hooks(pre_hooks) }}

  {% if existing_relation is not none and existing_relation.is_view %}
    {% do lancens_drop_for_kind_switch(existing_relation, 'table') %}
  {% endif %}

  {%- set build = lancens_model_build(compiled_code, language,
        'create or replace table ' ~ target_relation ~ ' using lance as') -%}
  {%- set response = adapter.write_relation(target_relation, build['code'], language, 'overwrite', lancens_provenance(),
        config.get('indexes'), build['not_null'], config.get('embeddings')) -%}
  {% do store_result('main', response=response) %}
  {% do lancens_finish_table(target_relation) %}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
