"""Only the optional C extension is configured here; everything else is in pyproject.toml.

``burnumba.kernels._bncall`` makes calls into compiled kernels cheap (about 40 ns instead of
300-450 ns through ctypes), and runs a vmap's chunks on OpenMP's threads. It is optional:
without a C compiler, the install succeeds and burnumba calls the kernels through ctypes (and
runs the chunks on a pool of Python threads). Without OpenMP, it is built without it.
"""
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

OPENMP = {"unix": "-fopenmp", "msvc": "/openmp"}


class BuildExt(build_ext):
    """Build with OpenMP where the compiler has it, else without."""

    def build_extension(self, ext):
        flag = OPENMP.get(self.compiler.compiler_type)
        if flag is None:
            return super().build_extension(ext)
        compile_args, link_args = list(ext.extra_compile_args), list(ext.extra_link_args)
        ext.extra_compile_args = compile_args + [flag]
        ext.extra_link_args = link_args + ([flag] if flag.startswith("-") else [])
        try:
            return super().build_extension(ext)
        except Exception as e:                    # noqa: BLE001 - any compiler or linker error
            print(f"burnumba: building {ext.name} without OpenMP ({e})")
            ext.extra_compile_args, ext.extra_link_args = compile_args, link_args
            return super().build_extension(ext)


setup(ext_modules=[Extension("burnumba.kernels._bncall", ["kernels/_bncall.c"], optional=True)],
      cmdclass={"build_ext": BuildExt})
