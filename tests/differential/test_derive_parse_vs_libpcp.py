"""The derived-metric parser and config reader against each real libpcp (the ``referee``
fixture: 6.0.3, 6.3.8, 7.x; spec/derive-grammar.md).

Each test sends many texts to one libpcp process (tests/differential/libpcp/
derive_bridge.py), each from a fresh parser state. When a batch kills libpcp, it is
bisected (tests/differential/libpcp/crashes.py) so that only the texts that kill it are
left out, and each of those must be one the parser says aborts (DERIVE-SYN-7, -10) with
SIGABRT; a text the parser says aborts must kill libpcp. The property tests run their
examples twice with the same derandomised seed: once to collect the texts and ask libpcp
about all of them in one batch, then to compare. Set PCPCONFORM_DERIVE_EXAMPLES to run
more examples (default 300 per referee).
"""

from __future__ import annotations

import math
import os
import signal
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.extra.derive_strategies import config_texts, expressions, patterns, units_strings, valid_expressions
from pcpconform.oracles.derive.config import load_path, read_config
from pcpconform.oracles.derive.parser import (
    DeriveSyntaxError,
    Session,
    format_errmsg,
    parse,
    process_session,
    unparse,
)
from pcpconform.oracles.derive.profiles import PROFILES, Profile
from pcpconform.oracles.derive.units_str import UnitsAbort, UnitsError, parse_units_str
from tests.derive_cases import rows_for
from tests.differential.libpcp import derive_bridge, derive_eval_bridge
from tests.differential.libpcp.crashes import isolate
from tests.differential.libpcp.referees import Referee

pytestmark = [pytest.mark.libpcp]

EXAMPLES = int(os.environ.get("PCPCONFORM_DERIVE_EXAMPLES", "300"))
SIGABRT = -signal.SIGABRT
Text = str | bytes


def _profile(referee: Referee) -> Profile:
    return PROFILES[referee.derive_profile]


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


def _mine(text: Text, profile: Profile, session: Session) -> dict[str, Any]:
    try:
        parse(text, profile, session)
    except DeriveSyntaxError as e:
        if e.aborts:
            return {"crash": SIGABRT}
        return {"ok": False, "pos": e.pos, "msg": e.message if e.has_message else None}
    return {"ok": True, "pos": None, "msg": None}


def fresh(texts: list[Text], referee: Referee) -> dict[Text, dict[str, Any]]:
    """libpcp's verdict on each text from a fresh parser state, one process per batch of
    2000; a text that kills libpcp (found by bisection) gets {"crash": returncode}."""
    out: dict[Text, dict[str, Any]] = {}
    todo = list(dict.fromkeys(texts))

    def run(ts: list[Text]) -> list[dict[str, Any]]:
        return derive_bridge.register([x for t in ts for x in (*RESET, t)], referee)[2::3]

    for i in range(0, len(todo), 2000):
        answer, alive, crashes = isolate(run, todo[i:i + 2000])
        out.update(zip(alive, answer))
        for c in crashes:
            out.update({t: {"crash": c.returncode} for t in c.items})
    return out


def _sequence(texts: list[Text], referee: Referee) -> list[str]:
    """Run ``texts`` in order through libpcp (one new process) and the parser with one
    Session, as a new process starts it."""
    profile = _profile(referee)
    real = derive_bridge.register(texts, referee)
    session = process_session(profile)
    return [f"{t!r}: libpcp {r}, pcpconform {m}" for t, r in zip(texts, real)
            if r != (m := _mine(t, profile, session))]


def _table_texts() -> list[Text]:
    return [r["text"] for r in rows_for("syntax-errors")] + \
        [r["text"] for r in rows_for("shapes")] + EXTRA


def test_hand_table(referee: Referee) -> None:
    """Every text of the tables, each from a fresh state; pinned values are libpcp's
    (DERIVE-LEX-*, DERIVE-SYN-2..-17). The texts that kill libpcp are exactly those the
    parser says abort (DERIVE-SYN-7, -10)."""
    profile = _profile(referee)
    got = fresh(_table_texts(), referee)
    unmodelled = {r["text"]: r["libpcp"] for r in rows_for("unmodelled", profile.name)}
    for text, theirs in unmodelled.items():         # DERIVE-VER-6: recorded, still unmodelled
        assert got.pop(text) == theirs != _mine(text, profile, Session()), text
    assert [f"{t!r}: libpcp {r}, pcpconform {m}" for t, r in got.items()
            if r != (m := _mine(t, profile, Session()))] == []
    for r in rows_for("syntax-errors", profile.name):
        assert got[r["text"]] == {"ok": False, "pos": r["pos"], "msg": r["msg"]}, r["text"]
    for r in rows_for("shapes", profile.name):
        assert got[r["text"]]["ok"], r["text"]


