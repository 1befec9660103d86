{#-- How every built-in strategy is applied: the config turned into one spec for the adapter,
     which commits the change as one Lance version (materializations/incremental.py). --#}

{#-- `unique_key` as a list of column names: a string, a list, or nothing (empty entries dropped). --#}
{% macro lancens_key_columns(value) -%}
  {%- set keys = [] -%}
  {%- for key in ([value] if value is string else (value or [])) -%}
    {%- if key and key | trim -%}{%- do keys.append(key | trim) -%}{%- endif -%}
  {%- endfor -%}
  {{ return(keys) }}
{%- endmacro %}


{% macro lancens_apply_incremental(strategy, arg_dict) -%}
  {%- set predicates = arg_dict['incremental_predicates'] -%}
  {%- set partition_by = config.get('partition_by') -%}
  {%- set batch = model.get('batch') -%}
  {%- if strategy == 'merge' and config.get('merge_update_columns') and config.get('merge_exclude_columns') -%}
    {{ exceptions.raise_compiler_error(
         'merge_update_columns and merge_exclude_columns cannot both be set: choose one of them') }}
  {%- endif -%}
  {%- set build = lancens_model_build(arg_dict['compiled_code'], arg_dict['language'],
        '-- dbt-lancens: the ' ~ strategy ~ ' strategy applies these rows to ' ~ arg_dict['target_relation']
        ~ ' as one Lance version') -%}
  {#-- `not_null`: the contract's not_null columns now; the table's non-nullable fields follow them --#}
  {%- set spec = {
        'strategy': strategy,
        'unique_key': lancens_key_columns(arg_dict['unique_key']),
        'on_schema_change': arg_dict.get('on_schema_change') or 'ignore',
        'predicates': [predicates] if predicates is string else (predicates or []),
        'update_columns': config.get('merge_update_columns') or none,
        'exclude_columns': config.get('merge_exclude_columns') or [],
        'partition_by': [partition_by] if partition_by is string else (partition_by or []),
        'event_time': config.get('event_time'),
        'batch_start': batch.event_time_start.strftime('%Y-%m-%d %H:%M:%S') if batch and batch.event_time_start else none,
        'batch_end': batch.event_time_end.strftime('%Y-%m-%d %H:%M:%S') if batch and batch.event_time_end else none,
        'empty': flags.EMPTY is true,
        'not_null': build['not_null'],
    } -%}
  {%- set response = adapter.apply_incremental(
        arg_dict['target_relation'], build['code'], arg_dict['language'], spec, lancens_provenance(),
        config.get('indexes'), config.get('embeddings')) -%}
  {%- do store_result('main', response=response) -%}
{%- endmacro %}
