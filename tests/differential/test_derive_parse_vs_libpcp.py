"""The derived-metric parser and config reader against the real libpcp (spec/derive-grammar.md).

libpcp 6.0.3 on the host models the ``pcp-6.0`` profile, libpcp 6.3.x in the trixie
chroot the ``pcp-6.3`` profile. Each test sends many texts to one libpcp process
(tests/differential/libpcp/derive_bridge.py). The property tests run their examples twice with the
same derandomised seed: once to collect the texts and ask libpcp about all of them in one
batch, then to compare; a text not in the batch (while shrinking) is asked on its own.
Set PCPCONFORM_DERIVE_EXAMPLES to run more examples (default 300 per version).
"""

from __future__ import annotations

import ctypes
import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.extra.derive_strategies import config_texts, expressions, patterns, units_strings, valid_expressions
from pcpconform.oracles.derive.config import load_path, read_config
from pcpconform.oracles.derive.parser import DeriveSyntaxError, Session, format_errmsg, parse, unparse
from pcpconform.oracles.derive.profiles import PROFILES
from pcpconform.oracles.derive.units_str import UnitsError, parse_units_str
from tests.conftest import needs_libpcp
from tests.differential.libpcp import bridge, derive_bridge
from tests.unit.test_derive_parse import SHAPES, SYNTAX_ERRORS

pytestmark = [pytest.mark.libpcp, needs_libpcp]

EXAMPLES = int(os.environ.get("PCPCONFORM_DERIVE_EXAMPLES", "300"))
VERSIONS = [pytest.param(v, marks=pytest.mark.skipif(not derive_bridge.available(v),
                                                      reason=f"no libpcp {v}"))
            for v in derive_bridge.VERSIONS]
#: put libpcp back into a fresh process's state: clear the matchinst mode (a completed
#: matchinst() call, DERIVE-LEX-11), then its saved tree (a reported syntax error, DERIVE-SYN-9)
RESET = ["matchinst(/r/, r)", ")"]

#: texts beyond the unit-test tables: surprises, near-misses, odd bytes; in this order
#: (some depend on the parser state the previous ones leave, DERIVE-LEX-11, DERIVE-SYN-9)
EXTRA: list[str | bytes] = [
    "a", "a + b", "(a", "(a))", "((a)", "()", "(())", "( )", "avg()", "avg(", "anon(",
    "delta(x)", "delta(x + y)", "delta()", "rate(sum(x))", "instant(x)", "instant(1)",
    "defined(x)", "scalar(x)", "scalar()", 'rescale(x, "Kbyte")', 'rescale(x "Kbyte")',
    "rescale(x,", 'rescale(x, "count x 10^3")', 'rescale(x, "sec^2")', 'rescale(x, "")',
    'rescale(x, "1.5e3 sec")', "matchinst(/a/, x)", "matchinst(!/a/, x)", "matchinst(",
    "matchinst(/a{2,1}/, x)", "matchinst(/a/, x) / 2", "x / 2", "matchinst(/a", "x / 2",
    "matchinst(/a/, x)", "x / 2", "mkconst(1, type=32)",
    'mkconst(1, type="U64", semantics=counter, units="Kbyte")', "mkconst(1.5, type=double)",
    "mkconst(1.5, type=float)", "mkconst(1,)", "mkconst(1, indom=NULL)", "mkconst(1, meta=x)",
    "novalue(type=32)", "novalue(meta=x)", "novalue(", "novalue(foo)", "a ? b : novalue()",
    "a ? novalue() : novalue()", "x", "a ? novalue() : novalue()", "novalue() + 1",
    "novalue", "1.5e3", "1.", ".5", ".", "..", "1.2.3", "0x10", "4294967295",
    "00000000000000000000004294967295", '"str"', '"unterminated', "a @ b", "a ~ b",
    "a ` b", "a ; b", "a # b", "a ' b", "a { b", "a } b", "avg (x)", "semantics", "units",
    "indom", "a.b.c", "_a", "a_b.c_1", "!a>b||c<d", "a = b", "a <> b", "a >< b", "a !== b",
    "a + + b", "a - - b", "(((((a)))))", "a ? (b : c)", "a : b", "a ? b : c : d", "a[",
    "a[]", "a[ ]", "[x] + 1", "(1)[y]", "(a[x])[y]", "delta(a)[x]", "a\tb", "a\nb",
    "a +\n b", " \t a \n", b"1 + 2 \xff junk", b"a\xffb", b"\xff", b"a\0b", b"a + \x80",
    "a[é] + é", 'rescale(x, "é")', "matchinst(/é/, x)", "é", b"mkconst(1, type=\xc3)",
    "(" * 4998 + "a" + ")" * 4998, "(" * 9998 + "a" + ")" * 9998, "-" * 9997 + "a",
    "-" * 9998 + "a", "!" * 10001, "a" + " + a" * 5000, "a ? " * 3000 + "b",
]


