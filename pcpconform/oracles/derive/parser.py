"""Parse derived-metric expressions exactly as libpcp's pmRegisterDerived() does.

``parse(text, profile)`` returns the expression tree (pcpconform.oracles.derive.ast) or raises
``DeriveSyntaxError`` with libpcp's error position and pmDerivedErrStr() message.

The tables come from grammar.py (libpcp's yacc grammar, LALR(1) by lark, actions as
bison builds them); this module is bison's yyparse() driver with its error recovery:
on a syntax error it pops states until one can shift ``error``, shifts it, and the error
production's action records the message (the first message wins) and fails again
(YYERROR), until the stack is empty. Which error production fires, and how many tokens
were read by then (the position), follow from that procedure, so it is reproduced step by
step rather than approximated (spec/derive-grammar.md, DERIVE-SYN-*).
"""

from __future__ import annotations

from dataclasses import dataclass

from pcpconform.errors import DeriveSyntaxError
from pcpconform.oracles.derive import ast
from pcpconform.oracles.derive.ast import indom_of_spec
from pcpconform.oracles.derive.ere import regcomp_error
from pcpconform.oracles.derive.grammar import ERROR, Tables, tables
from pcpconform.oracles.derive.lexer import Lexer, Session, Token
from pcpconform.oracles.derive.profiles import Profile
from pcpconform.oracles.derive.units_str import UnitsAbort, UnitsError, parse_units_str

__all__ = ["DeriveSyntaxError", "Session", "process_session", "parse", "check", "format_errmsg", "unparse",
           "MAX_STACK", "TYPE_NAMES"]

#: bison's YYMAXDEPTH: a parse needing more stack is "memory exhausted" (no message)
MAX_STACK = 10000
#: spellings accepted for mkconst(type=...) (case-insensitive), and pmTypeStr() names
TYPE_NAMES = ("32", "U32", "64", "U64", "FLOAT", "DOUBLE")
SEMANTICS_NAMES = ("COUNTER", "INSTANT", "DISCRETE")
ANON_TYPES = ("PM_TYPE_32", "PM_TYPE_U32", "PM_TYPE_64", "PM_TYPE_U64", "PM_TYPE_FLOAT",
              "PM_TYPE_DOUBLE")

_ARITH = "Arithmetic expression"
_BOOL = "Boolean expression"
_OP = "Arithmetic or relational or boolean operator"
_NAME = "Metric name"

#: error productions -> (phrase, None) for "<phrase> '<arg>'" or (what, after) for
#: "<what> expected to follow <after>" (libpcp's gramerr())
_GRAMERR: dict[str, tuple[str, str | None, str]] = {}
for _tok, _sym in (("plus", "+"), ("star", "*"), ("slash", "/"), ("lparen", "("),
                   ("rparen", ")"), ("lt", "<"), ("leq", "<="), ("eq", "=="), ("geq", ">="),
                   ("gt", ">"), ("neq", "!="), ("and", "&&"), ("or", "||")):
    _GRAMERR["unexpected_" + _tok] = ("Unexpected", None, _sym)
for _tok, _sym in (("plus", "+"), ("star", "*"), ("slash", "/"), ("lparen", "("),
                   ("rparen", ")"), ("lt", "<"), ("leq", "<="), ("eq", "=="), ("geq", ">="),
                   ("gt", ">"), ("neq", "!="), ("and", "&&"), ("or", "||"), ("quest", "?"),
                   ("colon", ":")):
    _GRAMERR["initial_" + _tok] = ("Unexpected initial", None, _sym)
for _tok, _what, _node in (("name", _OP, "NAME"), ("plus", _ARITH, "PLUS"),
                           ("minus", _ARITH, "MINUS"), ("star", _ARITH, "STAR"),
                           ("slash", _ARITH, "SLASH"), ("neg", _ARITH, "NEG"),
                           ("lt", _ARITH, "LT"), ("leq", _ARITH, "LEQ"), ("eq", _ARITH, "EQ"),
                           ("geq", _ARITH, "GEQ"), ("gt", _ARITH, "GT"), ("neq", _ARITH, "NEQ"),
                           ("and", _BOOL, "AND"), ("or", _BOOL, "OR"), ("not", _BOOL, "NOT"),
                           ("quest", _ARITH, "QUEST"), ("colon", _ARITH, "COLON")):
    _GRAMERR["follow_" + _tok] = (_what, "follow", _node)
