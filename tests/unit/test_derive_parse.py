"""The derived-metric parser and config reader, without libpcp (spec/derive-grammar.md).

The expected positions and messages here were measured with libpcp 6.0.3 and 6.3.8;
tests/differential/test_derive_parse_vs_libpcp.py checks the same tables (tests/data/
derive-syntax-errors.json, derive-shapes.json) against every referee.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.extra.derive_strategies import config_texts, expressions, patterns
from pcpconform.oracles.derive import ast
from pcpconform.oracles.derive.config import Registry, check_name, load_path, read_config
from pcpconform.oracles.derive.ere import regcomp_error
from pcpconform.oracles.derive.grammar import GRAMMAR, grammar_text, tables
from pcpconform.oracles.derive.lexer import Lexer, Session
from pcpconform.oracles.derive.parser import (
    MAX_STACK,
    DeriveSyntaxError,
    format_errmsg,
    parse,
    process_session,
    unparse,
)
from pcpconform.oracles.derive.profiles import PROFILES
from pcpconform.oracles.derive.units_str import UnitsAbort, UnitsError, parse_units_str
from tests.derive_cases import rows_for

ROOT = Path(__file__).resolve().parents[2]
P60 = PROFILES["pcp-6.0"]
P63 = PROFILES["pcp-6.3"]
P7 = PROFILES["pcp-7"]
BOTH = ("pcp-6.0", "pcp-6.3")

ARITH = "Arithmetic expression expected to follow "
BOOL = "Boolean expression expected to follow "
OP = "Arithmetic or relational or boolean operator expected to follow "

#: (text, profiles, error position, message or None for "no message"), measured with the
#: libpcps named in the data file's "measured_with"
SYNTAX_ERRORS: list[tuple[str, tuple[str, ...], int, str | None]] = [
    (r["text"], tuple(r["profiles"]), r["pos"], r["msg"]) for r in rows_for("syntax-errors")]

#: accepted texts and their trees, fully parenthesised (DERIVE-SYN-2..-4)
SHAPES: list[tuple[str, tuple[str, ...], str]] = [
    (r["text"], tuple(r["profiles"]), r["shape"]) for r in rows_for("shapes")]


def _profiles(names: tuple[str, ...]):
    return [PROFILES[n] for n in names]


def _err(text, profile, session=None) -> DeriveSyntaxError:
    """The error from a state with no parse tree (the tables' texts were measured after a
    syntax error, as tests/differential/test_derive_parse_vs_libpcp.py's RESET leaves it)."""
    with pytest.raises(DeriveSyntaxError) as info:
        parse(text, profile, Session() if session is None else session)
    return info.value


@pytest.mark.parametrize("text,names,pos,message", SYNTAX_ERRORS)
def test_syntax_errors(text: str, names: tuple[str, ...], pos: int, message: str | None) -> None:
    """Every diagnostic: position and pmDerivedErrStr() text (DERIVE-SYN-12..-15, DERIVE-LEX-12)."""
    for profile in _profiles(names):
        e = _err(text, profile)
        assert (e.pos, e.message if e.has_message else None) == (pos, message), profile.name


@pytest.mark.parametrize("text,names,shape", SHAPES)
def test_tree_shapes(text: str, names: tuple[str, ...], shape: str) -> None:
    """Precedence, associativity, prefix operators, literals (DERIVE-SYN-2..-4, DERIVE-LEX-4..-6)."""
    for profile in _profiles(names):
        tree = parse(text, profile)
        assert unparse(tree) == shape, profile.name
        assert unparse(parse(unparse(tree), profile)) == shape


def test_grammar_listing_in_spec_is_the_grammar() -> None:
    """The spec's grammar listing is the parser's grammar (DERIVE-SYN-1)."""
    text = (ROOT / "spec" / "derive-grammar.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- BEGIN GRAMMAR: [^\n]*-->\n```text\n(.*?)```\n<!-- END GRAMMAR -->", text, re.S)
    assert m is not None
    assert m.group(1) == GRAMMAR.strip("\n") + "\n"


def test_grammar_profiles_and_tables() -> None:
    """Profile-tagged lines, no unresolved conflicts, an action for every rule (DERIVE-SYN-1)."""
    assert "L_NOVALUE" not in grammar_text(P60).split("%declare L_PATTERN")[1]
    assert "novalue:" in grammar_text(P63)
    from pcpconform.oracles.derive import parser as p
    for profile in (P60, P63):
        t = tables(profile)
        for rule in t.rules:
            name = rule.action
            assert (name in ("accept", "novalue_twice") or name in p._GRAMERR
                    or name in p._GRAMERR_BY_PROFILE[profile.name]
                    or hasattr(p._Parse, "_a_" + name)), name
        # a state that shifts ERROR never has a default reduction (bison)
        for row, dflt in zip(t.action, t.default):
            if row.get("ERROR", ("r",))[0] == "s":
                assert dflt is None
        assert sum(1 for row in t.action if not row) > 80     # states that read no token


def test_node_positions() -> None:
    """Nodes record where their text starts (byte offsets, DERIVE-LEX-1)."""
    tree = parse("  (a + sum(x)) * -3", P63)
    assert isinstance(tree, ast.Binary) and tree.op == "*" and tree.pos == 2   # at the "("
    assert isinstance(tree.left, ast.Binary) and tree.left.pos == 3
    assert tree.left.right == ast.Call(7, "sum", ast.Metric(11, "x"))
    assert tree.right == ast.Unary(17, "-", ast.Integer(18, 3, "3"))
    e = _err("a[é] + é", P63)
    assert e.pos == 8 and e.message == "Illegal character"   # bytes, not characters


def test_literals() -> None:
    """Integers, doubles and their limits (DERIVE-LEX-4, -5)."""
    assert parse("4294967295", P60) == ast.Integer(0, 4294967295, "4294967295")
    assert parse("007", P60) == ast.Integer(0, 7, "007")
    assert parse(".", P60) == ast.Double(0, 0.0, ".")
    assert parse("1.", P60) == ast.Double(0, 1.0, "1.")
    assert parse("0" * 6000 + "1", P60).value == 1
    assert _err("9" * 6000, P60).message == "Constant value too large"
    e = _err("1.2.3", P60)
    assert (e.pos, e.has_message) == (3, False)


def test_function_names_need_the_parenthesis_at_once() -> None:
    """A function name followed by anything but "(" is a name (DERIVE-LEX-6, -7)."""
    assert parse("sum + count", P60) == ast.Binary(0, "+", ast.Metric(0, "sum"), ast.Metric(6, "count"))
    assert _err("sum\t(x)", P63).message == "Unexpected '('"
    assert _err("abs(x)", P63).message == "Unexpected '('"
    assert isinstance(parse("novalue", P63), ast.Metric)
    for word in ("type", "semantics", "units"):
        assert not _err(word + " + 1", P60).has_message
    assert isinstance(parse("meta", P60), ast.Metric)
    assert isinstance(parse("indom", P63), ast.Metric)


def test_every_function() -> None:
    """The function table per profile (DERIVE-SYN-6..-9)."""
    for profile in (P60, P63):
        for f in ("avg", "count", "max", "min", "sum", "defined", "delta", "rate", "instant"):
            assert parse(f"{f}(a.b)", profile) == ast.Call(0, f, ast.Metric(len(f) + 1, "a.b"))
        assert parse("scalar(a + 1)", profile).func == "scalar"
        assert parse("anon(PM_TYPE_FLOAT)", profile) == ast.Call(0, "anon",
                                                                 ast.Metric(5, "PM_TYPE_FLOAT"))
        r = parse('rescale(a * 2, "Mbyte")', profile)
        assert isinstance(r, ast.Rescale) and r.units == "Mbyte"
        m = parse("matchinst(!/x\\/y/, a)", profile)
        assert m == ast.MatchInst(0, "x/y", True, ast.Metric(19, "a"))
        k = parse('mkconst(5, type="64", semantics=counter, units="Kbyte/sec")', profile)
        assert isinstance(k, ast.MkConst) and k.value.value == 5
        assert k.spec.get("type") == "64" and k.spec.get("units") == "Kbyte/sec"
    assert parse("delta(a + b)", P63).arg == ast.Binary(6, "+", ast.Metric(6, "a"), ast.Metric(10, "b"))
    t = parse("g ? novalue(units=byte) : x", P63)
    assert isinstance(t, ast.Ternary) and t.then == ast.NoValueExpr(4, ast.Spec((("units", "byte"),)))
    assert parse("mkconst(1, meta=m)", P63).spec.get("meta") == "m"
    assert _err("mkconst(1, meta=m)", P60).pos == 11


def test_anon_with_another_name_aborts_libpcp() -> None:
    """anon(<not a PM_TYPE_*>) makes libpcp free memory twice (DERIVE-SYN-7)."""
    e = _err("anon(foo)", P63)
    assert e.aborts and e.message == "type=foo not allowed for anon()"


def test_units_strings() -> None:
    """pmParseUnitsStr (DERIVE-SYN-10)."""
    u = parse_units_str("Kbyte / sec")
    assert (u.dim_space, u.dim_time, u.scale_space, u.scale_time, u.multiplier) == (1, -1, 1, 3, 1.0)
    u = parse_units_str("count x 10^3^2 / count")
    assert (u.dim_count, u.scale_count) == (1, 0)
    assert parse_units_str("").dim_space == 0
    for bad, why in (("sec sec", "unrecognized or duplicate base unit"),
                     ("1e999 sec", "invalid floating point literal"),
                     ("sec^7 / sec^-1", "time dimension out of bounds"),
                     ("secs", "unrecognized or duplicate base unit")):
        with pytest.raises(UnitsError) as info:
            parse_units_str(bad)
        assert info.value.message == why
    with pytest.raises(UnitsAbort):
        parse_units_str("time-9^0")
    assert _err('rescale(x, "time-9 / sec")', P60).aborts


@pytest.mark.parametrize("pattern,message", [
    (b"a", None), (b"", None), (b"()", None), (b"a|", None), (b"a**", None), (b")", None),
    (b"a{1,2}", None), (b"(a)\\1", None), (b"[]a]", None), (b"[a-]", None),
    (b"[", "Invalid regular expression"), (b"a[b", "Unmatched [, [^, [:, [., or [="),
    (b"(a", "Unmatched ( or \\("), (b"*a", "Invalid preceding regular expression"),
    (b"^*", "Invalid preceding regular expression"), (b"a{2,1}", "Invalid content of \\{\\}"),
    (b"a{1", "Unmatched \\{"), (b"[z-a]", "Invalid range end"), (b"a\\", "Trailing backslash"),
    (b"\\1", "Invalid back reference"), (b"(a)|\\1", "Invalid back reference"),
    (b"[[:nope:]]", "Invalid character class name"), (b"[[.ab.]]", "Invalid collation character"),
    (b"a{32768}", "Regular expression too big"),
])
def test_regular_expressions(pattern: bytes, message: str | None) -> None:
    """glibc's regcomp(REG_EXTENDED) verdicts (DERIVE-SYN-11)."""
    assert regcomp_error(pattern) == message


def _glibc_regcomp():
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    libc = ctypes.CDLL(name)
    if not hasattr(libc, "gnu_get_libc_version"):
        return None
    libc.regerror.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    preg = ctypes.create_string_buffer(256)

    def regcomp(p: bytes) -> str | None:
        rc = libc.regcomp(preg, p, 1 | 8)           # REG_EXTENDED | REG_NOSUB
        if rc == 0:
            libc.regfree(preg)
            return None
        msg = ctypes.create_string_buffer(128)
        libc.regerror(rc, preg, msg, 128)
        return msg.value.decode()
    return regcomp


_REGCOMP = _glibc_regcomp()


@pytest.mark.skipif(_REGCOMP is None, reason="needs glibc")
@settings(max_examples=1500, deadline=None)
@given(patterns())
def test_regular_expressions_agree_with_glibc(pattern: bytes) -> None:
    """The ERE check against this host's glibc regcomp() (DERIVE-SYN-11)."""
    assert regcomp_error(pattern) == _REGCOMP(pattern)


def test_matchinst_mode_leaks_into_the_next_expression() -> None:
    """DERIVE-LEX-11: "/" stays a pattern start after a failed matchinst()."""
    s = Session()
    assert _err("matchinst(/a/, b / c)", P60, s).message == "unterminated pattern"
    assert _err("a / b", P60, s).message == "unterminated pattern"
    assert parse("matchinst(/x/, y)", P60, s)
    assert parse("a / b", P60, s).op == "/"
    assert parse("a / b", P60).op == "/"        # a fresh session


def test_novalue_twice_reuses_the_previous_expression() -> None:
    """DERIVE-SYN-9: the failed parse keeps libpcp's previous tree."""
    s = Session()
    e = _err("1 ? novalue() : novalue()", P63, s)
    assert (e.pos, e.message) == (24, "novalue() may appear at most once in a ternary expression")
    prev = parse("a + 1", P63, s)
    assert parse("1 ? novalue() : novalue()", P63, s) is prev
    _err("a b", P63, s)
    assert _err("1 ? novalue() : novalue()", P63, s).pos == 24


def test_a_process_of_7_starts_with_the_anonymous_metrics_tree() -> None:
    """DERIVE-SYN-9, DERIVE-VER-2 (anon_on_register): libpcp 7's pmRegisterDerived() registers
    event.flags and event.missed first, so the first call of a process meets their
    anon(PM_TYPE_U32) tree and a ternary of two novalue()s is "accepted" with it; 6.3's
    first call has no tree and is rejected."""
    anon = parse("anon(PM_TYPE_U32)", P7, Session())
    assert process_session(P7).last_tree == anon and process_session(P63).last_tree is None
    assert parse("1 ? novalue() : novalue()", P7) == anon
    assert parse("1 ? novalue() : novalue()", P7, process_session(P7)) == anon
    assert _err("1 ? novalue() : novalue()", P63, process_session(P63)).pos == 24
    assert _err("1 ? novalue() : novalue()", P7).pos == 24        # after a syntax error: none


def test_0xff_and_nul_end_the_text() -> None:
    """DERIVE-LEX-1, -3."""
    assert unparse(parse(b"1 + 2 \xff junk", P60)) == "(1 + 2)"
    assert _err(b"a\xffb", P60).message.startswith("Arithmetic or relational")
    assert parse(b"a\0 junk", P60) == ast.Metric(0, "a")
    e = _err(b"\xff", P60)
    assert (e.pos, e.has_message) == (0, False)
    assert _err(b"a \x80", P60).message == "Illegal character"


def test_stack_limit() -> None:
    """DERIVE-SYN-16: bison's 10000-state stack, without recursion in Python."""
    ok = "(" * 4998 + "a" + ")" * 4998
    assert isinstance(parse(ok, P63), ast.Metric)
    e = _err("(" * 9998 + "a" + ")" * 9998, P63)
    assert (e.pos, e.has_message) == (9998, False)
    assert MAX_STACK == 10000


@pytest.mark.parametrize("text", [
    "(" * 2000 + "a" + ")" * 2000, "(" * 10000, "-" * 10000 + "a", "!" * 9999,
    "a" + "+a" * 4999, "a ? " * 2500, "sum(" * 2500, "a[" + "x" * 9997, '"' * 10000,
    "matchinst(/" + "(" * 9990 + "/, a)", "mkconst(1, " + "type=32, " * 1000 + "x", "." * 10000,
])
def test_pathological_texts(text: str) -> None:
    """10,000-character inputs: a tree or a DeriveSyntaxError, quickly (DERIVE-SYN-16)."""
    t0 = time.monotonic()
    for profile in (P60, P63):
        try:
            tree = parse(text, profile)
            unparse(tree)
        except DeriveSyntaxError:
            pass
    assert time.monotonic() - t0 < 10


@settings(max_examples=400, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode)),
       st.sampled_from(("pcp-6.0", "pcp-6.3")))
