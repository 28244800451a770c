"""Only the optional C extension is configured here; everything else is in pyproject.toml.

``burnumba.kernels._bncall`` makes calls into compiled kernels cheap (about 40 ns instead of
300-450 ns through ctypes). It is optional: without a C compiler, the install succeeds and
burnumba calls the kernels through ctypes.
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("burnumba.kernels._bncall", ["kernels/_bncall.c"], optional=True)])