for _f in ("anon", "avg", "count", "max", "min", "sum", "instant"):
    _GRAMERR["follow_" + _f] = (_NAME, "follow", _f + "(")
_GRAMERR.update({
    "follow_novalue": ("metadata keyword", "follow", "novalue("),
    "follow_mkconst": ("metadata keyword", "follow", "mkconst(type"),
    "follow_rescale": (_OP, "follow", "rescale("),
    "follow_rescale_expr": ("Units string", "follow", "rescale(<expr>,"),
    "follow_matchinst": ("<filter>, <expr>)", "follow", "matchinst("),
    "follow_matchinst_filter": (", <expr>)", "follow", "matchinst(<filter>"),
    "follow_matchinst_comma": ("<expr>)", "follow", "matchinst(<filter>,"),
    "follow_scalar": ("<expr>", "follow", "scalar("),
})
#: 6.0.3 names delta( and rate( like the other name-only functions; 6.3 says "<expr>"
_GRAMERR_BY_PROFILE = {
    "pcp-6.0": {"follow_delta": (_NAME, "follow", "delta("),
                "follow_rate": (_NAME, "follow", "rate(")},
    "pcp-6.3": {"follow_delta": ("<expr>", "follow", "delta("),
                "follow_rate": ("<expr>", "follow", "rate(")},
}
_GRAMERR_BY_PROFILE["pcp-7"] = _GRAMERR_BY_PROFILE["pcp-6.3"]
NOVALUE_TWICE = "novalue() may appear at most once in a ternary expression"


@dataclass
class _Val:
    """A semantic value: a node (or token/spec payload) and where its text starts.

    What ``node`` holds follows from the grammar symbol the value belongs to; the typed
    views below say which one an action expects (a mismatch is a bug in the grammar's
    actions, never an input error)."""

    node: object
    start: int

    def token(self) -> Token:
        """A terminal's token."""
        assert isinstance(self.node, Token), self.node
        return self.node

    def expr(self) -> ast.Node:
        """expr, num, func, novalue: an expression tree."""
        assert isinstance(self.node, ast.Node), self.node
        return self.node

    def string(self) -> str:
        """specval: the value's text."""
        assert isinstance(self.node, str), self.node
        return self.node

    def spec(self) -> tuple[str, str]:
        """spec: (keyword, value)."""
        assert isinstance(self.node, tuple), self.node
        return self.node

    def specs(self) -> list[tuple[str, str]]:
        """speclist: the specs in order."""
        assert isinstance(self.node, list), self.node
        return self.node

    def flag(self) -> bool:
        """opt_bang: whether the "!" is there."""
        assert isinstance(self.node, bool), self.node
        return self.node

    def regexpr(self) -> tuple[str, bool]:
        """regexpr: (pattern, negated)."""
        assert isinstance(self.node, tuple), self.node
        return self.node


class _YYError(Exception):
    """An action said YYERROR."""


class _Abort(Exception):
    """An action returned -1 (libpcp's parser gives up at once)."""


class _Crash(Exception):
    """libpcp would kill the process here."""


def _gramerr(state: _Parse, phrase: str, follow: str | None, arg: str) -> None:
    if state.errmsg is None:
        msg = f"{phrase} '{arg}'" if follow is None else f"{phrase} expected to {follow} {arg}"
        # libpcp formats into a 256-byte buffer
        state.errmsg = msg.encode("utf-8", "surrogateescape")[:255].decode("utf-8", "surrogateescape")


