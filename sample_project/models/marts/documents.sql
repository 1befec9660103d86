{#-- Help-center articles with a vector index and a full-text index: searchable from LanceDB and
     pylance the moment `dbt run` ends. `embedding` is computed by the pipeline (the `embeddings`
     config): Spark's workers embed `body` with `lancens-minilm` (all-MiniLM-L6-v2 on the CPU, no
     network), and the table records the function, so LanceDB searches it by text:
     `table.search("my parcel is late")`. --#}
{{ config(
    materialized='table',
    embeddings=[{'source': 'body', 'vector': 'embedding', 'function': 'lancens-minilm'}],
    indexes=[
        {'columns': ['embedding'], 'type': 'ivf_flat', 'metric': 'cosine', 'num_partitions': 2},
        {'columns': ['body'], 'type': 'fts'},
        {'columns': ['topic'], 'type': 'bitmap'},
    ]) }}

with articles as (
    select * from values
        (1, 'payments', 'Paying with a credit card', 'You can pay for any order with a credit card at checkout.'),
        (2, 'payments', 'Paying by bank transfer', 'A bank transfer takes up to two days before the order ships.'),
        (3, 'payments', 'Gift cards', 'A gift card pays for part or all of an order and never expires.'),
        (4, 'payments', 'Coupons', 'Enter a coupon code at checkout; one coupon per order.'),
        (5, 'returns', 'Returning an order', 'Return an order within thirty days for a full refund.'),
        (6, 'returns', 'Refunds', 'A refund goes back to the card or gift card that paid for the order.'),
        (7, 'returns', 'Damaged jaffles', 'Send us a photo of a damaged jaffle and we refund the order.'),
        (8, 'shipping', 'Shipping times', 'Orders ship the next day and arrive within three days.'),
        (9, 'shipping', 'Tracking an order', 'Every shipped order has a tracking link in its email.'),
        (10, 'shipping', 'Pickup in store', 'Pick up your order in store the same day it is placed.'),
        (11, 'menu', 'Vegetarian jaffles', 'Our vegetarian jaffles have cheese, tomato and spinach.'),
        (12, 'menu', 'Allergens', 'Every jaffle lists its allergens; ask us about gluten free bread.')
        as t(id, topic, title, body)
)

select id, topic, title, body from articles
