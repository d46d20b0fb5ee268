"""A console log that ends in the JSON document its script wrote (`print(json.dumps(results, indent=2))` after the
install and progress lines): that document read as a source of its own, with the file's name and content hash, and
a note saying which line it starts on and that the lines above it were not read.

The document starts on a line that is `{` or `[` alone, at the start of the line, within the last MAX_TAIL
characters, and runs to the end of the file (trailing blank lines aside); it must parse as a JSON object or list,
and there must be text above it (a file that is all JSON is read as JSON already).
"""

from __future__ import annotations

import json

from importers.base import Source
from importers.table_records import Unwrapped

MAX_TAIL = 2_000_000  # characters searched from the end: a results document, never a whole data dump
MAX_TRIES = 5  # '{' lines tried as the document's start, the last first: each try parses to the end once


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
        inner = Source.single(text[at + 1:].encode(), source.name, source.dirs)
        inner.__dict__["content_sha256"] = source.content_sha256  # a cached property: the file's own hash
        return Unwrapped(inner, f"the JSON document the log ends in (line {line} on) read; the {line - 1} lines "
                                "above it (the console's output) not read")
    return None