def _mine(text: str | bytes, profile, session: Session) -> dict:
    try:
        parse(text, profile, session)
    except DeriveSyntaxError as e:
        return {"ok": False, "pos": e.pos, "msg": e.message if e.has_message else None}
    return {"ok": True, "pos": None, "msg": None}


def _aborts(text: str | bytes, profile) -> bool:
    try:
        parse(text, profile)
    except DeriveSyntaxError as e:
        return e.aborts
    return False


def _compare(texts: list, version: str) -> list[str]:
    """Run ``texts`` in order through libpcp and through the parser with one Session."""
    profile = PROFILES[derive_bridge.PROFILE_OF[version]]
    real = derive_bridge.register(texts, version)
    session = Session()
    return [f"{t!r}: libpcp {r}, pcpconform {m}" for t, r in zip(texts, real)
            if r != (m := _mine(t, profile, session))]


@pytest.mark.parametrize("version", VERSIONS)
def test_hand_table(version: str) -> None:
    """Every text of the tables, each from a fresh state; pinned values are libpcp's
    (DERIVE-LEX-*, DERIVE-SYN-2..-17)."""
    profile = PROFILES[derive_bridge.PROFILE_OF[version]]
    texts = [t for t, *_ in SYNTAX_ERRORS] + [t for t, *_ in SHAPES] + EXTRA
    texts = [t for t in texts if not _aborts(t, profile)]
    batch = [x for t in texts for x in (*RESET, t)]
    assert _compare(batch, version) == []
    real = derive_bridge.register(batch, version)[2::3]
    got = dict(zip(texts, real))
    for text, names, pos, message in SYNTAX_ERRORS:
        if profile.name in names:
            assert got[text] == {"ok": False, "pos": pos, "msg": message}, text
    for text, names, _ in SHAPES:
        if profile.name in names:
            assert got[text]["ok"], text


@pytest.mark.parametrize("version", VERSIONS)
def test_sequence_with_carried_state(version: str) -> None:
    """The same texts in one sequence, so that state carries over (DERIVE-LEX-11, DERIVE-SYN-9)."""
    profile = PROFILES[derive_bridge.PROFILE_OF[version]]
    texts = [t for t in EXTRA + [t for t, *_ in SYNTAX_ERRORS] if not _aborts(t, profile)]
    assert _compare(texts, version) == []


