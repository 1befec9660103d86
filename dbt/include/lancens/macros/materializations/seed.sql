{#-- A seed is read by Arrow from its CSV file and committed as the table's next Lance version.
     `--full-refresh` and a plain re-run both replace the rows; history keeps the old versions.
     `--full-refresh` is dbt's drop-and-recreate, so the views that read the seed are dropped with it
     (as `drop ... cascade` does); the next `dbt run` re-creates them. `dbt build --empty` loads the
     CSV's columns and types without rows (what dbt 1.12's `seed --empty` does). --#}
{% materialization seed, adapter='lancens' %}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set csv_path = model.root_path ~ '/' ~ model.original_file_path -%}

  {{ run_hooks(pre_hooks) }}

  {% if existing_relation is not none and existing_relation.is_view %}
    {% do lancens_drop_for_kind_switch(existing_relation, 'seed') %}
  {% elif existing_relation is not none and should_full_refresh() %}
    {% do adapter.drop_dependent_views(existing_relation) %}
  {% endif %}

  {%- set loaded = adapter.load_seed(
        target_relation,
        csv_path,
        config.get('column_types', {}),
        config.get('delimiter', ','),
        lancens_provenance(),
        config.get('quote_columns'),
        flags.EMPTY is true,
        invocation_args_dict.get('show') is true,
        config.get('indexes')) -%}
  {% do store_result('main', response=loaded.response) %}
  {#-- dbt's seed task prints this table under `--show`; the load itself went through Arrow. --#}
  {% do store_result('agate_table', response='OK', agate_table=loaded.table) %}
  {% do lancens_finish_table(target_relation) %}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
