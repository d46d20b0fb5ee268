"""Running a command-line parser: the project's errors become a message and an exit code."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from joulebench.errors import JouleBenchError


def run_parser(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> int:
    """Parse and dispatch to `args.func`; no traceback for the project's own errors."""
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except JouleBenchError as e:
        print(f"error: {e.format_message()}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
