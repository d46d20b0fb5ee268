"""Text a server sends (model ids, engine names, its `server` header, versions, error messages), cleaned per
field before it is printed or stored.

A server is not trusted to send printable text: an escape sequence (`\\x1b[31m`) would rewrite the terminal,
a bidirectional override (U+202E) reverses what a person reads, and NUL or another control character makes
the import refuse the run (`joulebench.text`'s bounds). Every character of Unicode's categories Cc (controls),
Cf (format: bidirectional marks, zero-width joiners), Cs (lone surrogates), Co (private use) and Cn
(unassigned), and line and paragraph separators, is removed; whitespace runs become one space; the value is
cut to the field's length. What is left empty is refused (None), and `why` says what was removed, so the
notes can name the field.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from joulebench.text import NAME_CHARS

_REMOVED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
ERROR_CHARS = 300  # a server's error message, as kept in a request's error


@dataclass(frozen=True)
class Cleaned:
    value: str | None  # None: nothing printable was left (the field is refused)
    why: str | None  # what was removed or cut, for the notes; None when the value was clean


def clean(raw: object, field: str, max_chars: int = NAME_CHARS) -> Cleaned:
    """`raw` as one printable line of at most `max_chars` characters (see the module's rules)."""
    if raw is None:
        return Cleaned(None, None)
    if not isinstance(raw, str):
        return Cleaned(None, f"{field}: the server sent a {type(raw).__name__}, not text; left out")
    kept: list[str] = []
    removed = 0
    for ch in raw[: max_chars * 4]:  # a longer value is cut anyway: bound the work on a hostile one
        if ch.isspace():
            if kept and kept[-1] != " ":
                kept.append(" ")
            continue
        if unicodedata.category(ch) in _REMOVED_CATEGORIES:
            removed += 1
            continue
        kept.append(ch)
    text = "".join(kept).strip()
    cut = len(text) > max_chars or len(raw) > max_chars * 4
    text = text[:max_chars].rstrip()
    problems = ([f"{removed} control or format character(s) removed"] if removed else []) + (
        [f"cut to {max_chars} characters"] if cut else [])
    if not text:
        return Cleaned(None, f"{field}: the server sent no printable text ({'; '.join(problems) or 'empty'}); "
                             "left out")
    return Cleaned(text, f"{field}: {'; '.join(problems)}" if problems else None)


def name(raw: object, field: str, max_chars: int = NAME_CHARS) -> str | None:
    """A cleaned name, or None when nothing printable was left."""
    return clean(raw, field, max_chars).value


def message(raw: object, max_chars: int = ERROR_CHARS) -> str:
    """A server's message (an error's text, a reply's body) as one printable line; '(no message)' if empty."""
    if not isinstance(raw, str):
        raw = repr(raw) if raw is not None else ""
    return clean(raw, "message", max_chars).value or "(no message)"
