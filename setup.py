"""The packages: pcpconform's, and the corpus (``corpus/`` of the source tree) installed
with them as ``pcpconform/corpus``, so that ``pcpconform conform`` finds it without a
checkout. Everything else is in pyproject.toml."""

from setuptools import find_namespace_packages, setup

setup(packages=[*find_namespace_packages(include=["pcpconform*"]), "pcpconform.corpus"],
      package_dir={"pcpconform.corpus": "corpus"})