def test_fuzz_random_bytes(data: bytes, name: str) -> None:
    """Any input: a tree or a DeriveSyntaxError, nothing else."""
    try:
        tree = parse(data, PROFILES[name])
    except DeriveSyntaxError:
        return
    unparse(tree)


@settings(max_examples=300, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_generated_expressions(data) -> None:
    """Grammar-based texts: accepted ones print back to an equivalent text (DERIVE-SYN-1)."""
    profile = data.draw(st.sampled_from((P60, P63)))
    text = data.draw(expressions(profile))
    try:
        tree = parse(text, profile)
    except DeriveSyntaxError as e:
        assert -1 <= e.pos < max(len(text.encode()), 1)
        return
    again = unparse(tree)
    assert unparse(parse(again, profile)) == again


def test_format_errmsg() -> None:
    """pmRegisterDerivedMetric's message (DERIVE-SYN-17)."""
    assert format_errmsg("d.x", "a +", _err("a +", P60)) == (
        'Error: pmRegisterDerivedMetric("d.x", ...)\na +\n  ^\n'
        "Arithmetic expression expected to follow PLUS\n")
    assert format_errmsg("d.x", "1e3", _err("1e3", P60)) == (
        'Error: pmRegisterDerivedMetric("d.x", ...)\n1e3\n ^\n')
    assert format_errmsg("d.x", "+a", _err("+a", P60)).splitlines()[2] == " ^"
    assert format_errmsg("d.x", "", _err("", P60)) == (
        'Error: pmRegisterDerivedMetric("d.x", ...)\n\n ^\n')
    assert format_errmsg("d.x", "(", _err("(", P60)).splitlines()[2] == "^"


def test_lexer_tokens() -> None:
    """Token kinds and texts (DERIVE-LEX-4..-11)."""
    toks = Lexer(b'x.y[a\\]b] <= "s" != .5 && 12', P63, Session()).tokens()
    assert [(t.type, t.text, t.pos) for t in toks] == [
        ("L_NAME", "x.y", 0), ("L_INSTNAME", "a]b", 3), ("L_LEQ", "<=", 10),
        ("L_STRING", "s", 13), ("L_NEQ", "!=", 17), ("L_DOUBLE", ".5", 20),
        ("L_AND", "&&", 23), ("L_INTEGER", "12", 26), ("L_EOS", "", 27)]


# --- configuration files --------------------------------------------------------------------

def _cfg(text: str, profile=P63, fname: str = "a.conf"):
    return read_config(text, profile, fname)


def test_config_definitions_and_comments() -> None:
    """DERIVE-CFG-2, -3, -7: comments in column 1, the last line needs its newline."""
    r = _cfg("# comment\n\nd.a = a + 1\nd.b = sum(x)\nd.c = 3")
    assert r.status == 2 and r.stderr == ""
    assert [(d.name, d.expr, d.line) for d in r.definitions] == [("d.a", "a + 1", 3), ("d.b", "sum(x)", 4)]
    assert unparse(r.definitions[0].tree) == "(a + 1)"


def test_config_blank_and_indented_lines_are_errors() -> None:
    """DERIVE-CFG-3."""
    r = _cfg(" # indented\n \t\nx = 1\n")
    assert r.status == 1
    assert r.diagnostics == [
        "[a.conf:1] Error: pmLoadDerivedConfig: missing ``='' after derived metric name",
        " # indented",
        "[a.conf:2] Error: pmLoadDerivedConfig: missing ``='' after derived metric name",
        " \t"]


def test_config_syntax_error_report() -> None:
    """DERIVE-CFG-7: header, text after "=", caret line (white space kept), reason."""
    r = _cfg("y =\tsum (x)\nz = 1e3\nevent.flags = 1\n")
    assert r.status == 0
    assert r.stderr == (
        "[a.conf:1] Error: pmRegisterDerived(y, ...) syntax error\n\tsum (x)\n\t     ^ \n"
        "Unexpected '('\n"
        "[a.conf:2] Error: pmRegisterDerived(z, ...) syntax error\n 1e3\n  ^ \n"
        "[a.conf:3] Error: pmRegisterDerived(event.flags, ...) syntax error\n 1\n ^\n"
        "Duplicate global derived metric name\n")


def test_config_line_checks() -> None:
    """DERIVE-CFG-5, -6."""
    r = _cfg("= 1\n1a = 1\na..b = 1\na(oneline = x\naoneline) = x\na = \na. = 1\n")
    # a ")" without "(" is part of the name, so the name check fails first
    assert r.status == 1 and r.definitions[-1].name == "a."
    assert [line for line in r.diagnostics if line.startswith("[")] == [
        "[a.conf:1] Error: pmLoadDerivedConfig: derived metric name missing",
        "[a.conf:2] Error: pmLoadDerivedConfig: illegal derived metric name (1a)",
        "[a.conf:3] Error: pmLoadDerivedConfig: illegal derived metric name (a..b)",
        "[a.conf:4] Error: pmLoadDerivedConfig: missing ')' after attribute",
        "[a.conf:5] Error: pmLoadDerivedConfig: illegal derived metric name (aoneline))",
        "[a.conf:6] Error: pmLoadDerivedConfig: expression missing"]
    assert check_name(b"a.b_1.c9") and check_name(b"a.") and not check_name(b".a")


def test_config_attributes() -> None:
    """DERIVE-CFG-8, -9."""
    r = _cfg('m = 1\nm(oneline) = plain text  \nm( helptext ) = "two\nlines \\"q\\" \\\njoined"\n'
             "m(bogus) = x\nm(oneline) = again\nn(oneline) = x\nevent.flags(helptext) = x\n"
             "m(helptext)\t= \"\nm() = x\n")
    d = r.definitions[0]
    assert d.oneline == "plain text  " and d.helptext == 'two\nlines "q" joined'
    assert [line for line in r.diagnostics if line.startswith("[")] == [
        "[a.conf:6] Error: pmLoadDerivedConfig: attribute (bogus) is unknown for metric (m)",
        "[a.conf:7] Error: pmLoadDerivedConfig: duplicate value for attribute (oneline) of metric (m)",
        "[a.conf:8] Error: pmLoadDerivedConfig: cannot set attribute, derived metric (n) not defined",
        "[a.conf:9] Error: pmLoadDerivedConfig: duplicate value for attribute (helptext) of metric (event.flags)",
        "[a.conf:10] Error: pmLoadDerivedConfig: attribute value missing",
        "[a.conf:11] Error: pmLoadDerivedConfig: attribute name missing"]


def test_config_extra_text_and_termination() -> None:
    """DERIVE-CFG-8: extra text after the value; the byte libpcp skips; no closing quote."""
    r = _cfg("m = 1\nm(oneline) = 'x' trailing\nm(helptext) = \"a\nb\"xy\n")
    assert r.diagnostics == [
        "[a.conf:2] Warning: pmLoadDerivedConfig: extra text (trailing) after attribute value will be ignored",
        "[a.conf:3] Warning: pmLoadDerivedConfig: extra text (y) after attribute value will be ignored"]
    r = _cfg("m = 1\nm(helptext) = \"a\nb\"x\nq = 2\n")
    assert r.stderr == "" and r.status == 2
    r = _cfg("m = 1\nm(helptext) = 'open\nx = 2\n")
    assert r.diagnostics == ["[a.conf:2] Error: pmLoadDerivedConfig: missing termination (') for value"]
    assert r.status == 1


def test_config_continuation_by_profile() -> None:
    """DERIVE-CFG-4: "\\" joins lines in 6.3 only."""
    text = "d.a = 1 +\\\n  2\nd.b = x y\n"
    r = _cfg(text, P63)
    assert r.status == 1 and r.definitions[0].expr == "1 +  2"
    assert r.diagnostics[0].startswith("[a.conf:3] ")
    r = _cfg(text, P60)
    assert r.status == 0
    assert r.diagnostics[:4] == ["[a.conf:1] Error: pmRegisterDerived(d.a, ...) syntax error",
                                 " 1 +\\", "    ^", "Illegal character"]
    assert r.diagnostics[4] == "[a.conf:2] Error: pmLoadDerivedConfig: missing ``='' after derived metric name"


def test_config_line_numbers_after_multiline_values() -> None:
    """DERIVE-CFG-10: 6.0.3 numbers the lines after a multi-line value one too low."""
    text = 'm = 1\nm(helptext) = "1\n2\n3"\nbad = x y\n'
    assert _cfg(text, P63).diagnostics[0].startswith("[a.conf:5] ")
    assert _cfg(text, P60).diagnostics[0].startswith("[a.conf:4] ")


def test_config_state_is_shared() -> None:
    """DERIVE-CFG-11, DERIVE-SYN-9, DERIVE-LEX-11 across lines."""
    r = _cfg("a = 1 ? novalue() : novalue()\nb = matchinst(/x/, y / z)\nc = p / q\n")
    assert r.status == 1
    assert r.definitions[0].tree == ast.Call(0, "anon", ast.Metric(5, "PM_TYPE_U32"))
    assert r.definitions[2].error.message == "unterminated pattern"


def test_load_path(tmp_path: Path) -> None:
    """DERIVE-CFG-1: ":"-separated files and directories; the first missing one stops."""
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "a.conf").write_text("a = 1\n")
    (tmp_path / "d" / "x.conf").write_text("x = 1\n")
    (tmp_path / "d" / "e" / "y.conf").write_text("y = 2\nz = x y\n")
    r = load_path(f"{tmp_path}/a.conf:{tmp_path}/d:", P63)
    assert r.status == 3 and sorted(d.name for d in r.definitions if d.registered) == ["a", "x", "y"]
    assert f"[{tmp_path}/d/e/y.conf:2] " in r.stderr
    r = load_path(f"{tmp_path}/a.conf:{tmp_path}/nope:{tmp_path}/d", P63)
    assert r.status == -2 and [d.name for d in r.definitions] == ["a"]
    assert load_path(f"{tmp_path}/a.conf::{tmp_path}/d", P63).status == -2
    reg = Registry(P63)
    load_path(f"{tmp_path}/a.conf", P63, reg)
    assert load_path(f"{tmp_path}/a.conf", P63, reg).stderr.endswith("Duplicate global derived metric name\n")


@settings(max_examples=200, deadline=3000, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_config_never_raises(data) -> None:
    """Any file content becomes definitions and diagnostics, never an exception."""
    profile = data.draw(st.sampled_from((P60, P63)))
    text = data.draw(st.one_of(config_texts(profile), st.binary(max_size=300)))
    r = read_config(text, profile, "f.conf")
    assert r.status == sum(d.registered for d in r.definitions)
    assert isinstance(r.diagnostics, list)
