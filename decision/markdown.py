"""Text from files and the database, made safe for Streamlit's Markdown (st.markdown, st.caption,
st.error, widget labels, ...): the one escaping helper the pages use; and `plain`, the text a terminal
shows of a sentence built here (`joulebench decide`).

A device name, a file name, a note, a citation or a warning quoting a cell can hold `*`, `_`,
`[...](...)`, `![...](...)`, `$`, HTML or Streamlit's `:color[...]` / `:material/...:` directives;
escaped, they show as the characters they are: `![x](http://example.invalid/a.png)` never loads
an image nor makes a link.
"""

from __future__ import annotations

import re

# Every ASCII punctuation character may be backslash-escaped in CommonMark; these are the ones
# that start Markdown, HTML, math ($) or Streamlit's :colour[...] / :material/...: directives.
_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:&=\"'^%@])")
# GitHub-flavoured Markdown turns bare URLs, 'www.' and e-mail addresses into links even when every
# character is escaped; an invisible word joiner inside each trigger keeps them text.
WORD_JOINER = "\u2060"
_AUTOLINK_TRIGGERS = re.compile(r"(://|www\.|@)", re.IGNORECASE)


def md(text: object) -> str:
    """`text` as literal Markdown: every special character backslash-escaped (so no line can start
    a heading, a list or a quote, and no link or image can form), bare URLs and e-mail addresses
    kept from becoming links, runs of spaces collapsed, line breaks kept as breaks."""
    if text is None:
        return ""
    lines = [" ".join(line.split()) for line in str(text).splitlines()]
    lines = [_AUTOLINK_TRIGGERS.sub(lambda m: m.group(0)[0] + WORD_JOINER + m.group(0)[1:], line) for line in lines]
    return "  \n".join(_SPECIAL.sub(r"\\\1", line) for line in lines if line)


_ESCAPE_OR_EMPHASIS = re.compile(r"\\([\\`*_{}\[\]()<>#+\-.!|~$:&=\"'^%@])|\*+")


def plain(markdown: str) -> str:
    """A sentence built here (text escaped by `md`, **bold** and *italic* around it) as plain text: the
    escaped characters as they are, the emphasis marks and word joiners dropped, line breaks kept."""
    text = _ESCAPE_OR_EMPHASIS.sub(lambda m: m.group(1) or "", markdown)
    return text.replace(WORD_JOINER, "").replace("  \n", "\n")