@pytest.mark.parametrize("version", VERSIONS)
def test_register_derived_metric_message(version: str) -> None:
    """pmRegisterDerivedMetric's *errmsg (DERIVE-SYN-17)."""
    profile = PROFILES[derive_bridge.PROFILE_OF[version]]
    texts = ["a +", "", "+a", "1e3", "sum (x)", "a", "a b", "   ", "a\tb", "(",
             "matchinst(/[/, a)", "mkconst(1.5, type=32)", "a[é] + é"]
    real = derive_bridge.errmsg(texts, version)
    session = Session()
    for k, (text, r) in enumerate(zip(texts, real)):
        try:
            parse(text, profile, session)
            mine = {"rc": 0, "errmsg": None}
        except DeriveSyntaxError as e:
            mine = {"rc": -1, "errmsg": format_errmsg(f"d.e{k}", text, e)}
        assert mine == r, text


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("text", ["anon(foo)", 'rescale(x, "time-9 / sec")', 'mkconst(1, units="time-7^0")'])
def test_inputs_that_abort_libpcp(version: str, text: str) -> None:
    """The parser flags the texts on which libpcp kills the process (DERIVE-SYN-7, -10)."""
    profile = PROFILES[derive_bridge.PROFILE_OF[version]]
    assert _aborts(text, profile)
    with pytest.raises(bridge.LibpcpError) as info:
        derive_bridge.register([text], version)
    assert info.value.returncode == -6          # SIGABRT


# --- property tests with batched libpcp answers ----------------------------------------------

class _Oracle:
    """libpcp's verdict per text, from a fresh state, asked in batches."""

    def __init__(self, version: str):
        self.version = version
        self.cache: dict = {}
        self.wanted: list = []
        self.collecting = False

    def prefetch(self) -> None:
        todo = [t for t in dict.fromkeys(self.wanted) if t not in self.cache]
        self.wanted = []
        for i in range(0, len(todo), 2000):
            chunk = todo[i:i + 2000]
            real = derive_bridge.register([x for t in chunk for x in (*RESET, t)], self.version)
            self.cache.update(zip(chunk, real[2::3]))

    def __call__(self, text):
        if text not in self.cache:
            self.wanted.append(text)
            self.prefetch()
        return self.cache[text]


def _two_phase(oracle: _Oracle, test) -> None:
    oracle.collecting = True
    test()
    oracle.prefetch()
    oracle.collecting = False
    test()


def _check_text(oracle: _Oracle, profile, text) -> None:
    try:
        tree = parse(text, profile)
        mine = {"ok": True, "pos": None, "msg": None}
    except DeriveSyntaxError as e:
        if e.aborts:
            return
        tree = None
        mine = {"ok": False, "pos": e.pos, "msg": e.message if e.has_message else None}
    printed = unparse(tree) if tree is not None else None
    if oracle.collecting:
        oracle.wanted += [text] + ([printed] if printed is not None else [])
        return
    assert oracle(text) == mine, text
    if printed is not None:
        # the tree's shape, fully parenthesised, is an expression libpcp accepts too
        assert oracle(printed)["ok"], (text, printed)
        assert unparse(parse(printed, profile)) == printed


_SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                     suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("version", VERSIONS)
def test_generated_expressions(version: str) -> None:
    """Grammar-generated texts with injected faults (DERIVE-SYN-*, DERIVE-LEX-*)."""
    profile = PROFILES[derive_bridge.PROFILE_OF[version]]
    oracle = _Oracle(version)

    @_SETTINGS
    @given(expressions(profile))
    def run(text: str) -> None:
        _check_text(oracle, profile, text)

    _two_phase(oracle, run)


@pytest.mark.parametrize("version", VERSIONS)
def test_generated_valid_expressions(version: str) -> None:
    """Well-formed texts; accepted trees print back to texts libpcp accepts (DERIVE-SYN-2..-4)."""
    profile = PROFILES[derive_bridge.PROFILE_OF[version]]
    oracle = _Oracle(version)

    @_SETTINGS
    @given(valid_expressions(profile, 5))
    def run(text: str) -> None:
        _check_text(oracle, profile, text)

    _two_phase(oracle, run)


@pytest.mark.parametrize("version", VERSIONS)
def test_generated_bytes(version: str) -> None:
    """Arbitrary bytes, including NUL, 0xff and non-ASCII (DERIVE-LEX-1..-3)."""
    profile = PROFILES[derive_bridge.PROFILE_OF[version]]
    oracle = _Oracle(version)
    pieces = st.one_of(st.binary(min_size=1, max_size=1),
                       st.sampled_from([b"sum(", b"matchinst(", b"mkconst(", b"novalue(", b"type",
                                        b"/a/", b'"sec"', b"[x]", b"4294967296", b"\xff", b"a"]))

    @_SETTINGS
    @given(st.lists(pieces, max_size=12).map(b"".join))
    def run(text: bytes) -> None:
        _check_text(oracle, profile, text)

    _two_phase(oracle, run)


