"""Text a result file holds in another encoding than UTF-8: a Windows program writes Windows-1252 ('Comparaci\xf3n'),
read as such where the bytes are text (no NUL, no control character binary data has) and said by the import."""

from __future__ import annotations

import re

# characters no text holds (tab, line ends, form feed and a terminal's escape allowed): binary data has them
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\x7f]")


def legacy_text(data: bytes) -> str | None:
    """`data` as text where it is not UTF-8 but Windows-1252 text (a table or Markdown a Windows program wrote:
    'Comparaci\xf3n'), else None: no NUL byte and no control characters, which binary data has."""
    if b"\x00" in data:
        return None
    try:
        data.decode("utf-8")
        return None
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        return None
    return None if _CONTROL.search(text) else text
