{#-- An incremental model: each run re-reads the latest day already loaded (late orders may still
     arrive for it) and everything after, and merges on the day. On Lance the merge is one
     merge-insert commit: one new table version per run. --#}
{{ config(
    materialized='incremental',
    unique_key='order_date',
    incremental_strategy='merge',
    on_schema_change='append_new_columns',
) }}

select
    order_date,
    count(order_id) as number_of_orders,
    sum(amount) as amount,
    sum(case when status = 'completed' then amount else 0 end) as completed_amount
from {{ ref('orders') }}
{% if is_incremental() %}
where order_date >= (select max(order_date) from {{ this }})
{% endif %}
group by order_date
