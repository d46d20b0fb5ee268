"""The Devices page's catalog table: price first, what the price covers and where it comes from
(the published source, or 'entered by you, <date>'), editable numbers as the text a person types
(checked by joulebench.ranges when saved), and columns that hold nothing anywhere hidden."""

from __future__ import annotations

import difflib
import re

import polars as pl

from db.catalog_edits import EDITABLE_DEVICE_COLUMNS
from decision.money import price_covers, price_origin
from decision.text import human_field

TYPED_NUMBERS = ("price_amount", "tdp_w", "memory_gb")  # edited as text, so what is typed reaches the check
FIRST = ("device_name", "kind", "price_amount", "price_currency", "price_covers", "price_from", "price_kind",
         "price_date", "price_source", "tdp_w", "memory_gb")
HIDDEN = ("price_entered_at", "price_entered_by")


def typed_text(values: pl.Series) -> pl.Series:
    """Numbers as a person types them ('1599', '0.3', '1e+06'; null stays null). Formatted in Python on a
    list, never by a Python function inside polars: polars' worker threads would wait for the GIL that the
    app server's script threads hold (issue 30, a deadlock); no polars expression gives `g`'s digits."""
    return pl.Series(values.name, [None if v is None else f"{v:g}" for v in values.to_list()], dtype=pl.String)


def rates_view(rates: pl.DataFrame) -> pl.DataFrame:
    """The exchange rates as the Devices page edits them: the rate as typed text."""
    return rates.drop("updated_at").with_columns(typed_text(rates["rate"]))


def history_view(history: pl.DataFrame) -> pl.DataFrame:
    """The catalog's edit history for a person: fields by their names, an edit with no author as 'you'."""
    fields = {name: human_field(name) for name in history["column_name"].unique().drop_nulls().to_list()}
    return (history.with_columns(pl.col("column_name").replace_strict(fields, default=None, return_dtype=pl.String),
                                 pl.col("edited_by").fill_null("you"))
            .rename({"edited_at": "When", "device_name": "Device", "column_name": "Field", "old_value": "Before",
                     "new_value": "After", "edited_by": "By"}))


def catalog_view(catalog: pl.DataFrame) -> pl.DataFrame:
    """The catalog as the Devices page shows it (see the module's docstring)."""
    rows = catalog.iter_rows(named=True)
    view = catalog.with_columns(
        pl.Series("price_covers", [price_covers(r.get("kind")) for r in catalog.iter_rows(named=True)],
                  dtype=pl.String),
        pl.Series("price_from", [price_origin(r) if r.get("price_amount") is not None else None for r in rows],
                  dtype=pl.String),
        *[typed_text(catalog[c]) for c in TYPED_NUMBERS if c in catalog.columns])
    view = view.drop([c for c in HIDDEN if c in view.columns])
    empty = [c for c in view.columns
             if c not in EDITABLE_DEVICE_COLUMNS and c not in FIRST and view[c].is_null().all()]
    view = view.drop(empty)
    first = [c for c in FIRST if c in view.columns]
    view = view.select([*first, *[c for c in view.columns if c not in first]])
    # every cell as text, an unknown one empty (never 'None'); numbers as a person types them
    return view.with_columns(
        *[typed_text(view[c]) for c, t in view.schema.items() if t.is_float()],
        *[pl.col(c).cast(pl.String) for c, t in view.schema.items() if not t.is_float() and t != pl.String],
    ).with_columns(pl.all().fill_null(""))


def catalog_matches(name: str, catalog_names: list[str], limit: int = 5) -> list[str]:
    """Catalog devices a typed name may mean: every word of it in the catalog name ('V100' ->
    'Tesla V100 16GB', 'Tesla V100 32GB'), else close spellings; [] for an exact catalog name."""
    if name in catalog_names:
        return []
    words = [w for w in re.split(r"[\s_-]+", name.lower()) if w]
    found = [c for c in catalog_names if words and all(w in c.lower() for w in words)]
    if not found:
        lowered = {c.lower(): c for c in catalog_names}
        found = [lowered[m] for m in difflib.get_close_matches(name.lower(), list(lowered), n=limit, cutoff=0.75)]
    return found[:limit]


DECIDED = {"rule": "the same part", "added": "added as its own device", "ambiguous": "waits for your choice",
           "user": "chosen by you"}


def names_view(mapping: pl.DataFrame) -> pl.DataFrame:
    """The device names met in imports as the Devices page lists them: the name as the files state it, the
    catalog entry its runs are stored under, how that was decided, what else it could be, and its runs."""
    rows = [{"Name in the files": r["source_name"], "Stored as": r["device_name"],
             "Decided": DECIDED.get(r["decided_by"], r["decided_by"]),
             "Could be": ", ".join(r["candidates"] or []) if r["decided_by"] == "ambiguous" else "",
             "Runs": str(r["runs"]), "Why": r["reason"] or ""} for r in mapping.iter_rows(named=True)]
    return pl.DataFrame(rows, schema={c: pl.String for c in ("Name in the files", "Stored as", "Decided",
                                                               "Could be", "Runs", "Why")})


def name_choices(source_name: str, candidates: list[str], catalog_names: list[str]) -> list[str]:
    """What a device string can be mapped to: the entries it could be first, then the string itself (its own
    device), then the rest of the catalog."""
    first = [c for c in candidates if c in catalog_names]
    return [*first, source_name, *[c for c in catalog_names if c not in first and c != source_name]]
