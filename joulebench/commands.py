"""Running a command-line parser: the project's errors become a message and an exit code."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from joulebench.errors import JouleBenchError


def run_parser(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> int:
    """Parse and dispatch to `args.func`; no traceback for the project's own errors."""
    args = parser.parse_args(argv)
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # here, so that a reader that closed the pipe early is met below
        return code
    except BrokenPipeError:  # `joulebench db info | head -1`: the reader has what it wanted
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush must not fail again
        return 141  # 128 + SIGPIPE, as a shell reports a command ended by a closed pipe
    except JouleBenchError as e:
        print(f"error: {e.format_message()}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
