"""A target that writes an archive: the input, copied as it is to the output base name
(``copy_to_out.py ARCHIVE OUT``): the unreadable-output oracle's planted defect."""

import shutil
import sys
from pathlib import Path

src, out = Path(sys.argv[1]), Path(sys.argv[2])
for path in src.parent.iterdir():
    if path.name.startswith(src.name + "."):
        shutil.copy(path, out.with_name(out.name + path.name[len(src.name):]))
