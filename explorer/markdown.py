"""Text from files, made safe for Streamlit's Markdown (st.markdown, st.caption, st.error, ...).

A file name, a warning quoting a cell or a run's notes can hold `*`, `_`, `[...](...)`, `$` or
Streamlit's `:color[...]` / `:emoji:` directives; escaped, they show as the characters they are.
"""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def md(text: object) -> str:
    """`text` with every Markdown and Streamlit directive character backslash-escaped."""
    return _SPECIAL.sub(r"\\\1", str(text))
