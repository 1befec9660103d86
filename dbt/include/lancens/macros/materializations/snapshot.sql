{#-- A snapshot on Lance. The first run writes dbt-core's `build_snapshot_table` query as the table's
     first version. Later runs evaluate dbt-core's `snapshot_staging_table` query in Spark (so the
     `timestamp`/`check` strategies, `hard_deletes`, `dbt_valid_to_current` and
     `snapshot_meta_column_names` behave exactly as in dbt-core) and apply it with ONE Lance
     merge-insert commit on the scd id; dbt-spark needs Delta for this, Lance does it natively. --#}
{% materialization snapshot, adapter='lancens' %}
  {%- set target_table = model.get('alias', model.get('name')) -%}
  {%- set strategy_name = config.get('strategy') -%}

  {% set target_relation_exists, target_relation = get_or_create_relation(
          database=this.database,
          schema=model.schema,
          identifier=target_table,
          type='table') -%}

  {%- if not target_relation.is_table -%}
    {% do exceptions.relation_wrong_type(target_relation, 'table') %}
  {%- endif -%}

  {{ run_hooks(pre_hooks) }}

  {%- do lancens_run_sql_header() -%}
  {% set strategy_macro = strategy_dispatch(strategy_name) %}
  {% set strategy = strategy_macro(model, "snapshotted_data", "source_data", model['config'], target_relation_exists) %}

  {% do lancens_refuse_repeated_snapshot_keys(strategy.unique_key, model['compiled_code']) %}
  {% if not target_relation_exists %}
    {% set build_sql = build_snapshot_table(strategy, model['compiled_code']) %}
    {%- do write(lancens_sql_header_text() ~ 'create or replace table ' ~ target_relation ~ ' using lance as\n' ~ build_sql) -%}
    {%- set response = adapter.write_relation(target_relation, build_sql, 'sql', 'overwrite', lancens_provenance(),
          config.get('indexes')) -%}
  {% else %}
    {% set columns = config.get("snapshot_table_column_names") or get_snapshot_table_column_names() %}
    {{ adapter.assert_valid_snapshot_target_given_strategy(target_relation, columns, strategy) }}
    {% set staging_sql = snapshot_staging_table(strategy, sql, target_relation) %}
    {% set merge_columns = {
          'dbt_scd_id': columns.dbt_scd_id,
          'dbt_valid_to': columns.dbt_valid_to,
          'valid_to_current': config.get('dbt_valid_to_current') or '',
      } %}
    {%- do write(lancens_sql_header_text() ~ '-- dbt-lancens: these changes are merged into ' ~ target_relation
          ~ ' on ' ~ columns.dbt_scd_id ~ ' as one Lance version\n' ~ staging_sql) -%}
    {%- set response = adapter.apply_snapshot_staging(target_relation, staging_sql, merge_columns, lancens_provenance(),
          config.get('indexes'), flags.EMPTY is true) -%}
  {% endif %}
  {% do store_result('main', response=response) %}
  {% do lancens_finish_table(target_relation) %}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{#-- dbt requires a snapshot's unique_key to be unique in its query. A first run that stored a
     repeated key would hold two current records for it, silently; a later run would insert or
     close records twice. So every run first has Spark group the query's rows by the key and
     return at most five repeated keys, which the error names; nothing is written. --#}
{% macro lancens_refuse_repeated_snapshot_keys(unique_key, sql) %}
  {%- set keys = unique_key if unique_key is not string else [unique_key] -%}
  {%- set repeated = run_query(
        'select ' ~ keys | join(', ') ~ ', count(*) as dbt_lancens_rows from (
' ~ sql ~ '
) dbt_lancens_source '
        ~ 'group by ' ~ keys | join(', ') ~ ' having count(*) > 1 limit 5') -%}
  {%- if repeated.rows | length > 0 -%}
    {%- set found = [] -%}
    {%- for row in repeated.rows -%}
      {%- do found.append('(' ~ row.values()[:-1] | join(', ') ~ '): ' ~ row.values()[-1] ~ ' rows') -%}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error(
         'snapshot ' ~ model.name ~ ': unique_key (' ~ keys | join(', ') ~ ') is not unique in the '
         ~ "snapshot's query, so it would store several current records for one key; "
         ~ 'repeated keys (at most five shown): ' ~ found | join('; ')
         ~ '. Deduplicate the query or choose a unique key; nothing was written') }}
  {%- endif -%}
{% endmacro %}
