"""Edits that travel with `joulebench push`: what a person changed on a runner machine after its runs
were pushed (labels filled in, catalog prices and fields, exchange rates) reaches the team store.

Both sides keep when each edit was made, so the newer edit wins: a value the lake holds from a later
edit (another machine's, or this one's pushed before) is kept. Pushing the same edits twice changes
nothing. A person on a runner is "you" there; in the team store their edits are the machine's
("gpu-box-1 (Devices page)"). An exchange rate or price deleted on a runner is not deleted in the team
store: only values travel.

Each function runs inside the caller's lake transaction, with the runner's database attached as
`local` and the lake in use.
"""

from __future__ import annotations

import duckdb

from db.catalog_edits import EDITABLE_DEVICE_COLUMNS, ENTERED_BY
from db.labels import COLUMN


def catalog_edits(con: duckdb.DuckDBPyConnection, machine: str) -> int:
    """Device fields, price entries and exchange rates edited here more recently than in the lake: the
    lake's values replaced, the edit history added. The number of values changed."""
    by = f"{machine} (Devices page)"
    con.execute("CREATE OR REPLACE TEMP TABLE _edits AS SELECT l.* REPLACE "
                "(CASE WHEN l.edited_by IS NULL OR l.edited_by = ? THEN ? ELSE l.edited_by END AS edited_by) "
                "FROM local.device_edits l WHERE l.device_name IN (SELECT device_name FROM devices) "
                "AND NOT EXISTS (SELECT 1 FROM device_edits e WHERE e.device_name = l.device_name "
                "AND e.column_name = l.column_name AND e.edited_at = l.edited_at)", [ENTERED_BY, by])
    changed = 0
    edits = con.execute("SELECT DISTINCT column_name FROM _edits").fetchall()
    for column in [c for c in EDITABLE_DEVICE_COLUMNS if (c,) in edits]:  # newest edit here newer than the lake's
        newer = ("SELECT n.device_name FROM _edits n WHERE n.column_name = ? GROUP BY n.device_name "
                 "HAVING max(n.edited_at) > coalesce((SELECT max(e.edited_at) FROM device_edits e "
                 "WHERE e.device_name = n.device_name AND e.column_name = ?), '-infinity'::TIMESTAMPTZ)")
        row = con.execute(f"SELECT count(*) FROM ({newer})", [column, column]).fetchone()
        if row and row[0]:
            con.execute(f"UPDATE devices SET {column} = l.{column} FROM local.devices l "
                        f"WHERE devices.device_name = l.device_name AND devices.device_name IN ({newer})",
                        [column, column])
            changed += row[0]
    first = con.execute("SELECT coalesce(max(edit_id), 0) FROM device_edits").fetchone()
    con.execute("INSERT INTO device_edits BY NAME SELECT * REPLACE "
                "(? + row_number() OVER (ORDER BY edited_at, edit_id) AS edit_id) FROM _edits",
                [first[0] if first else 0])

    con.execute("CREATE OR REPLACE TEMP TABLE _prices AS SELECT device_name, entered_at, "
                "CASE WHEN entered_by = ? THEN ? ELSE entered_by END AS entered_by FROM local.price_entries l "
                "WHERE device_name IN (SELECT device_name FROM devices) AND NOT EXISTS (SELECT 1 FROM "
                "price_entries p WHERE p.device_name = l.device_name AND p.entered_at >= l.entered_at)",
                [ENTERED_BY, by])
    con.execute("DELETE FROM price_entries WHERE device_name IN (SELECT device_name FROM _prices)")
    con.execute("INSERT INTO price_entries BY NAME SELECT * FROM _prices")

    con.execute("CREATE OR REPLACE TEMP TABLE _rates AS SELECT * FROM local.exchange_rates l WHERE NOT EXISTS "
                "(SELECT 1 FROM exchange_rates r WHERE r.from_currency = l.from_currency "
                "AND r.to_currency = l.to_currency AND (r.updated_at >= l.updated_at OR (r.rate = l.rate "
                "AND r.rate_date = l.rate_date AND r.source = l.source)))")
    con.execute("DELETE FROM exchange_rates WHERE (from_currency, to_currency) IN "
                "(SELECT (from_currency, to_currency) FROM _rates)")
    con.execute("INSERT INTO exchange_rates BY NAME SELECT * FROM _rates")
    for table in ("_prices", "_rates"):
        row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
        changed += row[0] if row else 0
    return changed


def label_edits(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Labels supplied here more recently than the lake's for runs the lake holds: the runs' labelled
    columns (and a trace's boundary) set to this machine's values, the label records replaced. The run
    ids changed (the caller regrades them)."""
    con.execute("CREATE OR REPLACE TEMP TABLE _labels AS SELECT * FROM local.run_labels l "
                "WHERE run_id IN (SELECT run_id FROM runs) AND NOT EXISTS (SELECT 1 FROM run_labels r "
                "WHERE r.run_id = l.run_id AND r.label = l.label AND r.supplied_at >= l.supplied_at)")
    for label, column in COLUMN.items():
        chosen = f"(SELECT run_id FROM _labels WHERE label = '{label}')"
        con.execute(f"UPDATE runs SET {column} = l.{column} FROM local.runs l "
                    f"WHERE runs.run_id = l.run_id AND runs.run_id IN {chosen}")
        if label == "energy_boundary":
            con.execute("UPDATE power_traces SET boundary = l.boundary FROM local.power_traces l "
                        "WHERE power_traces.run_id = l.run_id AND power_traces.domain = l.domain "
                        f"AND power_traces.run_id IN {chosen}")
    con.execute("DELETE FROM run_labels WHERE (run_id, label) IN (SELECT (run_id, label) FROM _labels)")
    con.execute("INSERT INTO run_labels BY NAME SELECT * FROM _labels")
    return [r[0] for r in con.execute("SELECT DISTINCT run_id FROM _labels ORDER BY 1").fetchall()]
