"""The derived-metric grammar of libpcp (derive_parser.y.in) and its LALR(1) tables.

``GRAMMAR`` is the grammar in lark's notation, one alternative per line, in the order of
libpcp's yacc file, with libpcp's token names. ``ERROR`` is yacc's ``error`` token. A line
tagged ``// pcp-6.0``, ``// pcp-6.3`` or ``// pcp-6.3 pcp-7`` exists only in the grammar
generations it names. The ``//%left`` lines
are yacc's precedence declarations, lowest first. spec/derive-grammar.md includes this
text verbatim (tests/test_derive_parse.py checks it).

lark computes the LALR(1) automaton (LR(0) states and DeRemer-Pennello lookaheads, the
same construction as bison). lark resolves every shift/reduce conflict as a shift, so the
action table is built here instead, as bison builds it: yacc precedence and associativity
(a rule takes the precedence of its last terminal), then bison's default reductions (the
most common reduction of a state, none in a state that shifts ``ERROR``). The default
reductions matter: they decide when the parser reads a lookahead token, and therefore
where libpcp reports an error and which error production fires.

Building the tables takes about 0.1 s and lark's import more, at every start of a derive
command; so the tables of each grammar generation ship frozen in ``tables.json``, keyed by
the SHA-256 of the grammar text they were built from. ``tables()`` uses a frozen table only
when that digest matches the grammar in force, and says which it did in ``TABLE_SOURCES``;
tests/unit/test_derive_tables_frozen.py fails when the file is stale.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcpconform.oracles.derive.profiles import PROFILES, Profile

if TYPE_CHECKING:
    from lark.grammar import Rule as LarkRule

__all__ = ["GRAMMAR", "grammar_text", "Rule", "Tables", "tables", "END", "ERROR"]

END = "$END"        # lark's end marker; libpcp's lexer never returns it (it returns L_EOS)
ERROR = "ERROR"     # yacc's error token

GRAMMAR = r"""
// tokens returned by the lexer (DERIVE-LEX-*); ERROR is yacc's error token
%declare L_UNDEF L_ERROR L_EOS L_PLUS L_MINUS L_STAR L_SLASH L_QUEST L_COLON
%declare L_LPAREN L_RPAREN L_AVG L_COUNT L_DELTA L_MAX L_MIN L_SUM L_ANON L_RATE
%declare L_INSTANT L_LT L_LEQ L_EQ L_GEQ L_GT L_NEQ L_AND L_OR L_NOT L_MKCONST
%declare L_META L_NOVALUE L_RESCALE L_DEFINED L_MATCHINST L_SCALAR L_TYPE L_SEMANTICS
%declare L_UNITS L_ASSIGN L_COMMA L_INTEGER L_DOUBLE L_NAME L_STRING L_INSTNAME
%declare L_PATTERN L_INDOM ERROR

// precedence, lowest first; every level is left-associative (DERIVE-SYN-2)
//%left L_QUEST L_COLON
//%left L_AND L_OR
//%left L_NOT
//%left L_LT L_LEQ L_EQ L_GEQ L_GT L_NEQ
//%left L_PLUS L_MINUS
//%left L_STAR L_SLASH

defn: expr L_EOS                                -> accept
    | expr L_PLUS ERROR                         -> unexpected_plus
    | expr L_STAR ERROR                         -> unexpected_star
    | expr L_SLASH ERROR                        -> unexpected_slash
    | expr L_LPAREN ERROR                       -> unexpected_lparen
    | expr L_RPAREN ERROR                       -> unexpected_rparen
    | expr L_LT ERROR                           -> unexpected_lt
    | expr L_LEQ ERROR                          -> unexpected_leq
    | expr L_EQ ERROR                           -> unexpected_eq
    | expr L_GEQ ERROR                          -> unexpected_geq
    | expr L_GT ERROR                           -> unexpected_gt
    | expr L_NEQ ERROR                          -> unexpected_neq
    | expr L_AND ERROR                          -> unexpected_and
    | expr L_OR ERROR                           -> unexpected_or
    | L_PLUS ERROR                              -> initial_plus
    | L_STAR ERROR                              -> initial_star
    | L_SLASH ERROR                             -> initial_slash
    | L_LPAREN ERROR                            -> initial_lparen
    | L_RPAREN ERROR                            -> initial_rparen
    | L_LT ERROR                                -> initial_lt
    | L_LEQ ERROR                               -> initial_leq
    | L_EQ ERROR                                -> initial_eq
    | L_GEQ ERROR                               -> initial_geq
    | L_GT ERROR                                -> initial_gt
    | L_NEQ ERROR                               -> initial_neq
    | L_AND ERROR                               -> initial_and
    | L_OR ERROR                                -> initial_or
    | L_QUEST ERROR                             -> initial_quest
    | L_COLON ERROR                             -> initial_colon

