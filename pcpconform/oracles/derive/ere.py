"""Which POSIX extended regular expressions glibc's regcomp() rejects, and with what message.

libpcp compiles the pattern of ``matchinst(/re/, expr)`` at parse time with
``regcomp(REG_EXTENDED|REG_NOSUB)`` and turns a failure into the syntax error
``bad regular expression: '<regerror() text>'`` (DERIVE-SYN-11). This module follows the
structure of glibc's parser (posix/regcomp.c: parse_reg_exp, parse_branch,
parse_expression, parse_sub_exp, parse_dup_op, parse_bracket_exp) for the
RE_SYNTAX_POSIX_EXTENDED syntax in the C collation, but only decides acceptance; it is
iterative, so deep nesting cannot exhaust Python's stack. Patterns are bytes; bytes above
0x7f are ordinary characters (not modelled inside ranges).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["regcomp_error", "MESSAGES"]

MESSAGES = {
    "BADPAT": "Invalid regular expression",
    "ECOLLATE": "Invalid collation character",
    "ECTYPE": "Invalid character class name",
    "EESCAPE": "Trailing backslash",
    "ESUBREG": "Invalid back reference",
    "EBRACK": "Unmatched [, [^, [:, [., or [=",
    "EPAREN": "Unmatched ( or \\(",
    "EBRACE": "Unmatched \\{",
    "BADBR": "Invalid content of \\{\\}",
    "ERANGE": "Invalid range end",
    "BADRPT": "Invalid preceding regular expression",
    "ESIZE": "Regular expression too big",
}
RE_DUP_MAX = 0x7FFF
_CLASSES = {b"alnum", b"cntrl", b"lower", b"space", b"alpha", b"digit", b"print",
            b"upper", b"blank", b"graph", b"punct", b"xdigit"}

# token types
CHAR, END, ALT, STAR, PLUS, QUEST, OPEN_DUP, CLOSE_DUP, OPEN_SUB, CLOSE_SUB, \
    OPEN_BRACKET, PERIOD, ANCHOR, BACK_REF, WORD, BACK_SLASH = range(16)
_PLAIN = {ord("|"): ALT, ord("*"): STAR, ord("+"): PLUS, ord("?"): QUEST,
          ord("{"): OPEN_DUP, ord("}"): CLOSE_DUP, ord("("): OPEN_SUB, ord(")"): CLOSE_SUB,
          ord("["): OPEN_BRACKET, ord("."): PERIOD, ord("^"): ANCHOR, ord("$"): ANCHOR}
_ESCAPED = {ord("<"): ANCHOR, ord(">"): ANCHOR, ord("b"): ANCHOR, ord("B"): ANCHOR,
            ord("`"): ANCHOR, ord("'"): ANCHOR, ord("w"): WORD, ord("W"): WORD,
            ord("s"): WORD, ord("S"): WORD}
_DUP = (STAR, PLUS, QUEST, OPEN_DUP)


#: a bracket element: ("sb", byte) for a single byte, or ("coll" | "equiv" | "class", name)
#: for [.x.], [=x=] and [:name:]
_Element = tuple[str, int | bytes]


class _Fail(Exception):
    def __init__(self, code: str):
        self.code = code


class _Scanner:
    def __init__(self, pattern: bytes):
        self.p = pattern
        self.i = 0

    def fetch(self) -> tuple[int, int]:
        """peek_token + skip: (type, byte)."""
        p, i = self.p, self.i
        if i >= len(p):
            return END, 0
        c = p[i]
        if c == ord("\\"):
            if i + 1 >= len(p):
                self.i += 1
                return BACK_SLASH, c
            c2 = p[i + 1]
            self.i += 2
            if ord("1") <= c2 <= ord("9"):
                return BACK_REF, c2
            return _ESCAPED.get(c2, CHAR), c2
        self.i += 1
        return _PLAIN.get(c, CHAR), c


def _bracket(s: _Scanner) -> None:
    """parse_bracket_exp, after the "[" (raises _Fail)."""
    p = s.p

    def peek() -> tuple[str, int, int]:
        # peek_token_bracket: (kind, byte, length); kinds: end char range close hat open
        i = s.i
        if i >= len(p):
            return "end", 0, 0
        c = p[i]
        if c == ord("["):
            c2 = p[i + 1] if i + 1 < len(p) else 0
            if c2 in (ord("."), ord("="), ord(":")):
                return "open", c2, 2
            return "char", c, 1
        return {ord("-"): "range", ord("]"): "close", ord("^"): "hat"}.get(c, "char"), c, 1

    def symbol(delim: int) -> tuple[str, bytes]:
        # parse_bracket_symbol: [.x.] [=x=] [:name:]
        if s.i >= len(p):
            raise _Fail("EBRACK")
        name = bytearray()
        while True:
            if len(name) >= 32:
                raise _Fail("EBRACK")
            ch = p[s.i]
            s.i += 1
            if s.i >= len(p):
                raise _Fail("EBRACK")
            if ch == delim and p[s.i] == ord("]"):
                break
            name.append(ch)
        s.i += 1
        kind = {ord("."): "coll", ord("="): "equiv", ord(":"): "class"}[delim]
        return kind, bytes(name)

    def element(tok: tuple[str, int, int], accept_hyphen: bool) -> _Element:
        kind, c, length = tok
        s.i += length
        if kind == "open":
            return symbol(c)
        if kind == "range" and not accept_hyphen and peek()[0] != "close":
            raise _Fail("ERANGE")
        return "sb", c

    def collseq(elem: _Element) -> int | None:
        kind, v = elem
        if isinstance(v, int):              # "sb": one byte
            return v if v < 0x80 else None
        if kind == "coll" and len(v) == 1:
            return v[0]
        return None

    tok = peek()
    if tok[0] == "end":
        raise _Fail("BADPAT")
    if tok[0] == "hat":
        s.i += tok[2]
        tok = peek()
        if tok[0] == "end":
            raise _Fail("BADPAT")
    if tok[0] == "close":
        tok = ("char", tok[1], tok[2])
    first = True
    while True:
        start = element(tok, first)
        first = False
        tok = peek()
        is_range = False
        tok2 = tok
        if start[0] not in ("class", "equiv"):
            if tok[0] == "end":
                raise _Fail("EBRACK")
            if tok[0] == "range":
                s.i += tok[2]
                tok2 = peek()
                if tok2[0] == "end":
                    raise _Fail("EBRACK")
                if tok2[0] == "close":
                    s.i -= tok[2]
                    tok = ("char", tok[1], tok[2])
                else:
                    is_range = True
        if is_range:
            end = element(tok2, True)
            tok = peek()
            if start[0] in ("class", "equiv") or end[0] in ("class", "equiv"):
                raise _Fail("ERANGE")
            a, b = collseq(start), collseq(end)
            if a is None or b is None:
                raise _Fail("ECOLLATE")
            if a > b:
                raise _Fail("ERANGE")
        elif start[0] in ("equiv", "coll"):
            if isinstance(start[1], int) or len(start[1]) != 1:
                raise _Fail("ECOLLATE")
        elif start[0] == "class" and start[1] not in _CLASSES:
            raise _Fail("ECTYPE")
        if tok[0] == "end":
            raise _Fail("EBRACK")
        if tok[0] == "close":
            s.i += tok[2]
            return


def _dup(s: _Scanner, tok: tuple[int, int]) -> tuple[int, int]:
    """parse_dup_op for the operator ``tok``; returns the token after it."""
    if tok[0] != OPEN_DUP:
        return s.fetch()

    def number() -> tuple[int, tuple[int, int]]:
        num = -1
        while True:
            t = s.fetch()
            if t[0] == END:
                return -2, t
            if t[0] == CLOSE_DUP or t[1] == ord(","):
                return num, t
            if t[0] != CHAR or not ord("0") <= t[1] <= ord("9") or num == -2:
                num = -2
            else:
                num = t[1] - 48 if num == -1 else min(RE_DUP_MAX + 1, num * 10 + t[1] - 48)

    start, t = number()
    end = 0
    if start == -1:
        if t[0] == CHAR and t[1] == ord(","):
            start = 0
        else:
            raise _Fail("BADBR")
    if start != -2:
        if t[0] == CLOSE_DUP:
            end = start
        elif t[0] == CHAR and t[1] == ord(","):
            end, t = number()
        else:
            end = -2
    if start == -2 or end == -2:
        raise _Fail("EBRACE" if t[0] == END else "BADBR")
    if (end != -1 and start > end) or t[0] != CLOSE_DUP:
        raise _Fail("BADBR")
    if (start if end == -1 else end) > RE_DUP_MAX:
        raise _Fail("ESIZE")
    return s.fetch()


@dataclass
class _Frame:
    """An open group of _check()."""

    entry: int                  # the completed back-reference map on entry
    branches: int | None        # the map of the earlier alternatives, during a later one
    group: int                  # the group's index (-1: the whole pattern)


def _check(pattern: bytes) -> None:
    s = _Scanner(pattern)
    # one frame per open group; the outermost one (the whole pattern) is never closed
    frames = [_Frame(0, None, -1)]
    completed = 0       # dfa->completed_bkref_map
    nsub = 0
    tok = s.fetch()
    mode = "expr"
    while True:
        nest = len(frames) - 1
        if mode == "expr":                      # parse_expression
            t = tok[0]
            if t in (CHAR, PERIOD, WORD, CLOSE_DUP) or (t == CLOSE_SUB and nest == 0):
                tok = s.fetch()
                mode = "dup"
            elif t == OPEN_SUB:
                cur = nsub
                nsub += 1
                tok = s.fetch()
                if tok[0] == CLOSE_SUB:
                    if cur <= 8:
                        completed |= 1 << cur
                    tok = s.fetch()
                    mode = "dup"
                else:
                    frames.append(_Frame(completed, None, cur))
            elif t == OPEN_BRACKET:
                _bracket(s)
                tok = s.fetch()
                mode = "dup"
            elif t == BACK_REF:
                if not completed & (1 << (tok[1] - ord("1"))):
                    raise _Fail("ESUBREG")
                tok = s.fetch()
                mode = "dup"
            elif t in _DUP:
                raise _Fail("BADRPT")       # RE_CONTEXT_INVALID_OPS
            elif t == ANCHOR:
                tok = s.fetch()             # no repetition after an anchor
                mode = "branch"
            elif t == BACK_SLASH:
                raise _Fail("EESCAPE")
            else:                           # ALT, END: an empty expression
                mode = "branch"
        elif mode == "dup":
            while tok[0] in _DUP:
                tok = _dup(s, tok)
            mode = "branch"
        else:                                   # end of an expression: parse_branch's loop
            if tok[0] not in (ALT, END) and (nest == 0 or tok[0] != CLOSE_SUB):
                mode = "expr"
                continue
            frame = frames[-1]
            if frame.branches is not None:      # end of a later alternative
                completed |= frame.branches
                frame.branches = None
            if tok[0] == ALT:                   # parse_reg_exp's loop
                tok = s.fetch()
                if tok[0] not in (ALT, END) and (nest == 0 or tok[0] != CLOSE_SUB):
                    frame.branches = completed
                    completed = frame.entry
                    mode = "expr"
                continue
            if nest == 0:
                return
            if tok[0] != CLOSE_SUB:
                raise _Fail("EPAREN")
            frames.pop()
            if frame.group <= 8:
                completed |= 1 << frame.group
            tok = s.fetch()
            mode = "dup"


def regcomp_error(pattern: bytes) -> str | None:
    """regerror()'s text for ``regcomp(pattern, REG_EXTENDED|REG_NOSUB)``, None if it compiles."""
    nul = pattern.find(b"\0")
    if nul >= 0:
        pattern = pattern[:nul]
    try:
        _check(pattern)
    except _Fail as e:
        return MESSAGES[e.code]
    return None
