"""The project's exception tree, in one place.

JouleBenchError
 +-- ResultFileError      a result file cannot be read or does not match the schema
 |    +-- NothingToImportError  no benchmark figure in it: an unknown format, a config, a temperature log
 +-- DatabaseBusyError    another process holds the DuckDB file
 +-- DatabaseError        the database is missing, damaged or from a newer JouleBench
 +-- RunConfigError       `joulebench run` options that cannot work (checked before anything runs)
 +-- PowerSensorError     a power sensor is absent, unreadable or failed mid-window (runner.sensors)
 +-- PowerControlError    a power limit / power mode cannot be read, validated or set
      +-- PowerControlPermissionError   the setting needs privileges: the message names the command
 +-- RunInProgressError   a run started from the app is still going; one at a time
 +-- FileWriteError       a file cannot be written (disk full, permission, read-only file system)
 +-- InvalidEditError     a user's edit (device catalog, exchange rate) breaks a rule; nothing is saved
 +-- LabelError           a label cannot be applied: no such source, or a value that is not valid
 +-- RangeError           a typed value is not a number or outside its field's range (joulebench.ranges)
 +-- PredictionRefusedError  a power setting is not predicted: too few settings measured, or outside
                             the measured range (tuning); the message says which and what to measure

Each error knows how to present itself to a user (`format_message`) and the CLI exit code.
"""

from __future__ import annotations

import errno


class JouleBenchError(Exception):
    """Base class: an error a user can act on. Shown without a traceback."""

    exit_code = 1
    title = "JouleBench error"

    def format_message(self) -> str:
        return str(self)


class ResultFileError(JouleBenchError):
    """A result file is unreadable, corrupt, of an unknown version or fails validation."""

    exit_code = 2
    title = "Cannot import result file"

    def __init__(self, file_name: str, problems: list[str]) -> None:
        self.file_name = file_name
        self.problems = problems
        super().__init__(self.format_message())

    def format_message(self) -> str:
        shown = self.problems[:20]
        more = len(self.problems) - len(shown)
        lines = [f"{self.file_name}: {p}" for p in shown]
        if more > 0:
            lines.append(f"{self.file_name}: ... and {more} more problems")
        return "\n".join(lines)


class NothingToImportError(ResultFileError):
    """The file holds no benchmark figure: not a format JouleBench knows, or a file that can be told
    apart as something else (a config without results, a temperature log without power). In a
    folder being imported such files are skipped; named on their own they are refused."""


class DatabaseBusyError(JouleBenchError):
    """Another process holds the database file (DuckDB allows one writer process)."""

    exit_code = 3
    title = "Database in use"


class DatabaseError(JouleBenchError):
    """The database file cannot be used."""

    exit_code = 4
    title = "Database error"


class RunConfigError(JouleBenchError):
    """Run options that cannot work: each problem names the option and the valid values."""

    exit_code = 2
    title = "Invalid run options"

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__(self.format_message())

    def format_message(self) -> str:
        if len(self.problems) == 1:
            return self.problems[0]
        return "invalid run options:\n" + "\n".join(f"  {p}" for p in self.problems)


class RunInProgressError(JouleBenchError):
    """The explorer starts one runner process at a time."""

    exit_code = 6
    title = "A run is in progress"


class FileWriteError(JouleBenchError):
    """Writing a file failed; the message names the file and the cause (ENOSPC, EACCES, ...)."""

    exit_code = 7
    title = "Cannot write a file"

    def __init__(self, path: object, error: OSError) -> None:
        self.path = path
        self.error = error
        super().__init__(f"{path}: cannot write it ({os_reason(error)})")


class InvalidEditError(JouleBenchError):
    """Edits that break a rule (a TDP of 0, a negative price, an unknown currency code); each
    problem names the row and the field. Nothing of the edit is saved."""

    exit_code = 2
    title = "Edit not saved"

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__(self.format_message())

    def format_message(self) -> str:
        return "Not saved: " + "; ".join(self.problems)


class LabelError(JouleBenchError):
    """`joulebench label` (or a label form) names no known source, or gives values that are not valid."""

    exit_code = 2
    title = "Cannot apply the labels"


class PowerSensorError(JouleBenchError):
    """A power sensor cannot be used (vendor errors are translated into this at the boundary)."""

    exit_code = 5
    title = "Power sensor error"


class PowerControlError(JouleBenchError):
    """A GPU power limit or Jetson power mode cannot be read, validated or set."""

    exit_code = 5
    title = "Power setting error"


class PowerControlPermissionError(PowerControlError):
    """Setting the power limit / mode needs privileges; `command` is what to run instead."""

    title = "Not allowed to change the power setting"

    def __init__(self, message: str, command: str | None = None) -> None:
        self.command = command
        super().__init__(message)

    def format_message(self) -> str:
        text = str(self)
        if self.command:
            text += f"\nrun it yourself with: {self.command}\n(or run joulebench with the privilege, e.g. as root)"
        return text


class PredictionRefusedError(JouleBenchError):
    """The power-setting model will not predict: too few settings were measured for it, or the
    setting asked for lies outside the measured range. `reason` says which, for a person."""

    exit_code = 8
    title = "No prediction"

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def os_reason(e: OSError) -> str:
    """An OS error by its cause: disk full, permission denied, read-only file system, ..."""
    names = {errno.ENOSPC: "ENOSPC, the disk is full", errno.EACCES: "EACCES, permission denied",
             errno.EROFS: "EROFS, a read-only file system", errno.EDQUOT: "EDQUOT, disk quota exceeded",
             errno.EPERM: "EPERM, operation not permitted"}
    return names.get(e.errno or 0, f"{errno.errorcode.get(e.errno or 0, 'error')}, {e.strerror or e}")
