"""What each PCP version's derived-metric support can do (spec/derive.md, DERIVE-VER-*).

A profile is a set of feature switches, not a copy of the rules: the parser, the binder
and the evaluator consult it wherever versions differ.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pcpconform.oracles.interp.installed import version_tuple

__all__ = ["Profile", "PROFILES", "profile", "profile_for"]


@dataclass(frozen=True)
class Profile:
    name: str
    #: delta()/rate()/instant() take any expression, not only a metric name (6.3.0)
    expr_args: bool
    #: novalue(), mkconst(..., meta=), novalue(meta=), lazy binding of decidable guards (6.2.2)
    novalue: bool
    #: a config-file line ending in "\" continues on the next line (6.2.2)
    continuation: bool
    #: a derived metric may not reference another derived metric (6.2.2)
    reject_nested: bool
    #: rate() omits decreasing COUNTER instances, except PM_TYPE_32 (6.2.1)
    rate_drops_decreases: bool
    #: an unknown operand metric is reported as a semantic error "operand NAME: Unknown
    #: operand metric" (measured: 7.2.2 reports it; 6.0.3 and 6.3.8 are silent)
    report_unknown_operand: bool
    #: pmParseUnitsStr asserts that a time scale it folds into the multiplier is at most
    #: HOUR, and aborts (6.0.3, 6.3.8); measured: 7.2.2 (Debian's build) does not
    units_asserts: bool
    #: mkconst()/novalue() take indom= ("indom" a reserved word; measured in 7.2.2,
    #: DERIVE-VER-6)
    indom_spec: bool
    #: (expr)[inst] and scalar() of an empty set behave (6.1.1)
    instance_fixes: bool
    #: pmRegisterDerived() first registers the anonymous event.flags and event.missed, so a
    #: process's first call meets a parse tree (measured: 7.2.2; 6.3.8 does not, DERIVE-SYN-9)
    anon_on_register: bool
    #: the grammar and lexicon generation (spec/derive-grammar.md tags its lines with it)
    syntax: str
    #: the interpolation rule set (pcpconform.oracles.interp) of the same libpcp
    interp_rules: str


_P63 = Profile("pcp-6.3", expr_args=True, novalue=True, continuation=True,
               reject_nested=True, rate_drops_decreases=True,
               report_unknown_operand=False, units_asserts=True, indom_spec=False,
               instance_fixes=True, anon_on_register=False,
               syntax="pcp-6.3",
               interp_rules="pcp-6.3")

PROFILES: dict[str, Profile] = {
    "pcp-6.0": Profile("pcp-6.0", expr_args=False, novalue=False, continuation=False,
                       reject_nested=False, rate_drops_decreases=False,
                       report_unknown_operand=False, units_asserts=True,
                       indom_spec=False, instance_fixes=False, anon_on_register=False,
                       syntax="pcp-6.0", interp_rules="pcp-6.0"),
    "pcp-6.3": _P63,
    # measured against libpcp 7.2.2 (DERIVE-VER-3..): only the switches that differ
    "pcp-7": replace(_P63, name="pcp-7", report_unknown_operand=True, units_asserts=False,
                     indom_spec=True, anon_on_register=True, syntax="pcp-7"),
}


def profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"rules must be one of {', '.join(PROFILES)}") from None


def profile_for(version: str) -> str:
    """The profile that models libpcp ``version``: 7.x -> pcp-7; from 6.2.1 (where the
    features of pcp-6.3 begin to appear) -> pcp-6.3; older -> pcp-6.0."""
    v = version_tuple(version)
    if v >= (7, 0, 0):
        return "pcp-7"
    return "pcp-6.3" if v >= (6, 2, 1) else "pcp-6.0"
