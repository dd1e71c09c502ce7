"""The packages: pcpconform's, and the corpus (``corpus/`` of the source tree) installed
with them as ``pcpconform/corpus``, so that ``pcpconform conform`` finds it without a
checkout; and the compiled kernels of the MMV dump, of the MMV reader's values and of the
result decoder's column form, optional: where one cannot be compiled the package installs
without it, and its fast path declines every input, counted (pcpconform/dump/mmv_kernel.py,
pcpconform/mmv/columns.py, pcpconform/io/result_kernel.py; under CI=true their unit tests
fail).
Everything else is in pyproject.toml."""

from setuptools import Extension, find_namespace_packages, setup

setup(packages=[*find_namespace_packages(include=["pcpconform*"]), "pcpconform.corpus"],
      package_dir={"pcpconform.corpus": "corpus"},
      ext_modules=[Extension("pcpconform.dump._mmvrows", ["pcpconform/dump/_mmvrows.c"],
                             extra_compile_args=["-O2"], optional=True),
                   Extension("pcpconform.io._resultcols", ["pcpconform/io/_resultcols.c"],
                             extra_compile_args=["-O2"], optional=True),
                   Extension("pcpconform.mmv._mmvcols", ["pcpconform/mmv/_mmvcols.c"],
                             extra_compile_args=["-O2"], optional=True)])
