"""A console log that ends in the JSON document its script wrote (`print(json.dumps(results, indent=2))` after the
install and progress lines): that document read as a source of its own, with the file's name and content hash, and
a note saying which line it starts on and that the lines above it were not read. A report that pastes several such
documents of one kind, each under its heading (`### Concurrency = 4` over `{ "concurrency": 4, ... }`), is read as
their JSON Lines, each document's heading its run's tag (`json_documents`).

The document starts on a line that is `{` or `[` alone, at the start of the line, within the last MAX_TAIL
characters, and runs to the end of the file (trailing blank lines aside); it must parse as a JSON object or list,
and there must be text above it (a file that is all JSON is read as JSON already).
"""

from __future__ import annotations

import json
import re
from typing import Any

from importers.base import Source
from importers.table_records import Unwrapped
from importers.table_text import MARKDOWN_HEADING

MAX_TAIL = 2_000_000  # characters searched from the end: a results document, never a whole data dump
MAX_TRIES = 5  # '{' lines tried as the document's start, the last first: each try parses to the end once
MAX_DOCUMENTS = 64  # documents of one report, each a run
_OPENS = re.compile(r"(?m)^\{[ \t]*\r?$")  # a document's first line: '{' alone, at the start of the line


def json_documents(source: Source) -> Unwrapped | None:
    """A text's several JSON objects of one kind, each on lines of its own ('{' alone on its first line) between
    headings or words, as a source of their JSON Lines, each one's heading (the last Markdown heading above it) its
    run's tag; None where the text holds fewer than two, or objects that share less than half their keys."""
    if source.is_folder or not source.text or "\n{" not in source.text or len(source.text) > MAX_TAIL or (
            source.json is not None):  # the cheap tests first: every file imported passes here
        return None
    text = source.text
    decoder = json.JSONDecoder()
    found: list[tuple[int, int, Any]] = []
    end = 0
    for tries, m in enumerate(_OPENS.finditer(text)):
        if tries >= 4 * MAX_DOCUMENTS or len(found) > MAX_DOCUMENTS:
            return None
        if m.start() < end:
            continue  # a line inside the document before
        try:
            doc, end = decoder.raw_decode(text, m.start())
        except ValueError:
            continue
        found.append((m.start(), end, doc))
    docs = [doc for _, _, doc in found]
    if len(docs) < 2 or not all(isinstance(d, dict) and d for d in docs) or not all(
            2 * len(set(d) & set(docs[0])) >= max(len(d), len(docs[0])) for d in docs):
        return None
    headings = [_heading_above(text[before:start]) for before, (start, _, _) in
                zip([0, *(e for _, e, _ in found)], found, strict=False)]
    lines = ", ".join(str(text.count("\n", 0, start) + 1) for start, _, _ in found)
    flat = all(not isinstance(v, list) or not any(isinstance(x, dict) for x in v) for d in docs for v in d.values())
    inner = source.part("\n".join(json.dumps(d) for d in docs).encode())
    tags = tuple(headings) if flat and all(headings) and len(set(headings)) == len(headings) else None
    return Unwrapped(inner, f"{len(docs)} JSON documents read from the text (lines {lines[:200]})"
                            + (", each heading above one its run's tag" if tags else "")
                            + "; the words around them not read", tags)


def _heading_above(text: str) -> str:
    """The last Markdown heading in a stretch of text ('### Concurrency = 4' -> 'Concurrency = 4'), or ''."""
    titles = [m.group(2) for line in text.splitlines()[-200:] if (m := MARKDOWN_HEADING.match(line)) is not None]
    return titles[-1].strip()[:80] if titles else ""


def json_at_end(source: Source) -> Unwrapped | None:
    """The JSON document a text ends in, as a source of its own with a note; None for anything else."""
    if source.is_folder or not source.text or not source.text[-4096:].rstrip().endswith(("}", "]")):
        return None  # the cheap test first: every file imported passes here
    if source.json is not None:
        return None
    text = source.text.rstrip()
    start = max(0, len(text) - MAX_TAIL)
    at = len(text)
    for _ in range(MAX_TRIES):
        if (at := max(text.rfind("\n{\n", start, at), text.rfind("\n[\n", start, at))) <= 0:
            return None
        try:
            doc = json.loads(text[at + 1:])
        except ValueError:
            continue  # an inner '{' line of the document: the one it starts on is further up
        if not isinstance(doc, (dict, list)) or not doc:
            return None
        line = text.count("\n", 0, at) + 2
        inner = source.part(text[at + 1:].encode())
        return Unwrapped(inner, f"the JSON document the log ends in (line {line} on) read; the {line - 1} lines "
                                "above it (the console's output) not read")
    return None