expr: L_LPAREN expr L_RPAREN                    -> paren
    | L_NAME L_INSTNAME                         -> name_inst
    | L_LPAREN expr L_RPAREN L_INSTNAME         -> paren_inst
    | num                                       -> pass
    | L_NAME                                    -> name
    | func                                      -> pass
    | expr L_PLUS expr                          -> binary
    | expr L_MINUS expr                         -> binary
    | expr L_STAR expr                          -> binary
    | expr L_SLASH expr                         -> binary
    | L_MINUS expr                              -> unary
    | expr L_LT expr                            -> binary
    | expr L_LEQ expr                           -> binary
    | expr L_EQ expr                            -> binary
    | expr L_GEQ expr                           -> binary
    | expr L_GT expr                            -> binary
    | expr L_NEQ expr                           -> binary
    | expr L_QUEST expr L_COLON expr            -> ternary
    | expr L_QUEST novalue L_COLON expr         -> ternary          // pcp-6.3 pcp-7
    | expr L_QUEST expr L_COLON novalue         -> ternary          // pcp-6.3 pcp-7
    | expr L_QUEST novalue L_COLON novalue      -> novalue_twice    // pcp-6.3 pcp-7
    | expr L_AND expr                           -> binary
    | expr L_OR expr                            -> binary
    | L_NOT expr                                -> unary
    | L_NAME ERROR                              -> follow_name
    | expr L_PLUS ERROR                         -> follow_plus
    | expr L_MINUS ERROR                        -> follow_minus
    | expr L_STAR ERROR                         -> follow_star
    | expr L_SLASH ERROR                        -> follow_slash
    | L_MINUS ERROR                             -> follow_neg
    | expr L_LT ERROR                           -> follow_lt
    | expr L_LEQ ERROR                          -> follow_leq
    | expr L_EQ ERROR                           -> follow_eq
    | expr L_GEQ ERROR                          -> follow_geq
    | expr L_GT ERROR                           -> follow_gt
    | expr L_NEQ ERROR                          -> follow_neq
    | expr L_AND ERROR                          -> follow_and
    | expr L_OR ERROR                           -> follow_or
    | L_NOT ERROR                               -> follow_not
    | expr L_QUEST ERROR                        -> follow_quest
    | expr L_QUEST expr L_COLON ERROR           -> follow_colon

novalue: L_NOVALUE L_LPAREN L_RPAREN            -> novalue          // pcp-6.3
    | L_NOVALUE L_LPAREN speclist L_RPAREN      -> novalue_spec     // pcp-6.3
    | L_NOVALUE L_LPAREN ERROR                  -> follow_novalue   // pcp-6.3

// 7.x: a mid-rule action sets the spec defaults before novalue()'s parameters
novalue_mid:                                    -> mid              // pcp-7

novalue: L_NOVALUE L_LPAREN novalue_mid novalueparam -> novalue_param  // pcp-7
    | L_NOVALUE L_LPAREN ERROR                  -> follow_novalue   // pcp-7

novalueparam: L_RPAREN                          -> novalue_none     // pcp-7
    | speclist L_RPAREN                         -> novalue_specs    // pcp-7

regexpr: opt_bang L_PATTERN                     -> regexpr

opt_bang: L_NOT                                 -> bang
    |                                           -> no_bang

num: L_INTEGER                                  -> integer
    | L_DOUBLE                                  -> double
    | L_MKCONST L_LPAREN L_INTEGER L_COMMA mkconst_mid speclist L_RPAREN -> mkconst
    | L_MKCONST L_LPAREN L_DOUBLE L_COMMA mkconst_mid speclist L_RPAREN  -> mkconst_double
    | L_MKCONST L_LPAREN L_INTEGER ERROR        -> follow_mkconst   // pcp-6.3 pcp-7

