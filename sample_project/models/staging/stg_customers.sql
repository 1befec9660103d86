select
    id as customer_id,
    first_name,
    last_name,
    email,
    coalesce(note, '(no note)') as note
from {{ ref('raw_customers') }}