@pytest.mark.parametrize("version", VERSIONS)
def test_generated_patterns_and_units(version: str) -> None:
    """matchinst patterns through glibc's regcomp and units through pmParseUnitsStr, as
    parsed by each libpcp (DERIVE-SYN-10, -11)."""
    profile = PROFILES[derive_bridge.PROFILE_OF[version]]
    oracle = _Oracle(version)

    @_SETTINGS
    @given(st.one_of(
        patterns().map(lambda p: b"matchinst(/" + p.replace(b"\\", b"\\\\").replace(b"/", b"\\/")
                       + b"/, x)"),
        units_strings().map(lambda u: f'rescale(x, "{u}")'.encode())))
    def run(text: bytes) -> None:
        _check_text(oracle, profile, text)

    _two_phase(oracle, run)


def _host_pmparseunitsstr():
    lib = ctypes.CDLL("libpcp.so.3")
    lib.pmParseUnitsStr.argtypes = [ctypes.c_char_p, ctypes.c_void_p,
                                    ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_char_p)]

    def call(s: bytes):
        u, m, e = ctypes.c_uint32(), ctypes.c_double(), ctypes.c_char_p()
        if lib.pmParseUnitsStr(s, ctypes.byref(u), ctypes.byref(m), ctypes.byref(e)) < 0:
            return ("error", e.value.decode())
        v = u.value          # pmUnits bit fields, x86-64 order: pad:8 then from bit 8 upwards

        def sgn(x: int) -> int:
            return x - 16 if x >= 8 else x
        return ("ok", sgn(v >> 28 & 15), sgn(v >> 24 & 15), sgn(v >> 20 & 15),
                v >> 16 & 15, v >> 12 & 15, sgn(v >> 8 & 15), m.value)
    return call


@settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
@given(units_strings())
def test_units_against_pmparseunitsstr(text: str) -> None:
    """units_str.parse_units_str is libpcp 6.0.3's pmParseUnitsStr (DERIVE-SYN-10)."""
    real = _PMPARSE(text.encode())
    try:
        u = parse_units_str(text)
        mine = ("ok", u.dim_space, u.dim_time, u.dim_count, u.scale_space, u.scale_time,
                u.scale_count, u.multiplier)
    except UnitsError as e:
        mine = ("error", e.message)
    assert real[:7] == mine[:7]
    if real[0] == "ok":
        assert real[7] == mine[7] or (math.isnan(real[7]) and math.isnan(mine[7])) \
            or math.isclose(real[7], mine[7], rel_tol=1e-12)


_PMPARSE = _host_pmparseunitsstr() if bridge.HAVE_LIBPCP else None


# --- configuration files ---------------------------------------------------------------------