// yacc's mid-rule action in the two mkconst rules (resets the spec defaults)
mkconst_mid:                                    -> mid

speclist: speclist L_COMMA spec                 -> speclist_more
    | spec                                      -> speclist_one

spec: L_TYPE L_ASSIGN specval                   -> spec_type
    | L_SEMANTICS L_ASSIGN specval              -> spec_semantics
    | L_UNITS L_ASSIGN specval                  -> spec_units
    | L_INDOM L_ASSIGN specval                  -> spec_indom       // pcp-7
    | L_META L_ASSIGN L_NAME                    -> spec_meta        // pcp-6.3 pcp-7

specval: L_STRING                               -> specval
    | L_NAME                                    -> specval
    | L_INTEGER                                 -> specval
    | L_DOUBLE                                  -> specval          // pcp-7

func: L_ANON L_LPAREN L_NAME L_RPAREN           -> call_name
    | L_AVG L_LPAREN L_NAME L_RPAREN            -> call_name
    | L_COUNT L_LPAREN L_NAME L_RPAREN          -> call_name
    | L_DELTA L_LPAREN L_NAME L_RPAREN          -> call_name        // pcp-6.0
    | L_DELTA L_LPAREN expr L_RPAREN            -> call_expr        // pcp-6.3 pcp-7
    | L_MAX L_LPAREN L_NAME L_RPAREN            -> call_name
    | L_MIN L_LPAREN L_NAME L_RPAREN            -> call_name
    | L_SUM L_LPAREN L_NAME L_RPAREN            -> call_name
    | L_RATE L_LPAREN L_NAME L_RPAREN           -> call_name        // pcp-6.0
    | L_RATE L_LPAREN expr L_RPAREN             -> call_expr        // pcp-6.3 pcp-7
    | L_INSTANT L_LPAREN L_NAME L_RPAREN        -> call_name        // pcp-6.0
    | L_INSTANT L_LPAREN expr L_RPAREN          -> call_expr        // pcp-6.3 pcp-7
    | L_DEFINED L_LPAREN L_NAME L_RPAREN        -> call_name
    | L_RESCALE L_LPAREN expr L_COMMA L_STRING L_RPAREN -> rescale
    | L_MATCHINST L_LPAREN regexpr L_COMMA expr L_RPAREN -> matchinst
    | L_SCALAR L_LPAREN expr L_RPAREN           -> call_expr
    | L_ANON L_LPAREN ERROR                     -> follow_anon
    | L_AVG L_LPAREN ERROR                      -> follow_avg
    | L_COUNT L_LPAREN ERROR                    -> follow_count
    | L_DELTA L_LPAREN ERROR                    -> follow_delta
    | L_MAX L_LPAREN ERROR                      -> follow_max
    | L_MIN L_LPAREN ERROR                      -> follow_min
    | L_SUM L_LPAREN ERROR                      -> follow_sum
    | L_RATE L_LPAREN ERROR                     -> follow_rate
    | L_INSTANT L_LPAREN ERROR                  -> follow_instant
    | L_RESCALE L_LPAREN ERROR                  -> follow_rescale
    | L_RESCALE L_LPAREN expr L_COMMA ERROR     -> follow_rescale_expr
    | L_MATCHINST L_LPAREN ERROR                -> follow_matchinst
    | L_MATCHINST L_LPAREN regexpr ERROR        -> follow_matchinst_filter
    | L_MATCHINST L_LPAREN regexpr L_COMMA ERROR -> follow_matchinst_comma
    | L_SCALAR L_LPAREN ERROR                   -> follow_scalar
"""

_TAG = re.compile(r"//\s*((?:pcp-[0-9.]+\s*)+)$")
_PREC = re.compile(r"^//%(left|right|nonassoc)\s+(.*)$")


def grammar_text(profile: Profile) -> str:
    """GRAMMAR with the lines of other profiles removed."""
    out = []
    for line in GRAMMAR.splitlines():
        m = _TAG.search(line)
        if m and profile.syntax not in m.group(1).split():
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def precedence() -> dict[str, tuple[int, str]]:
    """Token -> (level, associativity) from the ``//%left`` lines; level 1 is the lowest."""
    prec: dict[str, tuple[int, str]] = {}
    level = 0
    for line in GRAMMAR.splitlines():
        m = _PREC.match(line.strip())
        if m:
            level += 1
            for tok in m.group(2).split():
                prec[tok] = (level, m.group(1))
    return prec


