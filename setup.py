"""The packages: pcpconform's, and the corpus (``corpus/`` of the source tree) installed
with them as ``pcpconform/corpus``, so that ``pcpconform conform`` finds it without a
checkout; and the compiled kernel of the MMV dump (pcpconform/dump/mmv_kernel.py says what
happens where it is not built). Everything else is in pyproject.toml."""

from setuptools import Extension, find_namespace_packages, setup

setup(packages=[*find_namespace_packages(include=["pcpconform*"]), "pcpconform.corpus"],
      package_dir={"pcpconform.corpus": "corpus"},
      ext_modules=[Extension("pcpconform.dump._mmvrows", ["pcpconform/dump/_mmvrows.c"],
                             extra_compile_args=["-O2"])])