CONFIGS: list[str | bytes] = [
    "a = 1\n", "a = 1", "a = 1\nb = 2", "# comment\na = 1\n", " # indented\na = 1\n",
    "\n\na = 1\n\n", " \na = 1\n", "\t\na = 1\n", "a = 1 +\\\n 2\n",
    "a = 1 + \\\n\\\n 2\nb = x y\n", "a = sum (x)\n", "a = sum\t(x)\n", "a=\n", "a =   \n",
    "= 1\n", " = 1\n", "1a = 1\n", "a..b = 1\n", "a. = 1\n", "a-b = 1\n", "a = 1\na = 2\n",
    "event.flags = 1\n", "a(oneline) = hello\n", "a = 1\na(oneline) = hello world  \n",
    "a = 1\na(oneline) = \"hello\"\n", "a = 1\na(oneline) = \"hello\" trailing\n",
    "a = 1\na(oneline) = 'hel\\'lo'\n", "a = 1\na(helptext) = \"line1\nline2\nline3\"\nb = x y\n",
    "a = 1\na(helptext) = \"line1\nline2\" extra\nb = x y\n",
    "a = 1\na(helptext) = \"line1\nline2\"x extra\nb = x y\n",
    "a = 1\na(helptext) = \"line1\\\nline2\"\nb = x y\n", "a = 1\na(helptext) = \"line1\nline2\n",
    "a = 1\na(helptext) = \"\n", "a = 1\na(helptext) = \n", "a = 1\na() = x\n",
    "a = 1\na( ) = x\n", "a = 1\na(bogus) = x\n", "a = 1\na(oneline) = x\na(oneline) = y\n",
    "b(oneline) = x\n", "a = 1\na(oneline = x\n", "a = 1\naoneline) = x\n",
    "a = 1\na)oneline( = x\n", "a = 1\n( a ) = x\n", "event.flags(oneline) = x\n",
    "event.missed(helptext) = x\n", "no equals here\n", "a = matchinst(/x/, b / c)\nd = e / f\n",
    "a = 1 ? novalue() : novalue()\n", "a = delta(sum(x))\n", "a = 1e3\n", "a = \n",
    "  a  =  b  \n", "a = b\\\n", "a = b\\", "#a = b\\\nc = d\n",
    "a = 1\na(oneline) = \"x\ny\" z\nb = 2\nc = x y\n", "a = 1\na(helptext) = 'it''s'\n",
    "m = 1\nm(helptext) = \"1\n2\n3\"\nbad = x y\n", "m = 1\nm(helptext) = \"a\nb\"xy\n",
    "m = 1\nm(helptext) = \"a\nb\"x\nq = 2\n", "m = 1\nm(helptext) = 'open\nx = 2\n",
    "m = 1\nm(helptext) = \"a\nb\"\nm(oneline) = \"c\nd\ne\" f\nm(bogus) = 1\nz = x y\n",
    "y =\tsum (x)\nz = 1e3\nevent.flags = 1\n", "#control option_novalue=1\na = 1\n",
    "d.a = a + 1\nd.a(oneline) = \"hello\"\nd.a(helptext) = 'multi\nline'\n  # indented\n \n",
    b"a = 1\xff + 2\nb = \x80\n", b"a = 1\0 junk\nb = 2\0\n", "a = 1\r\nb = 2\r\n",
    "a = b \\\n+ c\n", "x = 1\\\n", "\\\n\\\n\nq = 1\n", "a.b.c = rate(x)\n",
]


def _config_mine(text, profile) -> dict:
    r = read_config(text, profile, "a.conf")
    return {"rc": r.status, "stderr": r.stderr,
            "metrics": [{"name": d.name, "oneline": d.oneline, "helptext": d.helptext}
                        for d in r.definitions if d.registered]}


def _config_compare(texts: list, version: str) -> list[str]:
    profile = PROFILES[derive_bridge.PROFILE_OF[version]]
    real = derive_bridge.load_config([{"files": {"a.conf": t}, "path": "a.conf"} for t in texts],
                                     version)
    out = []
    for t, r in zip(texts, real):
        r = {k: r[k] for k in ("rc", "stderr", "metrics")}
        if r != (m := _config_mine(t, profile)):
            out.append(f"{t!r}:\n libpcp     {r}\n pcpconform {m}")
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_config_table(version: str) -> None:
    """Config files: comments, blank lines, continuation, attributes, errors, line numbers
    (DERIVE-CFG-2..-11)."""
    assert _config_compare(CONFIGS, version) == []