@dataclass(frozen=True)
class Rule:
    number: int             # order in the grammar, as bison numbers rules
    lhs: str
    rhs: tuple[str, ...]
    action: str             # the lark alias


@dataclass
class Tables:
    """bison-style tables: explicit actions, default reductions and gotos."""

    rules: list[Rule]
    # state -> token -> ("s", state) | ("r", rule number); entries equal to the
    # default reduction are left out, as bison leaves them out
    action: list[dict[str, tuple[str, int]]]
    default: list[int | None]       # state -> default reduction rule number
    goto: list[dict[str, int]]      # state -> nonterminal -> state
    start: int
    terminals: frozenset[str]

    def reads_lookahead(self, state: int) -> bool:
        """False where bison reduces without looking at the next token (yypact default)."""
        return bool(self.action[state])


def _rules(text: str) -> tuple[list[LarkRule], list[Rule]]:
    """lark's rules for ``text`` and the same rules numbered as bison numbers them."""
    from lark.load_grammar import GrammarBuilder
    builder = GrammarBuilder(False, [])
    builder.load_grammar(text, "<derive-grammar>")
    grammar = builder.build()
    _, lark_rules, _ = grammar.compile(["defn"], set())
    # bison numbers rules in the order they are written: by rule, then by alternative
    order = {name: i for i, name in enumerate(re.findall(r"^([a-z_]+):", text, flags=re.M))}
    lark_rules = sorted(lark_rules, key=lambda r: (order[r.origin.name], r.order))
    return lark_rules, [Rule(i, r.origin.name, tuple(s.name for s in r.expansion), r.alias or "")
                        for i, r in enumerate(lark_rules)]


def _rule_prec(rule: Rule, prec: dict[str, tuple[int, str]]) -> tuple[int, str] | None:
    # yacc: a rule has the precedence of the last terminal of its right-hand side
    terms = [s for s in rule.rhs if s.isupper()]
    return prec.get(terms[-1]) if terms else None


def _resolve(row: dict[str, tuple[str, int]], la: str, rule: Rule,
             prec: dict[str, tuple[int, str]]) -> None:
    """Enter "reduce ``rule`` on ``la``" into ``row`` as yacc does."""
    if la not in row:
        row[la] = ("r", rule.number)
        return
    # shift/reduce: yacc precedence and associativity; libpcp's grammar leaves none open
    tp, rp = prec.get(la), _rule_prec(rule, prec)
    if tp is None or rp is None or tp[1] == "nonassoc":
        raise AssertionError(f"unresolved shift/reduce conflict on {la}: {rule}")
    if tp[0] < rp[0] or (tp[0] == rp[0] and tp[1] == "left"):
        row[la] = ("r", rule.number)


def _default_reduction(row: dict[str, tuple[str, int]], reductions: set[int]) -> int | None:
    """bison's default reduction: the only reduction of a state that needs no lookahead,
    else the most frequent one (the first in rule order on a tie); none in a state that
    can shift ERROR."""
    if not reductions or row.get(ERROR, ("r",))[0] == "s":
        return None
    shifts = any(a == "s" for a, _ in row.values())
    if len(reductions) == 1 and not shifts:
        return next(iter(reductions))
    counts = {n: sum(1 for a in row.values() if a == ("r", n)) for n in sorted(reductions)}
    best = max(counts.values())
    return next(n for n, c in counts.items() if c == best) if best else None


#: frozen tables shipped with the package, one per grammar generation (``Profile.syntax``)
FROZEN_TABLES = "tables.json"
#: grammar generation -> "frozen" or "built", as ``tables()`` found them in this process
TABLE_SOURCES: dict[str, str] = {}


@functools.cache
def tables(profile: Profile) -> Tables:
    """The parse tables of ``profile``'s grammar: the frozen ones when they were built from
    this very grammar text, else built now (once per process)."""
    text = grammar_text(profile)
    frozen = _frozen().get(profile.syntax)
    if frozen is not None and frozen.get("grammar_sha256") == grammar_digest(text):
        TABLE_SOURCES[profile.syntax] = "frozen"
        return _tables_from_json(frozen["tables"])
    TABLE_SOURCES[profile.syntax] = "built"
    return build_tables(text)


