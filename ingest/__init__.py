"""The import service, above the store (`db`) and the converters (`importers`).

Convert (any known format), validate, attach a power log, then ingest now or queue in the
inbox when another process holds the database; drain the inbox and recover killed sweeps'
result files when the database is opened read-write.

    report = ingest.import_bytes(data, "benchmark.json", db=path, hints=Hints(device="A100"))
    with ingest.open_store(path) as store: ...
"""

from ingest.service import (
    drain_inbox,
    housekeeping_pending,
    import_bytes,
    import_file,
    import_source,
    import_with_power_log,
    open_store,
    recover_killed_sweeps,
)

__all__ = ["drain_inbox", "housekeeping_pending", "import_bytes", "import_file", "import_source",
           "import_with_power_log", "open_store", "recover_killed_sweeps"]
