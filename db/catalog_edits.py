"""Writes of the catalog a person edits on the Devices page: device fields and prices (with the edit
history and who entered a price) and the exchange-rate table. Each edit is checked against the result
schema's ranges (joulebench.ranges) and refused whole with every problem named, or written in one
transaction. `db.catalog_sync` carries these edits to a team store with `joulebench push`."""

from __future__ import annotations

import contextlib
import re
from datetime import UTC, datetime

import duckdb
import polars as pl

import joulebench.ranges as ranges
from db.connection import damaged
from db.store import Store
from joulebench.errors import InvalidEditError

EDITABLE_DEVICE_COLUMNS = ("price_amount", "price_currency", "price_kind", "price_source", "price_date",
                           "tdp_w", "memory_gb", "notes")
_CURRENCY = re.compile(r"^[A-Z]{3}$")


_DEVICE_NUMBERS = (("tdp_w", "TDP (W)"), ("memory_gb", "memory (GB)"), ("price_amount", "price"))
PRICE_COLUMNS = ("price_amount", "price_currency")
ENTERED_BY = "you (Devices page)"  # who entered a price: the person using the app, on the Devices page


def device_edit_problems(edits: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """The edited catalog rows with every typed number and date checked against the result
    schema's ranges (joulebench.ranges: the same ranges a file's catalog entry must meet), and what
    is wrong, each naming the device, the field and the range: TDP and memory above 0, a price
    above 0 with a three-letter currency code, a date as YYYY-MM-DD and not in the future."""
    problems: list[str] = []
    rows = []
    today = datetime.now(UTC).date()
    for row in edits.iter_rows(named=True):
        name = row.get("device_name")
        out = dict(row)
        for column, label in _DEVICE_NUMBERS:
            if column in row:
                try:
                    out[column] = ranges.check("catalog_device", column, row[column], label=f"{name}: {label}")
                except ranges.RangeError as e:
                    problems.append(str(e))
        if "price_date" in row:
            try:
                out["price_date"] = ranges.check_date(row["price_date"], f"{name}: price date", latest=today)
            except ranges.RangeError as e:
                problems.append(str(e))
        currency = row.get("price_currency")
        if currency is not None and not _CURRENCY.match(str(currency)):
            problems.append(f"{name}: currency {currency!r} is not a three-letter code such as USD, EUR or CAD")
        if row.get("price_amount") not in (None, "") and currency is None and "price_currency" in row:
            problems.append(f"{name}: a price needs its currency")
        rows.append(out)
    if problems or not rows:
        return edits, problems
    checked = pl.DataFrame(rows, schema={c: (pl.Float64 if c in dict(_DEVICE_NUMBERS) else pl.String)
                                         for c in edits.columns})
    return checked, problems


def _as_text(value: object) -> str | None:
    return None if value is None else str(value)


def update_devices(store: Store, edits: pl.DataFrame, *, by: str = ENTERED_BY) -> int:
    """Write user edits of catalog fields back, with one history row per changed field (when and
    by whom), in one transaction; refuse the whole edit (InvalidEditError) when any field breaks a
    rule. A changed price is marked as entered by the user (`price_entries`: when and by whom)
    and loses the published source it replaced, unless the same edit gives its own source."""
    cols = [c for c in EDITABLE_DEVICE_COLUMNS if c in edits.columns]
    if not cols or edits.is_empty():
        return 0
    edits = edits.select(["device_name", *cols]).with_columns(pl.col(c).cast(pl.String) for c in cols)
    edits = edits.with_columns(pl.col(c).str.strip_chars().replace("", None) for c in cols)
    if "price_currency" in cols:
        edits = edits.with_columns(pl.col("price_currency").str.to_uppercase())
    edits, problems = device_edit_problems(edits)
    if problems:
        raise InvalidEditError(problems)
    fields = [*cols, *[c for c in ("price_source", "price_date") if c not in cols]]
    before = {r["device_name"]: r for r in store.query(
        f"SELECT device_name, {', '.join(fields)} FROM devices").iter_rows(named=True)}
    history = []
    now = datetime.now(UTC)
    updates = []
    for row in edits.iter_rows(named=True):
        old = before.get(row["device_name"])
        if old is None:
            raise InvalidEditError([f"{row['device_name']}: no such device in the catalog"])
        new = {c: row[c] for c in cols}
        changed = {c for c in cols if _as_text(old[c]) != _as_text(row[c])}
        entered = bool(changed & set(PRICE_COLUMNS))
        if entered:
            if "price_source" not in changed:  # the published source does not back the user's number
                new["price_source"] = None
            if "price_date" not in changed:
                new["price_date"] = now.date().isoformat()
        for c, value in new.items():
            if _as_text(old[c]) != _as_text(value):
                history.append([now, row["device_name"], c, _as_text(old[c]), _as_text(value), by])
        updates.append((new, entered, row["device_name"]))
    try:
        store.con.execute("BEGIN TRANSACTION")
        for new, entered, device in updates:
            assignments = ", ".join(f"{c} = ?" for c in new)
            store.con.execute(f"UPDATE devices SET {assignments} WHERE device_name = ?", [*new.values(), device])
            if entered:
                store.con.execute("INSERT OR REPLACE INTO price_entries VALUES (?, ?, ?)", [device, now, by])
        if history:
            store.con.executemany("INSERT INTO device_edits (edited_at, device_name, column_name, old_value, "
                                  "new_value, edited_by) VALUES (?, ?, ?, ?, ?, ?)", history)
        store.con.execute("COMMIT")
    except duckdb.Error as e:
        with contextlib.suppress(duckdb.Error):
            store.con.execute("ROLLBACK")
        raise damaged(store.path, e) from e
    return edits.height


def exchange_rate_problems(rates: pl.DataFrame) -> list[str]:
    problems = []
    seen = set()
    for i, row in enumerate(rates.iter_rows(named=True), start=1):
        a, b = row.get("from_currency"), row.get("to_currency")
        where = f"rate {i} ({a or '?'} to {b or '?'})"
        for code in (a, b):
            if code is None or not _CURRENCY.match(str(code)):
                problems.append(f"{where}: {code!r} is not a three-letter currency code such as USD")
        if a is not None and a == b:
            problems.append(f"{where}: a rate joins two different currencies")
        try:
            if ranges.check("exchange_rate", "rate", row.get("rate"), label=f"{where}: rate") is None:
                problems.append(f"{where}: the rate is missing; enter how many {b or 'To'} one {a or 'From'} buys")
        except ranges.RangeError as e:
            problems.append(str(e))
        try:
            if ranges.check_date(row.get("rate_date"), f"{where}: date", latest=datetime.now(UTC).date()) is None:
                problems.append(f"{where}: give the date the rate holds for (YYYY-MM-DD)")
        except ranges.RangeError as e:
            problems.append(str(e))
        if not (row.get("source") or "").strip():
            problems.append(f"{where}: give the rate's source")
        if (a, b) in seen:
            problems.append(f"{where}: this pair is given twice")
        seen.add((a, b))
    return problems


def replace_exchange_rates(store: Store, rates: pl.DataFrame) -> int:
    """Replace the exchange-rate table with the user's edited one (validated, one transaction)."""
    rates = rates.select(
        pl.col("from_currency").cast(pl.String).str.strip_chars().str.to_uppercase(),
        pl.col("to_currency").cast(pl.String).str.strip_chars().str.to_uppercase(),
        pl.col("rate").cast(pl.String).str.strip_chars(),
        pl.col("rate_date").cast(pl.String).str.strip_chars(),
        pl.col("source").cast(pl.String).str.strip_chars(),
    )
    problems = exchange_rate_problems(rates)
    if problems:
        raise InvalidEditError(problems)
    rates = rates.with_columns(pl.col("rate").str.replace_all(r"[,_]", "").cast(pl.Float64))
    now = datetime.now(UTC)
    try:
        store.con.execute("BEGIN TRANSACTION")
        store.con.execute("DELETE FROM exchange_rates")
        store.con.executemany("INSERT INTO exchange_rates VALUES (?, ?, ?, ?, ?, ?)",
                              [[*row, now] for row in rates.iter_rows()])
        store.con.execute("COMMIT")
    except duckdb.Error as e:
        with contextlib.suppress(duckdb.Error):
            store.con.execute("ROLLBACK")
        raise damaged(store.path, e) from e
    return rates.height