def grammar_digest(text: str) -> str:
    # the precedence lines are part of GRAMMAR's text, hence of every generation's text
    return hashlib.sha256(text.encode()).hexdigest()


@functools.cache
def _frozen() -> dict[str, Any]:
    try:
        # beside this module in a checkout and in an installed package (package data); read
        # directly: importlib.resources costs its own imports at every derive command's start
        raw = Path(__file__).with_name(FROZEN_TABLES).read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return {}
    doc: dict[str, Any] = json.loads(raw)
    return doc


def _tables_from_json(doc: dict[str, Any]) -> Tables:
    return Tables(rules=[Rule(n, lhs, tuple(rhs), action) for n, lhs, rhs, action in doc["rules"]],
                  action=[{t: (a, n) for t, (a, n) in row.items()} for row in doc["action"]],
                  default=list(doc["default"]),
                  goto=[dict(row) for row in doc["goto"]],
                  start=doc["start"], terminals=frozenset(doc["terminals"]))


def tables_to_json(t: Tables) -> dict[str, Any]:
    return {"rules": [[r.number, r.lhs, list(r.rhs), r.action] for r in t.rules],
            "action": [{k: list(v) for k, v in row.items()} for row in t.action],
            "default": t.default, "goto": t.goto, "start": t.start,
            "terminals": sorted(t.terminals)}


def write_frozen_tables(path: Path | None = None) -> Path:
    """Build every generation's tables and write them where ``tables()`` looks for them."""
    target = path or Path(__file__).with_name(FROZEN_TABLES)
    doc: dict[str, Any] = {}
    for prof in PROFILES.values():
        text = grammar_text(prof)
        doc[prof.syntax] = {"grammar_sha256": grammar_digest(text),
                            "tables": tables_to_json(build_tables(text))}
    target.write_text(json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n")
    return target


def build_tables(text: str) -> Tables:
    """bison's tables for one grammar text, computed with lark's LALR analysis."""
    from lark.common import ParserConf
    from lark.grammar import Terminal
    from lark.parsers.lalr_analysis import LALR_Analyzer

    class _Analyzer(LALR_Analyzer):
        def lalr_states(self) -> Any:
            self.compute_lr0_states()
            # lark leaves these three unannotated
            self.compute_reads_relations()      # type: ignore[no-untyped-call]
            self.compute_includes_lookback()    # type: ignore[no-untyped-call]
            self.compute_lookaheads()           # type: ignore[no-untyped-call]
            return self.lr0_itemsets

    lark_rules, rules = _rules(text)
    number = {id(r): i for i, r in enumerate(lark_rules)}
    prec = precedence()
    analyzer = _Analyzer(ParserConf(lark_rules, {}, ["defn"]), debug=False, strict=False)
    itemsets = analyzer.lalr_states()
    root = analyzer.lr0_start_states["defn"]
    ordered = [root] + sorted((s for s in itemsets if s is not root),
                              key=lambda s: sorted(str(k) for k in s.kernel))
    index = {id(s): i for i, s in enumerate(ordered)}
    action: list[dict[str, tuple[str, int]]] = []
    default: list[int | None] = []
    goto: list[dict[str, int]] = []
    terminals: set[str] = set()
    for st in ordered:
        row = {sym.name: ("s", index[id(nxt)]) for sym, nxt in st.transitions.items()
               if isinstance(sym, Terminal)}
        terminals.update(row)
        reductions: set[int] = set()
        for la, lrules in st.lookaheads.items():
            # lark's own "$root: defn $END" is left out: libpcp accepts in "defn: expr L_EOS"
            cands = sorted(number[id(r)] for r in lrules if id(r) in number)
            if len(cands) > 1:
                raise AssertionError(f"reduce/reduce conflict on {la.name}: {cands}")
            if cands:
                reductions.add(cands[0])
                _resolve(row, la.name, rules[cands[0]], prec)
        dflt = _default_reduction(row, reductions)
        if dflt is not None:
            row = {t: a for t, a in row.items() if a != ("r", dflt)}
        action.append(row)
        default.append(dflt)
        goto.append({sym.name: index[id(nxt)] for sym, nxt in st.transitions.items()
                     if not isinstance(sym, Terminal)})
    return Tables(rules, action, default, goto, 0, frozenset(terminals))
