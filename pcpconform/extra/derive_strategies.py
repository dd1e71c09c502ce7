"""Hypothesis strategies for derived-metric expression texts (tests and fuzzing).

``expressions(profile)`` draws texts from libpcp's grammar (spec/derive-grammar.md) for one
profile: mostly well-formed expressions, and near-misses made by injecting one fault into
a well-formed one (a dropped or doubled token, a stray parenthesis, a space before "(",
an illegal character, a huge integer, an exponent, a cut-off text, ...). The texts are
meant to be given to libpcp and to pcpconform.oracles.derive.parser alike; whether a text is
accepted is for them to say, not for the strategy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pcpconform.extra import require
from pcpconform.oracles.derive.profiles import Profile

if TYPE_CHECKING:
    import hypothesis.strategies as st
else:
    st = require("hypothesis.strategies", "strategies", "pcpconform.extra.derive_strategies")

__all__ = ["expressions", "valid_expressions", "faulty_expressions", "config_texts",
           "units_strings", "patterns"]

NAMES = ("a", "b", "x.y", "disk.dev.read", "m_1", "sample.long.one", "A9", "k.l.m_n",
         "novalue", "sum", "delta", "rate", "abs", "indom", "e3", "a.", "a..b")
RESERVED = ("type", "semantics", "units", "meta")
INSTANCES = ("x", "cpu0", "a b", "with\\]bracket", "back\\\\slash", "", " ", "1")
UNITS = ("byte", "Kbyte", "Mbyte/sec", "sec", "millisec", "count", "count x 10^3",
         "Kbyte / sec", "sec^2", "/ sec", "1.5 Kbyte", "bogus", "", "sec sec", "byte^9",
         "count x 10^99", "GiB / hour^2", "nanosec^-1", "space-3", "time-5", "-1 sec", "1e3 byte")
PATTERNS = ("a", "^cpu[0-9]+$", "a|b", "x.*", "(a", "a{2,1}", "[[:alpha:]]", "[[:bogus:]]",
            "*a", "a\\\\b", "a\\/b", "", "[", "a{1", "\\1", "(a)\\1", "[z-a]", "ab?c+d*")
TYPES = ("32", "U32", "64", "u64", "float", "DOUBLE", "\"U32\"", "bogus", "1")
SEMANTICS = ("counter", "instant", "discrete", "\"COUNTER\"", "bogus")
BAD_CHARS = ("$", "@", "#", "`", "~", ";", "{", "}", "'", "\\", "&", "|", "%", "^", "é", "\t",
             "\n", "\x01", "[", "]", "\"", "=", ",", ":", "?")
SPACES = ("", "", "", " ", " ", "  ", "\t", "\n")

_BINARY = ("+", "-", "*", "/", "<", "<=", "==", ">=", ">", "!=", "&&", "||")


def _join(draw: st.DrawFn, parts: list[str]) -> str:
    return "".join(p + draw(st.sampled_from(SPACES)) for p in parts)


@st.composite
def _integer(draw: st.DrawFn) -> str:
    return draw(st.one_of(
        st.integers(0, 99).map(str),
        st.sampled_from(("4294967295", "0", "007", "4294967296", "65536", "2147483648"))))


@st.composite
def _double(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(("1.5", ".5", "1.", "0.0", "3.14159", "10.25", ".")))


@st.composite
def _spec(draw: st.DrawFn, profile: Profile, double: bool) -> list[str]:
    items = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(("type", "semantics", "units", "meta")
                                    if profile.novalue else ("type", "semantics", "units")))
        if kind == "type":
            t = draw(st.sampled_from(("DOUBLE", "FLOAT", "double")) if double and
                     draw(st.booleans()) else st.sampled_from(TYPES))
            items.append(f"type={t}")
        elif kind == "semantics":
            items.append(f"semantics={draw(st.sampled_from(SEMANTICS))}")
        elif kind == "units":
            items.append(f'units="{draw(st.sampled_from(UNITS))}"')
        else:
            items.append(f"meta={draw(st.sampled_from(NAMES[:6]))}")
    return items


@st.composite
def _atom(draw: st.DrawFn, profile: Profile, depth: int) -> list[str]:
    choices = ["name", "name", "int", "double", "inst", "func", "func", "mkconst"]
    kind = draw(st.sampled_from(choices))
    if kind == "name":
        return [draw(st.sampled_from(NAMES))]
    if kind == "int":
        return [draw(_integer())]
    if kind == "double":
        return [draw(_double())]
    if kind == "inst":
        return [draw(st.sampled_from(NAMES[:6])) + "[" + draw(st.sampled_from(INSTANCES)) + "]"]
    if kind == "mkconst":
        double = draw(st.booleans())
        value = draw(_double()) if double else draw(_integer())
        return ["mkconst(", value, ",", ", ".join(draw(_spec(profile, double))), ")"]
    func = draw(st.sampled_from(("avg", "count", "max", "min", "sum", "defined", "delta",
                                 "rate", "instant", "scalar", "rescale", "matchinst", "anon")))
    if func == "anon":
        # one token: a fault must not turn the type into another name (libpcp would crash)
        return [f"anon({draw(st.sampled_from(('PM_TYPE_32', 'PM_TYPE_U64', 'PM_TYPE_DOUBLE')))})"]
    if func in ("avg", "count", "max", "min", "sum", "defined") or (
            func in ("delta", "rate", "instant") and not profile.expr_args):
        return [func + "(", draw(st.sampled_from(NAMES[:8])), ")"]
    inner = draw(_expr(profile, depth - 1))
    if func == "rescale":
        return ["rescale(", *inner, ",", f'"{draw(st.sampled_from(UNITS))}"', ")"]
    if func == "matchinst":
        bang = "!" if draw(st.booleans()) else ""
        return ["matchinst(", f"{bang}/{draw(st.sampled_from(PATTERNS))}/", ",", *inner, ")"]
    return [func + "(", *inner, ")"]


@st.composite
def _expr(draw: st.DrawFn, profile: Profile, depth: int) -> list[str]:
    if depth <= 0:
        return draw(_atom(profile, 0))
    kind = draw(st.sampled_from(("atom", "atom", "binary", "binary", "binary", "unary",
                                 "paren", "ternary", "paren_inst")))
    if kind == "atom":
        return draw(_atom(profile, depth))
    if kind == "binary":
        return [*draw(_expr(profile, depth - 1)), draw(st.sampled_from(_BINARY)),
                *draw(_expr(profile, depth - 1))]
    if kind == "unary":
        return [draw(st.sampled_from(("-", "!"))), *draw(_expr(profile, depth - 1))]
    if kind == "paren":
        return ["(", *draw(_expr(profile, depth - 1)), ")"]
    if kind == "paren_inst":
        return ["(", *draw(_expr(profile, depth - 1)), ")[" + draw(st.sampled_from(INSTANCES)) + "]"]
    guard = draw(_expr(profile, depth - 1))
    branches = []
    for _ in range(2):
        if profile.novalue and draw(st.integers(0, 4)) == 0:
            spec = ", ".join(draw(_spec(profile, False))) if draw(st.booleans()) else ""
            branches.append(["novalue(", spec, ")"])
        else:
            branches.append(draw(_expr(profile, depth - 1)))
    return [*guard, "?", *branches[0], ":", *branches[1]]


def valid_expressions(profile: Profile, max_depth: int = 4) -> st.SearchStrategy[str]:
    """Texts built from the grammar (libpcp may still reject some, e.g. a bad units string)."""
    @st.composite
    def build(draw: st.DrawFn) -> str:
        return _join(draw, draw(_expr(profile, draw(st.integers(0, max_depth)))))
    return build()


@st.composite
def _faulty(draw: st.DrawFn, profile: Profile, max_depth: int) -> str:
    tokens = draw(_expr(profile, draw(st.integers(0, max_depth))))
    fault = draw(st.sampled_from((
        "drop", "drop", "double", "stray_open", "stray_close", "space_paren", "bad_char",
        "huge", "exponent", "cut", "swap", "unterminated", "reserved", "novalue_alone",
        "empty", "bad_op")))
    i = draw(st.integers(0, max(len(tokens) - 1, 0)))
    if fault == "drop" and len(tokens) > 1:
        del tokens[i]
    elif fault == "double":
        tokens.insert(i, tokens[i])
    elif fault == "stray_open":
        tokens.insert(i, "(")
    elif fault == "stray_close":
        tokens.insert(i, ")")
    elif fault == "space_paren":
        tokens = [t[:-1] + " (" if t.endswith("(") and len(t) > 1 else t for t in tokens]
    elif fault == "bad_char":
        tokens.insert(i, draw(st.sampled_from(BAD_CHARS)))
    elif fault == "huge":
        tokens.insert(i, draw(st.sampled_from(("4294967296", "99999999999999999999",
                                                "18446744073709551616"))))
    elif fault == "exponent":
        tokens.insert(i, draw(st.sampled_from(("1e3", "1.5e-3", "2E10", "1.e5", ".5e1"))))
    elif fault == "cut":
        text = _join(draw, tokens)
        return text[:draw(st.integers(0, len(text)))]
    elif fault == "swap" and len(tokens) > 1:
        j = draw(st.integers(0, len(tokens) - 1))
        tokens[i], tokens[j] = tokens[j], tokens[i]
    elif fault == "unterminated":
        tokens.insert(i, draw(st.sampled_from(('"Kbyte', "[inst", "/pat", "matchinst(/a"))))
    elif fault == "reserved":
        tokens.insert(i, draw(st.sampled_from(RESERVED)))
    elif fault == "novalue_alone":
        tokens.insert(i, "novalue()")
    elif fault == "empty":
        return draw(st.sampled_from(("", " ", "\t", "()", "(())")))
    elif fault == "bad_op":
        tokens.insert(i, draw(st.sampled_from(("&", "|", "=", "=<", "=>", "<>", "!!", "**",
                                                "//", "?", ":", ","))))
    return _join(draw, tokens)


def faulty_expressions(profile: Profile, max_depth: int = 3) -> st.SearchStrategy[str]:
    """Well-formed texts with one injected fault."""
    return _faulty(profile, max_depth)


def expressions(profile: Profile, max_depth: int = 4) -> st.SearchStrategy[str]:
    """Valid and near-valid expression texts for ``profile`` (about half each)."""
    return st.one_of(valid_expressions(profile, max_depth), faulty_expressions(profile, max_depth))


def units_strings() -> st.SearchStrategy[str]:
    """pmParseUnitsStr() inputs: pieces of the units vocabulary, some of them wrong."""
    words = ("sec", "ms", "Kbyte", "MB", "count", "counts", "count x 10^3", "count x 10",
             "byte", "hour", "min", "us", "nanosec", "s", "h", "^2", "^-1", "^0", "^15",
             "^1", "/", " ", "1.5", "-2", "1e3", "0x10", ".5", "-", "x", "KiB", "time-3",
             "space-2", "bytes", "^", "2", "sec^3", "1e400", "1e-400", "-inf", "nan")
    return st.lists(st.sampled_from(words), max_size=6).map("".join)


def patterns() -> st.SearchStrategy[bytes]:
    """POSIX ERE candidates over a small alphabet rich in metacharacters."""
    pieces = list("ab()|*+?{}[]^$.\\-,0123:=]") + [
        "[:alpha:]", "[:foo:]", "[.a.]", "[=a=]", "[.ab.]", "\\1", "\\w", "\\b", "{2}",
        "{1,3}", "{,2}", "{2,}", "{99999}"]
    return st.lists(st.sampled_from(pieces), max_size=10).map(lambda p: "".join(p).encode())


@st.composite
def config_texts(draw: st.DrawFn, profile: Profile) -> str:
    """Config files: definitions, attributes, comments, blank and broken lines."""
    lines = []
    names = ("d.a", "d.b", "c", "event.flags", "1bad", "x..y", "")
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(("def", "def", "def", "attr", "comment", "blank", "junk",
                                     "cont")))
        name = draw(st.sampled_from(names))
        sp = draw(st.sampled_from(("", " ", "\t", "  ")))
        if kind == "def":
            lines.append(f"{sp}{name}{sp}={sp}{draw(expressions(profile, 2))}")
        elif kind == "attr":
            attr = draw(st.sampled_from(("oneline", "helptext", "bogus", "", " oneline ")))
            value = draw(st.sampled_from(("text", '"quoted"', "'single'", '"multi\nline"',
                                          '"esc \\" \\\\"', '"unterminated', '"x" extra',
                                          '"a\nb"c d', "", '"join \\\nlines"')))
            lines.append(f"{name}({attr}){sp}={sp}{value}")
        elif kind == "comment":
            lines.append(draw(st.sampled_from(("# comment", " # indented", "#", "#x = 1"))))
        elif kind == "blank":
            lines.append(draw(st.sampled_from(("", " ", "\t"))))
        elif kind == "cont":
            lines.append(f"{name} = a +\\\n b")
        else:
            lines.append(draw(st.sampled_from(("no equals", "= 1", "a(b = c", "a)b = c",
                                               "(x) = 1", "a = "))))
    text = "\n".join(lines)
    if draw(st.booleans()):
        text += "\n"
    return text
