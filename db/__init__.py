"""The results store (DuckDB): schema migrations, ingest, inbox, reference seed, export.

No SQL lives outside this package.
"""

from db.ingest import IngestReport
from db.store import DbInfo, Store, import_bytes, import_file

__all__ = ["DbInfo", "IngestReport", "Store", "import_bytes", "import_file"]