def test_sequence_with_carried_state(referee: Referee) -> None:
    """The same texts in one sequence, so that state carries over (DERIVE-LEX-11,
    DERIVE-SYN-9); the texts that kill this libpcp from a fresh state are left out."""
    texts = EXTRA + [r["text"] for r in rows_for("syntax-errors")]
    got = fresh(texts, referee)
    unmodelled = {r["text"] for r in rows_for("unmodelled", referee.derive_profile)}
    assert _sequence([t for t in texts if "crash" not in got[t] and t not in unmodelled],
                     referee) == []


def test_first_call_of_a_process(referee: Referee) -> None:
    """DERIVE-SYN-9 at a process's first pmRegisterDerived(): libpcp 7 has registered its
    anonymous event metrics by then, so two novalue()s in a ternary are "accepted" (with
    their anon(PM_TYPE_U32) tree); 6.3.8 rejects them, 6.0.3 has no novalue()
    (``process_session``, switch anon_on_register)."""
    profile = _profile(referee)
    for text in ["1 ? novalue() : novalue()", "a > 1 ? novalue() : novalue()", "a +"]:
        assert derive_bridge.register([text], referee) == [_mine(text, profile, process_session(profile))], text
    if profile.anon_on_register:        # the switch is what this libpcp does, not a label
        assert _mine("1 ? novalue() : novalue()", profile, process_session(profile))["ok"]


def test_register_derived_metric_message(referee: Referee) -> None:
    """pmRegisterDerivedMetric's *errmsg (DERIVE-SYN-17)."""
    profile = _profile(referee)
    texts = ["a +", "", "+a", "1e3", "sum (x)", "a", "a b", "   ", "a\tb", "(",
             "matchinst(/[/, a)", "mkconst(1.5, type=32)", "a[é] + é"]
    real = derive_bridge.errmsg(texts, referee)
    session = Session()
    for k, (text, r) in enumerate(zip(texts, real)):
        try:
            parse(text, profile, session)
            mine = {"rc": 0, "errmsg": None}
        except DeriveSyntaxError as e:
            mine = {"rc": -1, "errmsg": format_errmsg(f"d.e{k}", text, e)}
        assert mine == r, text


#: texts known to abort some libpcp; with every text of the tables the parser flags
ABORTS = ["anon(foo)", "anon(PM_TYPE_STRING)", "anon(PM_TYPE_EVENT)", 'rescale(x, "time-9 / sec")',
          'mkconst(1, units="time-7^0")', 'rescale(x, "time-6^2 / time-8")']


def test_inputs_that_abort_libpcp(referee: Referee) -> None:
    """Each text the parser flags as aborting under any profile, alone in a process: it
    kills this libpcp with SIGABRT exactly when the parser says so under its profile
    (DERIVE-SYN-7, DERIVE-SYN-10, DERIVE-VER-5)."""
    profile = _profile(referee)
    flagged = [t for t in dict.fromkeys(ABORTS + _table_texts())
               if any(_mine(t, p, Session()).get("crash") for p in PROFILES.values())]
    assert len(flagged) >= len(ABORTS)
    for text in flagged:
        try:
            derive_bridge.register([text], referee)
            got = None
        except derive_bridge.LibpcpError as exc:
            got = exc.returncode
        assert got == _mine(text, profile, Session()).get("crash"), text


# --- property tests with batched libpcp answers ----------------------------------------------

class _Oracle:
    """libpcp's verdict per text, from a fresh state, asked in batches."""

    def __init__(self, referee: Referee):
        self.referee = referee
        self.cache: dict[Text, dict[str, Any]] = {}
        self.wanted: list[Text] = []
        self.collecting = False

    def prefetch(self) -> None:
        todo = [t for t in dict.fromkeys(self.wanted) if t not in self.cache]
        self.wanted = []
        self.cache.update(fresh(todo, self.referee))

    def __call__(self, text: Text) -> dict[str, Any]:
        if text not in self.cache:
            self.wanted.append(text)
            self.prefetch()
        return self.cache[text]


