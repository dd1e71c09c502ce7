"""Instances as libpcp's derived metrics see them: the order of INTERP results
(DERIVE-EVAL-3), instance-domain records at a libpcp timestamp with pmLookupInDom's name
matching (DERIVE-EVAL-14), and POSIX extended regular expressions for matchinst()
(DERIVE-EVAL-15).
"""

from __future__ import annotations

import bisect
import re
from typing import Any, ClassVar

from pcpconform.format.pmtypes import PM_IN_NULL, PmInDom
from pcpconform.io.archive import Archive

__all__ = ["instance_order", "InDoms", "PosixRegex", "regex_for"]


def instance_order(archive: Archive, indom: PmInDom) -> list[int]:
    """The order of a metric's instances in libpcp's INTERP results: the archive's
    instances (newest instance-domain record first) walked through a hash table of as many
    buckets as instances, each bucket newest-insert first (DERIVE-EVAL-3)."""
    if indom.is_null:
        return [PM_IN_NULL]
    seen: dict[int, None] = {}
    for rec in reversed(archive.indom_history(indom)):
        for inst in rec.instances:
            seen.setdefault(inst, None)
    listed = list(seen)
    n = len(listed)
    buckets: list[list[int]] = [[] for _ in range(n)]
    for inst in listed:
        buckets[(inst & 0xFFFFFFFF) % n].insert(0, inst)
    return [inst for bucket in buckets for inst in bucket]


class InDoms:
    """Instance-domain records in force at a (possibly unnormalised) libpcp timestamp."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self.cache: dict[int, tuple[list[tuple[int, int]], list[dict[int, str]]]] = {}

    def at(self, indom: PmInDom, when: tuple[int, int]) -> dict[int, str] | None:
        if int(indom) not in self.cache:
            history = self.archive.indom_history(indom)
            self.cache[int(indom)] = ([(r.timestamp.sec, r.timestamp.nsec) for r in history],
                                      [r.instances for r in history])
        stamps, records = self.cache[int(indom)]
        pos = bisect.bisect_right(stamps, when)
        return records[pos - 1] if pos else None

    def lookup(self, indom: PmInDom, when: tuple[int, int], name: str) -> int | None:
        """pmLookupInDom: a full name, else the first name whose text before its first
        space is a prefix of ``name`` (libpcp compares only that many characters)."""
        insts = self.at(indom, when)
        if insts is None:
            return None
        for inst, iname in insts.items():
            if iname == name:
                return inst
        for inst, iname in insts.items():
            if " " in iname:
                head = iname.split(" ", 1)[0]
                if name[:len(head)] == head and (len(name) >= len(head)):
                    return inst
        return None

    def name(self, indom: PmInDom, when: tuple[int, int], inst: int) -> str | None:
        insts = self.at(indom, when)
        return None if insts is None else insts.get(inst)


# -- POSIX extended regular expressions -------------------------------------------------

class PosixRegex:
    """regcomp(REG_EXTENDED|REG_NOSUB)/regexec through the C library when there is one
    (glibc here, as for libpcp); else Python's re after translating the POSIX bracket
    classes, which differs in corner cases (spec/derive.md DERIVE-EVAL-15)."""

    _libc: Any = None
    _CLASSES: ClassVar[dict[str, str]] = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "0-9a-zA-Z", "upper": "A-Z",
                "lower": "a-z", "space": r" \t\n\r\f\v", "blank": r" \t",
                "punct": r"!-/:-@\[-`{-~", "xdigit": "0-9A-Fa-f", "print": r" -~",
                "graph": r"!-~", "cntrl": r"\x00-\x1f\x7f"}

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.buf: Any = None
        self.compiled: re.Pattern[str] | None = None
        libc = self._load()
        if libc is not None:
            import ctypes

            buf = ctypes.create_string_buffer(256)       # sizeof(regex_t) is 64 on glibc
            if libc.regcomp(buf, pattern.encode("utf-8", "surrogateescape"), 1 | 8) == 0:
                self.buf = buf
            return
        try:
            self.compiled = re.compile(self._translate(pattern))
        except re.error:
            self.compiled = None

    @classmethod
    def _load(cls) -> Any:
        if cls._libc is None:
            import ctypes  # with the first pattern: ctypes.util alone costs every derive command ~3 ms
            import ctypes.util

            try:
                cls._libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                cls._libc.regcomp.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
                cls._libc.regexec.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                              ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int]
            except (OSError, AttributeError):
                cls._libc = False
        return cls._libc or None

    @classmethod
    def _translate(cls, pattern: str) -> str:
        out = re.sub(r"\[:(\w+):\]", lambda m: cls._CLASSES.get(m.group(1), m.group(0)),
                     pattern)
        return out

    def search(self, text: str) -> bool:
        if self.buf is not None:
            sts: int = self._libc.regexec(self.buf, text.encode("utf-8", "surrogateescape"),
                                          0, None, 0)
            return sts == 0
        return bool(self.compiled and self.compiled.search(text))

#: compiled patterns, shared by every matchinst() node
REGEXES: dict[str, PosixRegex] = {}


def regex_for(pattern: str) -> PosixRegex:
    if pattern not in REGEXES:
        REGEXES[pattern] = PosixRegex(pattern)
    return REGEXES[pattern]
