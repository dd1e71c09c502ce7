"""Read derived-metric configuration files as libpcp's pmLoadDerivedConfig() does.

This follows __dminit_configfile(), __dminit_component() and __dminit_parse() of
derive_parser.y.in (6.0.3 and 6.3.x), including their diagnostics, which are reproduced
byte for byte (``ConfigResult.stderr``), and their quirks (spec/derive-grammar.md,
DERIVE-CFG-*): comments only with "#" in column 1, whitespace-only lines are errors, a
last line without a newline is never processed, "\\" continues a line only in 6.3, and
6.0.3 miscounts line numbers after a multi-line attribute value. Nothing here raises on
bad input: every problem becomes a diagnostic.
"""

from __future__ import annotations

import errno as _errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pcpconform.oracles.derive import ast
from pcpconform.oracles.derive.lexer import Session
from pcpconform.oracles.derive.parser import DeriveSyntaxError, parse
from pcpconform.oracles.derive.profiles import Profile

__all__ = ["Definition", "ConfigResult", "Registry", "read_config", "load_path", "check_name"]

_SPACE = frozenset(b" \t\n\v\f\r")
DUPLICATE = "Duplicate global derived metric name"
#: the anonymous metrics libpcp registers before it reads any config file
ANON = {
    "event.flags": ("Flags for event records",
                    "An anonymous derived metric that is used to encode the event flags\n"
                    "associated with event records.   See pmUnpackEventRecords(3)."),
    "event.missed": ("Count of missed event records",
                     "An anonymous derived metric that is used to encode the number of\n"
                     "event records missed because either the PMDA could not keep up\n"
                     "or the PMAPI client did not collect the event records fast\n"
                     "enough.  See pmUnpackEventRecords(3)."),
}


@dataclass
class Definition:
    """One ``name = expr`` line that reached pmRegisterDerived()."""

    name: str
    expr: str                       # the text passed to pmRegisterDerived()
    tree: ast.Node | None           # the registered expression, None if rejected
    error: DeriveSyntaxError | None
    file: str
    line: int                       # as libpcp numbers it in its messages
    oneline: str | None = None
    helptext: str | None = None
    #: the global pmID libpcp gives it (511.0.N in registration order), once known
    pmid: Any = None

    @property
    def registered(self) -> bool:
        return self.error is None


@dataclass
class Registry:
    """libpcp's global derived metrics of one process (names, texts, parser state)."""

    profile: Profile
    session: Session = field(default_factory=Session)
    metrics: dict[str, Definition] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.metrics:
            for name, (one, help_) in ANON.items():
                tree = parse("anon(PM_TYPE_U32)", self.profile, self.session)
                self.metrics[name] = Definition(name, "anon(PM_TYPE_U32)", tree, None, "", 0,
                                                one, help_)


@dataclass
class ConfigResult:
    """What pmLoadDerivedConfig() did: its return value, output and definitions."""

    definitions: list[Definition] = field(default_factory=list)
    output: bytearray = field(default_factory=bytearray)
    count: int = 0
    error: int | None = None        # -errno when libpcp gives up on a path component
    #: the definition on which libpcp would have killed the process (DERIVE-SYN-7, -10);
    #: nothing after it is processed
    aborted: DeriveSyntaxError | None = None

    @property
    def status(self) -> int:
        """pmLoadDerivedConfig()'s return value."""
        return self.error if self.error is not None else self.count

    @property
    def stderr(self) -> str:
        return self.output.decode("utf-8", "surrogateescape")

    @property
    def diagnostics(self) -> list[str]:
        """The output as lines (libpcp prints each diagnostic as one or more lines)."""
        return self.stderr.splitlines()


def check_name(name: bytes) -> bool:
    """libpcp's checkname(): components of a letter then letters, digits or "_", joined by "."."""
    first = True
    for c in name:
        if first:
            first = False
            if not _alpha(c):
                return False
        elif not (_alpha(c) or 48 <= c <= 57 or c == ord("_")):
            if c != ord("."):
                return False
            first = True
    return True