def _two_phase(oracle: _Oracle, test: Callable[[], None]) -> None:
    oracle.collecting = True
    test()
    oracle.prefetch()
    oracle.collecting = False
    test()


def _check_text(oracle: _Oracle, profile: Profile, text: Text) -> None:
    mine = _mine(text, profile, Session())
    printed = unparse(parse(text, profile)) if mine.get("ok") else None
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


def test_generated_expressions(referee: Referee) -> None:
    """Grammar-generated texts with injected faults (DERIVE-SYN-*, DERIVE-LEX-*)."""
    profile = _profile(referee)
    oracle = _Oracle(referee)

    @_SETTINGS
    @given(expressions(profile))
    def run(text: str) -> None:
        _check_text(oracle, profile, text)

    _two_phase(oracle, run)


def test_generated_valid_expressions(referee: Referee) -> None:
    """Well-formed texts; accepted trees print back to texts libpcp accepts (DERIVE-SYN-2..-4)."""
    profile = _profile(referee)
    oracle = _Oracle(referee)

    @_SETTINGS
    @given(valid_expressions(profile, 5))
    def run(text: str) -> None:
        _check_text(oracle, profile, text)

    _two_phase(oracle, run)


def test_generated_bytes(referee: Referee) -> None:
    """Arbitrary bytes, including NUL, 0xff and non-ASCII (DERIVE-LEX-1..-3)."""
    profile = _profile(referee)
    oracle = _Oracle(referee)
    pieces = st.one_of(st.binary(min_size=1, max_size=1),
                       st.sampled_from([b"sum(", b"matchinst(", b"mkconst(", b"novalue(", b"type",
                                        b"/a/", b'"sec"', b"[x]", b"4294967296", b"\xff", b"a"]))

    @_SETTINGS
    @given(st.lists(pieces, max_size=12).map(b"".join))
    def run(text: bytes) -> None:
        _check_text(oracle, profile, text)

    _two_phase(oracle, run)


def test_generated_patterns_and_units(referee: Referee) -> None:
    """matchinst patterns through glibc's regcomp and units through pmParseUnitsStr, as
    parsed by each libpcp (DERIVE-SYN-10, -11)."""
    profile = _profile(referee)
    oracle = _Oracle(referee)

    @_SETTINGS
    @given(st.one_of(
        patterns().map(lambda p: b"matchinst(/" + p.replace(b"\\", b"\\\\").replace(b"/", b"\\/")
                       + b"/, x)"),
        units_strings().map(lambda u: f'rescale(x, "{u}")'.encode())))
    def run(text: bytes) -> None:
        _check_text(oracle, profile, text)

    _two_phase(oracle, run)


def _units_mine(text: str, asserts: bool) -> tuple[Any, ...]:
    try:
        u = parse_units_str(text, asserts=asserts)
    except UnitsAbort:
        return ("crash", SIGABRT)
    except UnitsError as e:
        return ("error", e.message)
    return ("ok", u.dim_space, u.dim_time, u.dim_count, u.scale_space, u.scale_time,
            u.scale_count, u.multiplier, u.multiplier_known)


def _units_theirs(reply: dict[str, Any]) -> tuple[Any, ...]:
    if "error" in reply:
        return ("error", reply["error"])
    word = reply["word"]       # pmUnits bit fields, x86-64 order: pad:8 then from bit 8 upwards

    def sgn(x: int) -> int:
        return x - 16 if x >= 8 else x
    mult = struct.unpack(">d", bytes.fromhex(reply["mult"][4:]))[0]
    return ("ok", sgn(word >> 28 & 15), sgn(word >> 24 & 15), sgn(word >> 20 & 15),
            word >> 16 & 15, word >> 12 & 15, sgn(word >> 8 & 15), mult)


