"""``njit`` for burnumba's own numba functions (the sparse derivatives' pattern pass, the
colourings), with numba's on-disk cache kept in this environment's cache folder
(``cache.folder()/numba``) instead of ``__pycache__`` beside the source.

``cache=True`` alone writes beside the source, so every new checkout or venv of the same
code compiled them again: 29 s on the 2-core VM before the first sparse Hessian, in every
clean-clone CI run and every fresh install. Here they are compiled once per environment
(python, numba, llvmlite, numpy, CPU: the folder's name), as the kernels are.

What keeps a cached function from running stale is numba's own check, unchanged: its index
records the source file's stamp (numba 0.68: a sha256 of its content; numbas that stamp the
modification time compile again after a new checkout, and are as safe), and each entry the
function's bytecode, its closure, its signature and the CPU's name and features; a file
whose content changed finds no entry and compiles. numba does not track a function's
callees in other files, so each file compiled through here calls only its own functions
(tests/test_sparse.py checks that they import nothing but numpy and this).

numba has no public setting for one function's cache folder (``NUMBA_CACHE_DIR`` moves every
function of the process); the dispatcher's cache is numba's ``FunctionCache`` with a locator
of its own. With another numba whose internals differ, the function is cached as
``cache=True`` caches it.
"""
import os

from numba import njit as _njit

from . import cache

try:
    from numba.core import caching

    class _Locator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        """numba's locator of a source file's functions (its content stamp, its line
        disambiguator), pointing at the cache folder."""

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno

        def get_cache_path(self):
            return os.path.join(cache.folder(), "numba")

    class _Impl(caching.CompileResultCacheImpl):
        # where the folder cannot be written, numba's own places
        _locator_classes = [_Locator, caching.InTreeCacheLocator, caching.UserWideCacheLocator]

    class _FunctionCache(caching.FunctionCache):
        _impl_class = _Impl

except (ImportError, AttributeError):           # another numba's internals
    _FunctionCache = None


def njit(**options):
    """numba's ``njit(**options)``, cached in the cache folder (``cache=True`` implied)."""
    def compiled(fn):
        if _FunctionCache is None:
            return _njit(cache=True, **options)(fn)
        dispatcher = _njit(**options)(fn)
        dispatcher._cache = _FunctionCache(fn)      # what Dispatcher.enable_caching sets
        return dispatcher
    return compiled
