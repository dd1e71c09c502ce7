"""The log label: the first record of every file of an archive (LOGARCHIVE(5) "ARCHIVE LOG LABEL")."""

from __future__ import annotations

from construct import Construct, Int32sb, Int32ub, Struct

from .common import PaddedText, TimestampT3, TimevalT2

__all__ = ["PM_LOG_MAGIC", "LABEL_SIZE", "label_payload", "PM_LOG_VOL_META", "PM_LOG_VOL_TI"]

#: Label magic: 0x50052600 | version.
PM_LOG_MAGIC = 0x50052600
#: Whole label record size, framing included, by archive version.
LABEL_SIZE = {2: 132, 3: 808}
#: Label volume number of the .meta file and of the .index file.
PM_LOG_VOL_META = -1
PM_LOG_VOL_TI = -2


def label_payload(version: int) -> Construct:
    """Label payload (inside the framing) for archive version 2 or 3."""
    if version == 2:
        return Struct(
            "magic" / Int32ub,          # PM_LOG_MAGIC | 2
            "pid" / Int32sb,            # pid of the writing process
            "start" / TimevalT2,        # archive start time
            "vol" / Int32sb,            # volume number, -1 .meta, -2 .index
            *PaddedText("hostname", 64),   # PM_LOG_MAXHOSTLEN
            *PaddedText("timezone", 40),   # PM_TZ_MAXLEN, "squashed" $TZ
        )
    return Struct(
        "magic" / Int32ub,              # PM_LOG_MAGIC | 3
        "pid" / Int32sb,
        "start" / TimestampT3,
        "vol" / Int32sb,
        "features" / Int32ub,           # feature bits; only bit 31 (QA) is defined
        "reserved" / Int32ub,           # written as 0, ignored on read
        *PaddedText("hostname", 256),   # PM_MAX_HOSTNAMELEN
        *PaddedText("timezone", 256),   # PM_MAX_TIMEZONELEN
        *PaddedText("zoneinfo", 256),   # PM_MAX_ZONEINFOLEN, e.g. ":Europe/Berlin"
    )
