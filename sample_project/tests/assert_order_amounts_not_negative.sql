-- A singular test: no order may have a negative total.
select order_id, amount
from {{ ref('orders') }}
where amount < 0
