"""Where every table write of the adapter ends: frames and Arrow tables become Lance fragments
(`writes`), one operation is landed and Spark's catalog refreshed once (`table_write`), and an
atomic-publish run's staged versions become visible together (`publish`). How a commit lands
(staged or committed) is `runtime/landing.py`.
"""