def test_units_against_pmparseunitsstr(referee: Referee) -> None:
    """units_str.parse_units_str is each libpcp's pmParseUnitsStr, for 2000 generated
    strings (DERIVE-SYN-10); strings that kill libpcp are those it says abort."""
    asserts = _profile(referee).units_asserts
    texts: list[str] = []

    @settings(max_examples=2000, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(units_strings())
    def collect(text: str) -> None:
        texts.append(text)

    collect()
    texts = list(dict.fromkeys(texts))
    answer, alive, crashes = isolate(
        lambda ts: derive_eval_bridge.pm_derive(referee, {"units": ts})["units"], texts)
    for c in crashes:
        for text in c.items:
            assert _units_mine(text, asserts) == ("crash", c.returncode), text
    for text, reply in zip(alive, answer):
        mine, real = _units_mine(text, asserts), _units_theirs(reply)
        assert real[:7] == mine[:7], text
        if real[0] == "ok" and mine[8]:
            assert real[7] == mine[7] or (math.isnan(real[7]) and math.isnan(mine[7])) \
                or math.isclose(real[7], mine[7], rel_tol=1e-12), text


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


def _config_mine(text: Text, profile: Profile) -> dict[str, Any]:
    if any(e.aborts for e in _config_errors(text, profile)):
        return {"rc": None, "stderr": None, "metrics": None, "signal": SIGABRT}
    r = read_config(text, profile, "a.conf")
    return {"rc": r.status, "stderr": r.stderr,
            "metrics": [{"name": d.name, "oneline": d.oneline, "helptext": d.helptext}
                        for d in r.definitions if d.registered]}


def _config_compare(texts: list[Text], referee: Referee) -> list[str]:
    profile = _profile(referee)
    out = []
    for t, r in zip(texts, _fetch_configs(texts, referee)):
        if r != (m := _config_mine(t, profile)):
            out.append(f"{t!r}:\n libpcp     {r}\n pcpconform {m}")
    return out


def test_config_table(referee: Referee) -> None:
    """Config files: comments, blank lines, continuation, attributes, errors, line numbers
    (DERIVE-CFG-2..-11)."""
    assert _config_compare(CONFIGS, referee) == []


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


def test_config_paths(referee: Referee, tmp_path: Path) -> None:
    """":"-separated paths, directories in readdir order, errors (DERIVE-CFG-1, -11)."""
    profile = _profile(referee)
    real = derive_bridge.load_config(PATH_CASES, referee)
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
            res = load_path(case["path"], profile, listdir=lambda d, o=order: o[os.path.normpath(d)])
        finally:
            os.chdir(cwd)
        mine = {"rc": res.status, "stderr": res.stderr,
                "metrics": [{"name": d.name, "oneline": d.oneline, "helptext": d.helptext}
                            for d in res.definitions if d.registered]}
        assert mine == {key: r[key] for key in ("rc", "stderr", "metrics")}, case


def test_generated_configs(referee: Referee) -> None:
    """Generated config files (DERIVE-CFG-*); each is read in its own libpcp, which must
    die of SIGABRT exactly when the parser says a definition aborts."""
    profile = _profile(referee)
    cache: dict[Text, dict[str, Any]] = {}
    wanted: list[Text] = []
    collecting = [True]

    @settings(max_examples=max(EXAMPLES // 3, 20), deadline=None, derandomize=True,
              database=None, suppress_health_check=list(HealthCheck))
    @given(config_texts(profile))
    def run(text: str) -> None:
        if collecting[0]:
            wanted.append(text)
            return
        if text not in cache:
            cache[text] = _fetch_configs([text], referee)[0]
        assert cache[text] == _config_mine(text, profile), text

    run()
    todo = list(dict.fromkeys(wanted))
    cache.update(zip(todo, _fetch_configs(todo, referee)))
    collecting[0] = False
    run()


def _config_errors(text: Text, profile: Profile) -> list[DeriveSyntaxError]:
    return [d.error for d in read_config(text, profile, "a.conf").definitions if d.error]


def _fetch_configs(texts: list[Text], referee: Referee) -> list[dict[str, Any]]:
    """libpcp's answer per config text; a child libpcp killed by a signal gives that signal
    (pm_derive_parse.py reports the wait status)."""
    real = derive_bridge.load_config([{"files": {"a.conf": t}, "path": "a.conf"} for t in texts],
                                     referee)
    out = []
    for r in real:
        if r.get("rc") is None and os.WIFSIGNALED(r.get("status", 0)):
            out.append({"rc": None, "stderr": None, "metrics": None,
                        "signal": -os.WTERMSIG(r["status"])})
        else:
            out.append({k: r[k] for k in ("rc", "stderr", "metrics")})
    return out