def _alpha(c: int) -> bool:
    return 65 <= c <= 90 or 97 <= c <= 122


def _cstr(b: bytes | bytearray) -> bytes:
    """A C string view: up to the first NUL."""
    b = bytes(b)
    n = b.find(b"\0")
    return b if n < 0 else b[:n]


def _skip_space(b: bytes, i: int) -> int:
    while i < len(b) and b[i] != 0 and b[i] in _SPACE:
        i += 1
    return i


def _s(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


class _Stop(Exception):
    """libpcp would have died here: stop reading."""


class _File:
    """One __dminit_configfile() run over the bytes of one file."""

    def __init__(self, data: bytes, fname: str, registry: Registry, result: ConfigResult):
        self.data = data
        self.i = 0
        self.fname = fname.encode("utf-8", "surrogateescape")
        self.reg = registry
        self.profile = registry.profile
        self.res = result
        self.lineno = 1
        self.clineno = 0        # 6.3: lines swallowed by continuations and multi-line values

    def getc(self) -> int | None:
        if self.i >= len(self.data):
            return None
        c = self.data[self.i]
        self.i += 1
        return c

    def out(self, b: bytes) -> None:
        self.res.output += b

    def prefix(self, lineno: int | None = None) -> bytes:
        return b"[%s:%d] " % (self.fname, self.lineno if lineno is None else lineno)

    def run(self) -> int:
        cont = self.profile.continuation
        buf = bytearray()
        eq = lp = rp = -1
        lastc = 0
        self.count = 0
        while True:
            c = self.getc()
            if c is None:
                break       # an unterminated last line is never processed (DERIVE-CFG-2)
            if eq == -1:
                if c == ord("="):
                    eq = len(buf)
                elif c == ord("(") and lp == -1:
                    lp = len(buf)
                elif c == ord(")") and rp == -1:
                    rp = len(buf)
            if cont and c == ord("\n") and lastc == ord("\\"):
                self.clineno += 1
                buf.pop()
                lastc = c
                continue
            if c == ord("\n"):
                if buf and buf[0] != ord("#"):
                    self.count += self.line(bytes(buf), eq, lp, rp)
                self.lineno += 1
                if self.clineno:
                    self.lineno += self.clineno
                    self.clineno = 0
                buf = bytearray()
                eq = lp = rp = -1
            else:
                lastc = c
                buf.append(c)
        return self.count

    def line(self, buf: bytes, eq: int, lp: int, rp: int) -> int:
        """Process one logical line; returns 1 if a metric was registered."""
        line = _cstr(buf)
        if eq == -1:
            self.out(self.prefix() + b"Error: pmLoadDerivedConfig: missing ``='' after "
                     b"derived metric name\n" + line + b"\n")
            return 0
        dup = bytearray(buf[:eq])
        end = lp if lp != -1 else eq
        q = end - 1
        while q >= 0 and dup[q] in _SPACE:
            q -= 1
        name_b = _cstr(dup[_skip_space(bytes(dup[:q + 1]), 0):q + 1])
        if not name_b:
            self.out(self.prefix() + b"Error: pmLoadDerivedConfig: derived metric name "
                     b"missing\n" + line + b"\n")
            return 0
        if not check_name(name_b):
            self.out(self.prefix() + b"Error: pmLoadDerivedConfig: illegal derived metric "
                     b"name (" + name_b + b")\n")
            return 0
        if lp >= 0 and rp == -1:
            self.out(self.prefix() + b"Error: pmLoadDerivedConfig: missing ')' after "
                     b"attribute\n" + line + b"\n")
            return 0
        if rp >= 0 and lp == -1:
            self.out(self.prefix() + b"Error: pmLoadDerivedConfig: missing '(' before "
                     b"attribute\n" + line + b"\n")
            return 0
        if lp == -1:
            return self.definition(buf, eq, name_b)
        self.attribute(buf, eq, lp, rp, name_b)
        return 0

    def definition(self, buf: bytes, eq: int, name_b: bytes) -> int:
        ep = _skip_space(buf, eq + 1)
        expr = _cstr(buf[ep:])
        if not expr:
            self.out(self.prefix() + b"Error: pmLoadDerivedConfig: expression missing\n"
                     + _cstr(buf) + b"\n")
            return 0
        name = _s(name_b)
        error: DeriveSyntaxError | None
        tree = None
        if name in self.reg.metrics:
            error = DeriveSyntaxError(0, DUPLICATE)     # checked before parsing
        else:
            try:
                tree = parse(expr, self.profile, self.reg.session)
                error = None
            except DeriveSyntaxError as e:
                error = e
        d = Definition(name, _s(expr), tree, error, _s(self.fname), self.lineno)
        self.res.definitions.append(d)
        if error is not None and error.aborts:
            self.res.aborted = error
            raise _Stop
        if error is None:
            self.reg.metrics[name] = d
            return 1
        # the text after "=" again, then a line with "^" under the error and the other
        # non-space bytes blanked (tabs and spaces are kept, so the caret lines up)
        shown = _cstr(buf[eq + 1:])
        caret = ep + error.pos - (eq + 1)
        marks = bytes(ord("^") if k == caret else (ch if ch in _SPACE else ord(" "))
                      for k, ch in enumerate(shown))
        self.out(self.prefix() + b"Error: pmRegisterDerived(" + name_b + b", ...) syntax error\n"
                 + shown + b"\n" + marks + b"\n")
        if error.has_message:
            self.out(error.message.encode("utf-8", "surrogateescape") + b"\n")
        return 0

    def attribute(self, buf: bytes, eq: int, lp: int, rp: int, name_b: bytes) -> None:
        line = _cstr(buf)
        region = bytes(buf[lp + 1:rp])
        q = len(region) - 1
        while q >= 0 and region[q] in _SPACE:
            q -= 1
        attr_b = _cstr(region[_skip_space(region[:q + 1], 0):q + 1])
        if not attr_b:
            self.out(self.prefix() + b"Error: pmLoadDerivedConfig: attribute name missing\n"
                     + line + b"\n")
            return
        vp = _skip_space(buf, eq + 1)
        delim = 0
        if vp < len(buf) and buf[vp] in b"\"'":
            delim = buf[vp]
            vp += 1
        rest = _cstr(buf[vp:])
        if not rest:
            self.out(self.prefix() + b"Error: pmLoadDerivedConfig: attribute value missing\n"
                     + line + b"\n")
            return
        value: bytes | None = rest
        if delim:
            value = self.quoted(rest, delim)
        if value is None:
            return
        self.setattr(_s(name_b), _s(attr_b), _s(value), name_b, attr_b, line)

    def quoted(self, line: bytes, delim: int) -> bytes | None:
        """The value of a "..." or '...' attribute, reading more lines if needed."""
        vp = 0
        v = bytearray()
        esc = False
        xtralines = 0
        c: int | None = None
        while True:
            if vp < len(line):
                c = line[vp]
                vp += 1
            elif xtralines == 0:
                c = ord("\n")
            else:
                c = self.getc()
                if c is None:
                    break
            if c == ord("\n"):
                xtralines += 1
            if esc:
                esc = False
                if c != ord("\n"):      # "\" at the end of a line joins the lines
                    v.append(c)
                continue
            if c == ord("\\"):
                esc = True
                continue
            if c == delim:
                break
            v.append(c)
        six = self.profile.syntax == "pcp-6.0"
        if six and xtralines > 1:
            self.lineno += xtralines - 1        # 6.0.3 counts here (and misses one line)
        result: bytes | None
        if c is None:
            self.out(self.prefix() + b"Error: pmLoadDerivedConfig: missing termination (%c) "
                     b"for value\n" % delim)
            result = None
        else:
            if vp < len(line):
                rest = _skip_space(line, vp)
                if rest < len(line):
                    self.out(self.prefix() + b"Warning: pmLoadDerivedConfig: extra text ("
                             + line[rest:] + b") after attribute value will be ignored\n")
            elif xtralines != 0:
                # libpcp reads one byte and then looks at the next, so it skips the first
                # byte after the closing quote when deciding whether there is extra text
                c = self.getc()
                while c is not None and c != ord("\n"):
                    c = self.getc()
                    if c is None or c not in _SPACE:
                        break
                if c is not None and c != ord("\n"):
                    extra = bytearray([c])
                    while True:
                        c = self.getc()
                        if c is None or c == ord("\n"):
                            break
                        extra.append(c)
                    self.out(self.prefix() + b"Warning: pmLoadDerivedConfig: extra text ("
                             + bytes(extra) + b") after attribute value will be ignored\n")
                if not six and c == ord("\n"):
                    xtralines += 1
            result = _cstr(v)
        if not six and xtralines > 1:
            self.clineno += xtralines - 1
        return result

    def setattr(self, name: str, attr: str, value: str, name_b: bytes, attr_b: bytes,
                line: bytes) -> None:
        d = self.reg.metrics.get(name)
        msg = None
        if d is None:
            msg = b"cannot set attribute, derived metric (" + name_b + b") not defined"
        elif attr in ("oneline", "helptext"):
            if getattr(d, attr) is None:
                setattr(d, attr, value)
            else:
                msg = (b"duplicate value for attribute (" + attr_b + b") of metric ("
                       + name_b + b")")
        else:
            msg = b"attribute (" + attr_b + b") is unknown for metric (" + name_b + b")"
        if msg is not None:
            self.out(self.prefix() + b"Error: pmLoadDerivedConfig: " + msg + b"\n" + line + b"\n")


def read_config(data: bytes | str, profile: Profile, fname: str = "<config>",
                registry: Registry | None = None,
                result: ConfigResult | None = None) -> ConfigResult:
    """Process the text of one config file named ``fname`` (as __dminit_configfile does)."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    registry = registry or Registry(profile)
    result = result if result is not None else ConfigResult()
    if result.aborted is None:
        f = _File(data, fname, registry, result)
        try:
            result.count += f.run()
        except _Stop:
            result.count += f.count
    return result


def load_path(path: str, profile: Profile, registry: Registry | None = None,
              listdir: Callable[[str], list[str]] = os.listdir) -> ConfigResult:
    """pmLoadDerivedConfig(path): a ":"-separated list of files and directories.

    Directories are walked recursively in ``listdir`` order (readdir order, as libpcp walks
    them). The first component that cannot be read stops the load: ``error`` is then
    -errno, as libpcp returns it.
    """
    registry = registry or Registry(profile)
    result = ConfigResult()
    parts = path.split(":")
    if parts[-1] == "":
        parts.pop()         # libpcp ignores an empty last component, not an empty middle one
    for part in parts:
        err = _component(part, registry, result, listdir)
        if err is not None:
            result.error = err
            break
        if result.aborted is not None:
            break
    return result


def _component(name: str, registry: Registry, result: ConfigResult,
               listdir: Callable[[str], list[str]]) -> int | None:
    try:
        st = os.stat(name)
    except OSError as e:
        return -(e.errno or _errno.EIO)
    if stat.S_ISREG(st.st_mode):
        try:
            with open(name, "rb") as f:
                data = f.read()
        except OSError as e:
            return -(e.errno or _errno.EIO)
        read_config(data, registry.profile, name, registry, result)
        return None
    if stat.S_ISDIR(st.st_mode):
        try:
            entries = listdir(name)
        except OSError as e:
            return -(e.errno or _errno.EIO)
        for entry in entries:
            if entry in (".", ".."):
                continue
            err = _component(f"{name}/{entry}", registry, result, listdir)
            if err is not None:
                return err
            if result.aborted is not None:
                return None
    return None
