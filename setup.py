"""The packages: pcpconform's, and the corpus (``corpus/`` of the source tree) installed
with them as ``pcpconform/corpus``, so that ``pcpconform conform`` finds it without a
checkout; and the compiled kernel of the MMV dump, optional: where it cannot be compiled the
package installs without it, and the dump declines the kernel for every run, counted
(pcpconform/dump/mmv_kernel.py; under CI=true tests/unit/test_mmv_kernel.py fails).
Everything else is in pyproject.toml."""

from setuptools import Extension, find_namespace_packages, setup

setup(packages=[*find_namespace_packages(include=["pcpconform*"]), "pcpconform.corpus"],
      package_dir={"pcpconform.corpus": "corpus"},
      ext_modules=[Extension("pcpconform.dump._mmvrows", ["pcpconform/dump/_mmvrows.c"],
                             extra_compile_args=["-O2"], optional=True)])
