"""Reference derived metrics: parse, bind and evaluate PCP derived-metric expressions
as libpcp does (spec/derive.md, spec/derive-grammar.md)."""
