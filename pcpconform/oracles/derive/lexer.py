"""libpcp's derived-metric lexer (derive_lex in derive_parser.y.in), byte for byte.

The lexer works on the bytes of the expression, as libpcp does on a C string, and keeps
libpcp's quirks (spec/derive-grammar.md, DERIVE-LEX-*):

* the text ends at the first NUL byte; a 0xff byte reads as EOF (C's ``char`` is signed,
  so 0xff is -1 == EOF) but is consumed, so it ends the current token and, where a token
  would start, ends the expression;
* only ASCII letters, digits and C-locale white space are classified; every other byte is
  an ``Illegal character`` where a token starts;
* ``lexicon``, the error position libpcp returns, is the start of the last token read;
  for the end of the text it is the last byte (offset -1 for an empty text);
* ``in_matchinst`` is set when ``matchinst(`` is read and cleared only when a matchinst()
  call is reduced, so after a failed matchinst() it leaks into the next expression parsed
  in the same process (``Session``).
"""

from __future__ import annotations

from dataclasses import dataclass

from pcpconform.oracles.derive import ast
from pcpconform.oracles.derive.profiles import Profile

__all__ = ["Session", "Token", "Lexer", "FUNCTIONS", "RESERVED", "MAX_INTEGER"]

MAX_INTEGER = 0xFFFFFFFF

#: function names, recognised only when "(" follows at once (DERIVE-LEX-6)
FUNCTIONS: dict[str, tuple[str, ...]] = {
    "pcp-6.0": ("avg", "count", "delta", "max", "min", "sum", "anon", "rate", "instant",
                "mkconst", "rescale", "defined", "matchinst", "scalar"),
    "pcp-6.3": ("avg", "count", "delta", "max", "min", "sum", "anon", "rate", "instant",
                "mkconst", "meta", "novalue", "rescale", "defined", "matchinst", "scalar"),
}
FUNCTIONS["pcp-7"] = FUNCTIONS["pcp-6.3"]
#: names that are never metric names (DERIVE-LEX-7)
RESERVED: dict[str, tuple[str, ...]] = {
    "pcp-6.0": ("type", "semantics", "units"),
    "pcp-6.3": ("type", "semantics", "units", "meta"),
    "pcp-7": ("type", "semantics", "units", "meta", "indom"),
}

_EOF = -1
_SPACE = frozenset(b" \t\n\v\f\r")
_SINGLE = {ord("+"): "L_PLUS", ord("-"): "L_MINUS", ord("*"): "L_STAR",
           ord("("): "L_LPAREN", ord(")"): "L_RPAREN", ord("?"): "L_QUEST",
           ord(":"): "L_COLON", ord(","): "L_COMMA"}


def _text(buf: bytearray) -> str:
    # the token so far, without the byte just read
    return buf[:-1].decode("utf-8", "surrogateescape")


def _too_large(digits: str) -> bool:
    # strtoull() > 0xffffffff; no int() on huge strings (Python limits their length)
    digits = digits.lstrip("0")
    return len(digits) > 10 or (bool(digits) and int(digits) > MAX_INTEGER)


def _isdigit(c: int) -> bool:
    return 48 <= c <= 57


def _isalpha(c: int) -> bool:
    return 65 <= c <= 90 or 97 <= c <= 122


@dataclass
class Session:
    """libpcp's parser state that survives from one pmRegisterDerived() call to the next.

    ``in_matchinst``: see the module docstring. ``last_tree``: libpcp's ``parse_tree``;
    a parse that fails without a syntax error being reported (``novalue() ? ... :
    novalue()``) leaves it unchanged, and libpcp then registers the metric with the
    previous expression (None: libpcp rejects it). pmLoadDerivedConfig() always runs after
    the anonymous event.flags/event.missed metrics were registered, so a config file starts
    with a tree.
    """

    in_matchinst: bool = False
    last_tree: ast.Node | None = None


@dataclass(frozen=True)
class Token:
    type: str           # an L_* name of grammar.GRAMMAR
    text: str           # the token's text (strings, instance names, patterns: the content)
    pos: int            # byte offset of its first byte ("lexicon")


