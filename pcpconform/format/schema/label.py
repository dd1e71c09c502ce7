"""The log label: the first record of every file of an archive (LOGARCHIVE(5) "ARCHIVE LOG LABEL")."""

from __future__ import annotations

from construct import Construct, Int32sb, Int32ub

from pcpconform.format.schema.common import DocStruct, PaddedText, TimestampT3, TimevalT2

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
    vol_doc = "volume number: N in `B.N`, -1 in `.meta`, -2 in `.index`"
    if version == 2:
        return DocStruct(
            "magic" / Int32ub * "PM_LOG_MAGIC | 2 = 0x50052602",
            "pid" / Int32sb * "process id of the writer (pmlogger or an importer)",
            "start" / TimevalT2 * "archive start time",
            "vol" / Int32sb * vol_doc,
            *PaddedText("hostname", 64,
                        "host name, NUL-padded, at most 63 bytes (PM_LOG_MAXHOSTLEN)"),
            *PaddedText("timezone", 40,
                        "squashed $TZ of the host (e.g. `AEDT-11`), NUL-padded (PM_TZ_MAXLEN)"),
        )
    return DocStruct(
        "magic" / Int32ub * "PM_LOG_MAGIC | 3 = 0x50052603",
        "pid" / Int32sb * "process id of the writer (pmlogger or an importer)",
        "start" / TimestampT3 * "archive start time",
        "vol" / Int32sb * vol_doc,
        "features" / Int32ub * "feature bits; only bit 31 (PM_LOG_FEATURE_QA) is defined",
        "reserved" / Int32ub * "written as 0, ignored on read",
        *PaddedText("hostname", 256,
                    "host name, NUL-padded, at most 255 bytes (PM_MAX_HOSTNAMELEN)"),
        *PaddedText("timezone", 256,
                    "squashed $TZ of the host (e.g. `AEST-10`), NUL-padded (PM_MAX_TIMEZONELEN)"),
        *PaddedText("zoneinfo", 256,
                    "zoneinfo name (e.g. `:Europe/Berlin`), may be empty (PM_MAX_ZONEINFOLEN)"),
    )
