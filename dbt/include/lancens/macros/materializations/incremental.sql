{#-- An incremental model on Lance. The first run, a run after the relation was a view, and
     `--full-refresh` write the whole result as the table's next version (an Overwrite of the SAME
     table: history is kept). Other runs apply the result with the strategy's Lance change
     (merge-insert, deletion vectors, new fragments), committed as ONE version; a failed run commits
     nothing. Strategies are looked up the dbt way (`get_incremental_<strategy>_sql`), so a bad
     strategy fails with dbt's own message. --#}
{% materialization incremental, adapter='lancens', supported_languages=['sql', 'python'] %}
  {%- set language = model['language'] -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set on_schema_change = incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore') -%}
  {%- set strategy = config.get('incremental_strategy') or 'default' -%}
  {%- set strategy_macro = adapter.get_incremental_strategy_macro(context, strategy) -%}

  {{ run_hooks(pre_hooks) }}

  {% if existing_relation is none or existing_relation.is_view or should_full_refresh() %}
    {% if existing_relation is not none and existing_relation.is_view %}
      {% do lancens_drop_for_kind_switch(existing_relation, 'table') %}
    {% endif %}
    {%- set build = lancens_model_build(compiled_code, language,
          'create or replace table ' ~ target_relation ~ ' using lance as') -%}
    {%- set response = adapter.write_relation(target_relation, build['code'], language, 'overwrite', lancens_provenance(),
          config.get('indexes'), build['not_null'], config.get('embeddings')) -%}
    {% do store_result('main', response=response) %}
  {% else %}
    {%- set arg_dict = {
          'target_relation': target_relation,
          'temp_relation': none,
          'unique_key': config.get('unique_key'),
          'dest_columns': adapter.columns_when_read(existing_relation),
          'incremental_predicates': config.get('incremental_predicates') or config.get('predicates'),
          'compiled_code': compiled_code,
          'language': language,
          'on_schema_change': on_schema_change,
      } -%}
    {#-- Built-in strategies commit through the engine and return an empty statement;
         a project's own `get_incremental_<name>_sql` may still return SQL to run. --#}
    {%- set build_sql = strategy_macro(arg_dict) -%}
    {% if build_sql | trim %}
      {% call statement('main') %}{{ build_sql }}{% endcall %}
    {% endif %}
  {% endif %}
  {% do lancens_finish_table(target_relation) %}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