class Lexer:
    """Reads one token at a time; the parser pulls tokens only when it needs them."""

    def __init__(self, data: bytes, profile: Profile, session: Session):
        nul = data.find(b"\0")
        self.data = data if nul < 0 else data[:nul]
        self.funcs = FUNCTIONS[profile.syntax]
        # 7.x: indom= joins the mkconst()/novalue() keywords (DERIVE-VER-6)
        self.reserved = RESERVED[profile.syntax]
        self.session = session
        self.i = 0              # libpcp's "string": next byte to read
        self.peek = 0           # libpcp's "lexpeek" (0: none, so a NUL cannot be pushed back)
        self.lexicon = 0        # start of the current token
        self.errmsg: str | None = None   # set by the lexer on L_ERROR

    def _get(self) -> int:
        if self.peek:
            c, self.peek = self.peek, 0
            return c
        if self.i >= len(self.data):
            return _EOF
        c = self.data[self.i]
        self.i += 1
        return _EOF if c == 0xFF else c

    def _error(self, msg: str) -> Token:
        self.errmsg = msg     # libpcp overwrites any earlier message here
        return Token("L_ERROR", "", self.lexicon)

    def next(self) -> Token:
        buf = bytearray()
        kind: str | None = None
        first = True
        escape = False
        while True:
            c = self._get()
            if first:
                if c in _SPACE:
                    continue
                self.lexicon = self.i - 1
                first = False
            if c == _EOF:
                if kind is None:
                    return Token("L_EOS", "", self.lexicon)
                c = 0               # force the end of the current token
            buf.append(c)
            if kind is None:
                if _isdigit(c):
                    kind = "L_INTEGER"
                elif c == ord("."):
                    kind = "L_DOUBLE"
                elif _isalpha(c):
                    kind = "L_NAME"
                elif c == ord("/"):
                    if not self.session.in_matchinst:
                        return Token("L_SLASH", "/", self.lexicon)
                    kind = "L_PATTERN"
                elif c in _SINGLE:
                    return Token(_SINGLE[c], chr(c), self.lexicon)
                elif c in b"<=>!&|":
                    kind = chr(c)
                elif c == ord('"'):
                    kind = "L_STRING"
                elif c == ord("["):
                    kind = "L_INSTNAME"
                else:
                    return self._error("Illegal character")
                continue
            if kind == "L_INTEGER":
                if c == ord("."):
                    kind = "L_DOUBLE"
                elif not _isdigit(c):
                    self._unget(c)
                    text = _text(buf)
                    if _too_large(text):
                        return self._error("Constant value too large")
                    return Token("L_INTEGER", text, self.lexicon)
            elif kind == "L_DOUBLE":
                if not _isdigit(c):
                    self._unget(c)
                    return Token("L_DOUBLE", _text(buf), self.lexicon)
            elif kind == "L_NAME":
                if _isalpha(c) or _isdigit(c) or c in b"_.":
                    continue
                text = _text(buf)
                if c == ord("(") and text in self.funcs:
                    self._unget(c)
                    if text == "matchinst":
                        self.session.in_matchinst = True
                    return Token("L_" + text.upper(), text, self.lexicon)
                self._unget(c)
                if text in self.reserved:
                    return Token("L_" + text.upper(), text, self.lexicon)
                return Token("L_NAME", text, self.lexicon)
            elif kind in ("L_STRING", "L_INSTNAME", "L_PATTERN"):
                close = {"L_STRING": ord('"'), "L_INSTNAME": ord("]"), "L_PATTERN": ord("/")}[kind]
                if kind != "L_STRING":
                    # "\" escapes the next byte and is dropped
                    if escape and c != 0:
                        escape = False
                        continue
                    if not escape and c == ord("\\"):
                        buf.pop()
                        escape = True
                        continue
                if c != close:
                    if c == 0:
                        return self._error({"L_STRING": "unterminated STRING",
                                            "L_INSTNAME": "unterminated instance name",
                                            "L_PATTERN": "unterminated pattern"}[kind])
                    continue
                return Token(kind, _text(buf)[1:], self.lexicon)
            else:
                return self._two_char(kind, c)

    def _two_char(self, first: str, c: int) -> Token:
        pair = {"<": ("L_LEQ", "L_LT"), ">": ("L_GEQ", "L_GT"), "=": ("L_EQ", "L_ASSIGN"),
                "!": ("L_NEQ", "L_NOT")}
        if first in pair:
            if c == ord("="):
                return Token(pair[first][0], first + "=", self.lexicon)
            self._unget(c)
            return Token(pair[first][1], first, self.lexicon)
        if c == ord(first):         # && or ||
            return Token("L_AND" if first == "&" else "L_OR", first * 2, self.lexicon)
        self._unget(c)
        return self._error("Illegal character")

    def _unget(self, c: int) -> None:
        self.peek = c

    def tokens(self) -> list[Token]:
        """All tokens up to L_EOS (for tests; the parser reads lazily)."""
        out = []
        while True:
            t = self.next()
            out.append(t)
            if t.type in ("L_EOS", "L_ERROR") or len(out) > len(self.data) + 2:
                return out
