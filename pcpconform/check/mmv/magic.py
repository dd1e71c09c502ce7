"""Recognising an MMV file by its first four bytes, without loading the validator.

``pcpconform check`` asks this of every input; the validator itself (numpy, the schemas)
is imported only when a file turns out to be MMV.
"""

from __future__ import annotations

import os
import stat

# mmv.schema.MMV_MAGIC; spelled here because importing pcpconform.mmv loads its reader
# (tests/unit/test_mmv_check.py keeps the two equal).
MMV_MAGIC = b"MMV\0"


def is_mmv_file(path: str | os.PathLike[str]) -> bool:
    """Whether path is a regular file that starts with the MMV magic (False if unreadable)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as fh:
            return fh.read(4) == MMV_MAGIC
    except (OSError, ValueError):
        return False
