"""Writing files so that a crash, a full disk or a read-only folder never leaves half a file."""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

from joulebench.errors import FileWriteError


def write_atomic(path: Path, data: bytes, *, exclusive: bool = False) -> Path:
    """Write `data` to `path` through a temporary file beside it (write, fsync, rename).

    On any OS error the temporary file is removed and FileWriteError names the file and the
    cause (ENOSPC, EACCES, EROFS, ...); `path` is then as it was. With `exclusive`, refuse to
    replace an existing file (FileExistsError).
    """
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # a file where the folder should be, permissions, a read-only file system
        raise FileWriteError(path, e) from e
    try:
        with open(tmp, "xb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if exclusive:
            os.link(tmp, path)  # fails with FileExistsError when the name is taken
            tmp.unlink()
        else:
            tmp.replace(path)
    except FileExistsError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise FileWriteError(path, e) from e
    return path
