"""Text: the bounds on every text a person types or a file carries, and plain-text output shared by the
command-line tools.

A name (a machine, a device, a workload, a tag, a label) is one line of at most NAME_CHARS
characters; free text (notes, an error, a quote) may hold line breaks and tabs and is at most
TEXT_CHARS. Neither may hold control characters (NUL, escape codes: what would rewrite a terminal
or hide text on a page). `joulebench.ranges.check_text` applies these to what a person types,
`joulebench.resultfile` to what a file carries; `shown()` makes a stored value safe to print.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

NAME_CHARS = 200  # a name, tag or label: no real one is longer (the longest shipped is 80)
TEXT_CHARS = 10_000  # notes, an error, a quote: a long paragraph (the longest shipped note is 630)

# C0 and C1 control characters and DEL; tab and line breaks are allowed in free text only.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_LINE_BREAK = re.compile(r"[\t\n\r\u2028\u2029]")


def text_problem(value: str, *, max_chars: int = NAME_CHARS, multiline: bool = False) -> str | None:
    """Why `value` cannot be stored as text of this kind (without the field's name), or None."""
    if len(value) > max_chars:
        return f"{len(value):,} characters, over the limit of {max_chars:,}; shorten it"
    bad = _CONTROL.search(value) or (None if multiline else _LINE_BREAK.search(value))
    if bad is not None:
        code = f"U+{ord(bad.group()):04X}"
        if multiline or _CONTROL.match(bad.group()):
            return f"holds a control character ({code} at position {bad.start() + 1}); remove it"
        return f"holds a line break or tab ({code} at position {bad.start() + 1}); a name is one line: remove it"
    return None


def shown(value: object, max_chars: int = NAME_CHARS) -> str:
    """A stored value made safe to print on one line: control characters, tabs and line breaks as
    escapes (\\x1b, \\n), cut at `max_chars` with an ellipsis. For values stored before the bounds
    (or by another tool) that a terminal would otherwise obey."""
    text = "" if value is None else str(value)
    cut = len(text) > max_chars
    text = text[:max_chars]
    text = _LINE_BREAK.sub(lambda m: m.group().encode("unicode_escape").decode(), text)
    text = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode(), text)
    return text + "…" if cut else text


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Left-aligned columns under a dashed rule; None prints as an empty cell. Control characters
    and line breaks in a cell print as escapes, so a stored value cannot rewrite the terminal."""
    cells = [[str(h) for h in headers]] + [["" if c is None else _one_line(str(c)) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _one_line(text: str) -> str:
    if _CONTROL.search(text) or _LINE_BREAK.search(text):
        return shown(text, max_chars=len(text))
    return text


__all__ = ["NAME_CHARS", "TEXT_CHARS", "shown", "table", "text_problem"]
