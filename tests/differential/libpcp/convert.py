"""Turn a parsed pcpconform Fixture into the JSON document pmi_write.py takes (the package's
one copy: pcpconform.conform.adapters.pmi_fixture)."""

from pcpconform.conform.adapters.pmi_fixture import fixture_to_pmi

__all__ = ["fixture_to_pmi"]