class _Parse:
    """One pmRegisterDerived() parse: lexer, stacks, message, result."""

    def __init__(self, data: bytes, profile: Profile, session: Session):
        self.profile = profile
        self.session = session
        self.lexer = Lexer(data, profile, session)
        self.t: Tables = tables(profile)
        self.tree_reset = False     # yyerror() was called: libpcp's parse_tree = NULL
        self.gramerr = dict(_GRAMERR, **_GRAMERR_BY_PROFILE[profile.syntax])

    @property
    def errmsg(self) -> str | None:
        # libpcp's derive_errmsg: one variable, written by the lexer and the actions
        return self.lexer.errmsg

    @errmsg.setter
    def errmsg(self, value: str | None) -> None:
        self.lexer.errmsg = value

    def run(self) -> ast.Node:
        t = self.t
        states = [t.start]
        values = [_BOTTOM]
        look: Token | None = None
        errstatus = 0
        lex = self.lexer

        def lookahead() -> Token:
            nonlocal look
            if look is None:
                look = lex.next()
            return look

        while True:
            if len(states) >= MAX_STACK:
                # bison: "memory exhausted"; yyerror() resets the tree, no message
                self.tree_reset = True
                return self._fail()
            state = states[-1]
            act = None
            if t.reads_lookahead(state):
                act = t.action[state].get(lookahead().type)
            if act is not None and act[0] == "s":
                if errstatus:
                    errstatus -= 1
                states.append(act[1])
                shifted = lookahead()       # the token just read (a shift needs one)
                values.append(_Val(shifted, shifted.pos))
                look = None
                continue
            rule_no = act[1] if act is not None else t.default[state]
            if rule_no is not None:
                rule = t.rules[rule_no]
                n = len(rule.rhs)
                args = values[len(values) - n:] if n else []
                try:
                    result = self._action(rule.action, args)
                except _YYError:
                    del states[len(states) - n:]
                    del values[len(values) - n:]
                    errstatus = 3
                    if not self._recover(states, values):
                        return self._fail()
                    continue
                except _Abort:
                    self.tree_reset = True
                    return self._fail()
                except _Crash as e:
                    raise DeriveSyntaxError(self.lexer.lexicon, str(e), aborts=True) from None
                if result is _ACCEPT:
                    tree = args[0].expr()
                    self.session.last_tree = tree
                    return tree
                del states[len(states) - n:]
                del values[len(values) - n:]
                states.append(t.goto[states[-1]][rule.lhs])
                values.append(result)
                continue
            # syntax error (yyerrlab)
            if not errstatus:
                self.tree_reset = True           # yyerror() -> derive_error()
            elif errstatus == 3:
                # the token that failed right after an error was shifted is discarded;
                # libpcp's lexer never returns bison's end marker, so this never aborts
                look = None
            errstatus = 3
            if not self._recover(states, values):
                return self._fail()

    def _recover(self, states: list[int], values: list[_Val]) -> bool:
        """yyerrlab1: pop to a state that shifts ERROR and shift it; False when the stack empties."""
        t = self.t
        while True:
            act = t.action[states[-1]].get(ERROR)
            if act is not None and act[0] == "s":
                states.append(act[1])
                values.append(_Val(None, self.lexer.lexicon))
                return True
            if len(states) == 1:
                return False
            states.pop()
            values.pop()

    def _fail(self) -> ast.Node:
        if not self.tree_reset and self.session.last_tree is not None:
            # libpcp's parse_tree still holds the previous expression: "success"
            return self.session.last_tree
        self.session.last_tree = None
        raise DeriveSyntaxError(self.lexer.lexicon, self.errmsg)

    # --- actions -------------------------------------------------------------------------

    def _action(self, name: str, args: list[_Val]) -> _Val:
        if name == "accept":
            return _ACCEPT
        if name in self.gramerr:
            phrase, follow, arg = self.gramerr[name]
            _gramerr(self, phrase, follow, arg)
            raise _YYError
        if name == "novalue_twice":
            self.errmsg = NOVALUE_TWICE       # libpcp assigns it, without gramerr()'s guard
            raise _YYError
        start = args[0].start if args else self.lexer.lexicon
        return _Val(getattr(self, "_a_" + name)(args, start), start)

    def _a_paren(self, a: list[_Val], start: int) -> ast.Node:
        return a[1].expr()

    def _a_pass(self, a: list[_Val], start: int) -> ast.Node:
        return a[0].expr()

    def _a_name(self, a: list[_Val], start: int) -> ast.Metric:
        return ast.Metric(start, a[0].token().text)

    def _a_name_inst(self, a: list[_Val], start: int) -> ast.InstSelect:
        return ast.InstSelect(start, ast.Metric(start, a[0].token().text), a[1].token().text)

    def _a_paren_inst(self, a: list[_Val], start: int) -> ast.InstSelect:
        return ast.InstSelect(start, a[1].expr(), a[3].token().text)

    def _a_binary(self, a: list[_Val], start: int) -> ast.Binary:
        return ast.Binary(start, a[1].token().text, a[0].expr(), a[2].expr())

    def _a_unary(self, a: list[_Val], start: int) -> ast.Unary:
        return ast.Unary(start, a[0].token().text, a[1].expr())

    def _a_ternary(self, a: list[_Val], start: int) -> ast.Ternary:
        return ast.Ternary(start, a[0].expr(), a[2].expr(), a[4].expr())

    def _a_integer(self, a: list[_Val], start: int) -> ast.Integer:
        tok = a[0].token()
        return ast.Integer(start, _int(tok.text), tok.text)

    def _a_double(self, a: list[_Val], start: int) -> ast.Double:
        tok = a[0].token()
        return ast.Double(start, _strtod(tok.text), tok.text)

    def _a_mid(self, a: list[_Val], start: int) -> None:
        return None

    def _a_mkconst(self, a: list[_Val], start: int) -> ast.MkConst:
        tok = a[2].token()
        value = ast.Integer(tok.pos, _int(tok.text), tok.text)
        return ast.MkConst(start, value, _spec(a[5].specs()))

    def _a_mkconst_double(self, a: list[_Val], start: int) -> ast.MkConst:
        tok = a[2].token()
        spec = _spec(a[5].specs())
        typ = _ascii_upper(spec.get("type") or "DOUBLE")
        if typ not in ("DOUBLE", "FLOAT"):
            _gramerr(self, "Incompatible floating point constant and type", None, typ)
            raise _Abort
        return ast.MkConst(start, ast.Double(tok.pos, _strtod(tok.text), tok.text), spec)

    def _a_speclist_more(self, a: list[_Val], start: int) -> list[tuple[str, str]]:
        return a[0].specs() + [a[2].spec()]

    def _a_speclist_one(self, a: list[_Val], start: int) -> list[tuple[str, str]]:
        return [a[0].spec()]

    def _a_spec_type(self, a: list[_Val], start: int) -> tuple[str, str]:
        value = a[2].string()
        if _ascii_upper(value) not in TYPE_NAMES:
            _gramerr(self, "Unrecognized value for type", None, value)
            raise _Abort
        return ("type", value)

    def _a_spec_semantics(self, a: list[_Val], start: int) -> tuple[str, str]:
        value = a[2].string()
        if _ascii_upper(value) not in SEMANTICS_NAMES:
            _gramerr(self, "Unrecognized value for semantics", None, value)
            raise _Abort
        return ("semantics", value)

    def _a_spec_units(self, a: list[_Val], start: int) -> tuple[str, str]:
        value = a[2].string()
        self._check_units(value)
        return ("units", value)

    def _a_spec_indom(self, a: list[_Val], start: int) -> tuple[str, str]:
        """7.x's indom=: NULL (any case) or DOMAIN.SERIAL as sscanf("%u.%u%n") reads the
        whole value, domain below 511 and serial below 2^22 (DERIVE-VER-6)."""
        value = a[2].string()
        if _ascii_upper(value) != "NULL" and indom_of_spec(value) is None:
            _gramerr(self, "Illegal indom:", None, value)
            raise _Abort
        return ("indom", value)

    def _a_spec_meta(self, a: list[_Val], start: int) -> tuple[str, str]:
        return ("meta", a[2].token().text)

    def _a_specval(self, a: list[_Val], start: int) -> str:
        return a[0].token().text

    def _a_novalue(self, a: list[_Val], start: int) -> ast.NoValueExpr:
        return ast.NoValueExpr(start, ast.Spec())

    def _a_novalue_spec(self, a: list[_Val], start: int) -> ast.NoValueExpr:
        return ast.NoValueExpr(start, _spec(a[2].specs()))

    def _a_novalue_param(self, a: list[_Val], start: int) -> ast.NoValueExpr:
        # 7.x: novalue( <mid-rule action> novalueparam
        return ast.NoValueExpr(start, _spec(a[3].specs()))

    def _a_novalue_none(self, a: list[_Val], start: int) -> list[tuple[str, str]]:
        return []

    def _a_novalue_specs(self, a: list[_Val], start: int) -> list[tuple[str, str]]:
        return a[0].specs()

    def _a_regexpr(self, a: list[_Val], start: int) -> tuple[str, bool]:
        pattern = a[1].token().text
        err = regcomp_error(pattern.encode("utf-8", "surrogateescape"))
        if err is not None:
            _gramerr(self, "bad regular expression:", None, err)
            raise _Abort
        return (pattern, a[0].flag())

    def _a_bang(self, a: list[_Val], start: int) -> bool:
        return True

    def _a_no_bang(self, a: list[_Val], start: int) -> bool:
        return False

    def _a_call_name(self, a: list[_Val], start: int) -> ast.Call:
        name = a[2].token()
        if a[0].token().type == "L_ANON" and name.text not in ANON_TYPES:
            # libpcp prints this, frees the nodes and goes on using them: a double free
            raise _Crash(f"type={name.text} not allowed for anon()")
        return ast.Call(start, a[0].token().text, ast.Metric(name.pos, name.text))

    def _a_call_expr(self, a: list[_Val], start: int) -> ast.Call:
        return ast.Call(start, a[0].token().text, a[2].expr())

    def _a_rescale(self, a: list[_Val], start: int) -> ast.Rescale:
        units = a[4].token().text
        self._check_units(units)
        return ast.Rescale(start, a[2].expr(), units)

    def _a_matchinst(self, a: list[_Val], start: int) -> ast.MatchInst:
        self.session.in_matchinst = False
        pattern, negate = a[2].regexpr()
        return ast.MatchInst(start, pattern, negate, a[4].expr())

    def _check_units(self, text: str) -> None:
        try:
            parse_units_str(text.encode("utf-8", "surrogateescape"),
                            asserts=self.profile.units_asserts)
        except UnitsAbort as e:
            raise _Crash(e.message) from None
        except UnitsError as e:
            _gramerr(self, "Illegal units:", None, e.message)
            raise _Abort from None