PATH_CASES = [
    {"files": {"a.conf": "a = 1\n", "b.conf": "b = 2\nbad = x y\n"}, "path": "a.conf:b.conf"},
    {"files": {"a.conf": "a = 1\n"}, "path": "a.conf:missing.conf:a.conf"},
    {"files": {"a.conf": "a = 1\n"}, "path": "missing.conf"},
    {"files": {"a.conf": "a = 1\n"}, "path": "a.conf::a.conf"},
    {"files": {"a.conf": "a = 1\n"}, "path": "a.conf:"},
    {"files": {"a.conf": "a = 1\n"}, "path": ":a.conf"},
    {"files": {"a.conf": "a = 1\n"}, "path": ""},
    {"files": {"d/x.conf": "x = 1\n", "d/y.conf": "y = 2\nz = sum (q)\n",
               "d/e/z.conf": "w = 3\nw = 4\n", "d/f/g.conf": "g = 1"}, "path": "d"},
    {"files": {"d/x.conf": "x = 1\n"}, "dirs": ["d/empty"], "path": "d:d"},
    {"files": {"a.conf": "a = 1\n", "b.conf": "a(oneline) = from b\n"}, "path": "a.conf:b.conf"},
    {"files": {"a.conf": "a = matchinst(/x/, q / r)\n", "b.conf": "b = c / d\n"},
     "path": "a.conf:b.conf"},
    {"files": {"a.conf": "a = 1\n", "b.conf": "b = 1 ? novalue() : novalue()\n"},
     "path": "a.conf:b.conf"},
]


@pytest.mark.parametrize("version", VERSIONS)
def test_config_paths(version: str, tmp_path: Path) -> None:
    """":"-separated paths, directories in readdir order, errors (DERIVE-CFG-1, -11)."""
    profile = PROFILES[derive_bridge.PROFILE_OF[version]]
    real = derive_bridge.load_config(PATH_CASES, version)
    for k, (case, r) in enumerate(zip(PATH_CASES, real)):
        top = tmp_path / str(k)
        top.mkdir()
        for rel, content in case["files"].items():
            (top / rel).parent.mkdir(parents=True, exist_ok=True)
            (top / rel).write_text(content)
        for rel in case.get("dirs", ()):
            (top / rel).mkdir(parents=True, exist_ok=True)
        order = r["listdir"]        # libpcp's readdir() order in its own copy
        cwd = os.getcwd()
        os.chdir(top)
        try:
            res = load_path(case["path"], profile, listdir=lambda d: order[os.path.normpath(d)])
        finally:
            os.chdir(cwd)
        mine = {"rc": res.status, "stderr": res.stderr,
                "metrics": [{"name": d.name, "oneline": d.oneline, "helptext": d.helptext}
                            for d in res.definitions if d.registered]}
        assert mine == {key: r[key] for key in ("rc", "stderr", "metrics")}, case


@pytest.mark.parametrize("version", VERSIONS)
def test_generated_configs(version: str) -> None:
    """Generated config files (DERIVE-CFG-*)."""
    profile = PROFILES[derive_bridge.PROFILE_OF[version]]
    cache: dict = {}
    wanted: list = []
    collecting = [True]

    @settings(max_examples=max(EXAMPLES // 3, 20), deadline=None, derandomize=True,
              database=None, suppress_health_check=list(HealthCheck))
    @given(config_texts(profile))
    def run(text: str) -> None:
        if any(e.aborts for e in _config_errors(text, profile)):
            return
        if collecting[0]:
            wanted.append(text)
            return
        if text not in cache:
            cache[text] = _fetch_configs([text], version)[0]
        assert cache[text] == _config_mine(text, profile), text

    run()
    todo = list(dict.fromkeys(wanted))
    cache.update(zip(todo, _fetch_configs(todo, version)))
    collecting[0] = False
    run()


def _config_errors(text, profile) -> list[DeriveSyntaxError]:
    return [d.error for d in read_config(text, profile, "a.conf").definitions if d.error]


def _fetch_configs(texts: list, version: str) -> list[dict]:
    real = derive_bridge.load_config([{"files": {"a.conf": t}, "path": "a.conf"} for t in texts],
                                     version)
    return [{k: r[k] for k in ("rc", "stderr", "metrics")} for r in real]
