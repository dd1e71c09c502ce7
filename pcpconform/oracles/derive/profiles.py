"""What each PCP version's derived-metric support can do (spec/derive.md, DERIVE-VER-*).

A profile is a set of feature switches, not a copy of the rules: the parser, the binder
and the evaluator consult it wherever versions differ.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Profile", "PROFILES", "profile"]


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
    #: an unknown operand metric is reported as a semantic error (7.1.0; measured: 6.3.8
    #: is as silent as 6.0.3)
    report_unknown_operand: bool
    #: indoms related by __pmEquivInDom count as the same (6.0.4)
    equivalent_indoms: bool
    #: (expr)[inst] and scalar() of an empty set behave (6.1.1)
    instance_fixes: bool


PROFILES: dict[str, Profile] = {
    "pcp-6.0": Profile("pcp-6.0", expr_args=False, novalue=False, continuation=False,
                       reject_nested=False, rate_drops_decreases=False,
                       report_unknown_operand=False, equivalent_indoms=False,
                       instance_fixes=False),
    "pcp-6.3": Profile("pcp-6.3", expr_args=True, novalue=True, continuation=True,
                       reject_nested=True, rate_drops_decreases=True,
                       report_unknown_operand=False, equivalent_indoms=True,
                       instance_fixes=True),
}


def profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"rules must be one of {', '.join(PROFILES)}") from None
