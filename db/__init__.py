"""The results store (DuckDB): schema migrations, writes, reference seed, export, queries.

It stores and queries only; converting, validating, queueing and draining files is the import
service's job (`ingest`). No SQL lives outside this package.
"""

from db.store import DbInfo, Store
from db.writes import IngestReport

__all__ = ["DbInfo", "IngestReport", "Store"]