#: what the accepting action returns (compared by identity)
_ACCEPT = _Val(None, -1)
#: the value under the start state (bison's yyvsa[0]); no rule ever reads it
_BOTTOM = _Val(None, 0)


def _ascii_upper(s: str) -> str:
    # strcasecmp() folds ASCII letters only
    return "".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in s)


def _spec(items: list[tuple[str, str]]) -> ast.Spec:
    # a later setting overwrites an earlier one of the same key, as in libpcp's specdesc
    last = {k: v for k, v in items}
    return ast.Spec(tuple((k, last[k]) for k in dict.fromkeys(k for k, _ in items)))


def _int(text: str) -> int:
    # the lexer allows any number of leading zeros; int() refuses very long strings
    return int(text.lstrip("0") or "0")


def _strtod(text: str) -> float:
    # the lexer's doubles are digits with one ".", so "." and "1." occur; strtod reads "." as 0
    try:
        return float(text)
    except ValueError:
        return 0.0


def _as_bytes(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape")


def parse(text: str | bytes, profile: Profile, session: Session | None = None) -> ast.Node:
    """Parse ``text`` as pmRegisterDerived() does; raise DeriveSyntaxError on a syntax error.

    Positions are byte offsets into the UTF-8 encoding of ``text`` (the same as character
    offsets for ASCII). Without ``session`` every call is a fresh process
    (``process_session``); pass one Session to model consecutive calls in one process
    (DERIVE-LEX-11, DERIVE-SYN-9).
    """
    return _Parse(_as_bytes(text), profile, session or process_session(profile)).run()


def process_session(profile: Profile) -> Session:
    """The parser state a process's first pmRegisterDerived() meets: none, or, where libpcp
    registers its anonymous event metrics first (``Profile.anon_on_register``, 7.x), the
    tree of their ``anon(PM_TYPE_U32)`` (DERIVE-SYN-9)."""
    session = Session()
    if profile.anon_on_register:
        _Parse(b"anon(PM_TYPE_U32)", profile, session).run()
    return session


def check(text: str | bytes, profile: Profile,
          session: Session | None = None) -> DeriveSyntaxError | None:
    """None if ``text`` parses, else the error (never raises)."""
    try:
        parse(text, profile, session)
    except DeriveSyntaxError as e:
        return e
    return None


def format_errmsg(name: str, text: str | bytes, error: DeriveSyntaxError) -> str:
    """The message pmRegisterDerivedMetric() returns in ``*errmsg`` (same in 6.0.3 and 6.3)."""
    expr = _as_bytes(text)
    nul = expr.find(b"\0")
    shown = (expr if nul < 0 else expr[:nul]).decode("utf-8", "surrogateescape")
    # libpcp prints "%*s" with width (expr - offset), negative, so " " left-justified to
    # |offset| columns; offset 0 has a format of its own without the spaces
    pad = " " * abs(error.pos) if error.pos != 0 else ""
    out = f'Error: pmRegisterDerivedMetric("{name}", ...)\n{shown}\n{pad}^\n'
    if error.has_message:
        out += error.message + "\n"
    return out


# --- printing a tree back (fully parenthesised), iteratively so deep trees are fine -------

def unparse(node: ast.Node) -> str:
    """Expression text for ``node`` with every operator application in parentheses."""
    out: list[str] = []
    stack: list[str | ast.Node] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        stack.extend(reversed(_parts(item)))
    return "".join(out)


def _quote_inst(s: str) -> str:
    return s.replace("\\", "\\\\").replace("]", "\\]")


def _parts(n: ast.Node) -> list[str | ast.Node]:
    if isinstance(n, ast.Metric):
        return [n.name]
    if isinstance(n, (ast.Integer, ast.Double)):
        return [n.text]
    if isinstance(n, ast.Unary):
        return ["(", n.op, n.operand, ")"]
    if isinstance(n, ast.Binary):
        return ["(", n.left, f" {n.op} ", n.right, ")"]
    if isinstance(n, ast.Ternary):
        return ["(", n.guard, " ? ", n.then, " : ", n.other, ")"]
    if isinstance(n, ast.Call):
        return [f"{n.func}(", n.arg, ")"]
    if isinstance(n, ast.Rescale):
        return ["rescale(", n.operand, f', "{n.units}")']
    if isinstance(n, ast.MatchInst):
        pat = n.pattern.replace("\\", "\\\\").replace("/", "\\/")
        return [f"matchinst({'!' if n.negate else ''}/{pat}/, ", n.operand, ")"]
    if isinstance(n, ast.InstSelect):
        if isinstance(n.operand, ast.Metric):
            return [n.operand.name, f"[{_quote_inst(n.instance)}]"]
        return ["(", n.operand, f")[{_quote_inst(n.instance)}]"]
    if isinstance(n, (ast.MkConst, ast.NoValueExpr)):
        specs = ", ".join(f'{k}="{v}"' if k != "meta" else f"{k}={v}" for k, v in n.spec.items)
        if isinstance(n, ast.MkConst):
            return [f"mkconst({n.value.text}, {specs})"]
        return [f"novalue({specs})"]
    raise TypeError(f"not an expression node: {n!r}")
