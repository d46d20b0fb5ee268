"""The JouleBench result file itself (plain or gzip JSON): validated and ingested as it is."""

from __future__ import annotations

import re
from typing import Any

from importers.base import Conversion, Importer, Source
from joulebench.resultfile import FORMAT_NAME, parse_document

_SIGNATURE = re.compile(r'"format"\s*:\s*"joulebench-result"')


class JouleBenchImporter(Importer):
    NAME = FORMAT_NAME
    TOOL = "joulebench"
    DESCRIPTION = "JouleBench result file, .json or .json.gz"

    def sniff(self, source: Source) -> bool:
        return bool(_SIGNATURE.search(source.head))

    def convert(self, conv: Conversion) -> dict[str, Any]:
        return parse_document(conv.source.data, conv.source.name)
