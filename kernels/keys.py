"""What each compiled artifact is built from, and the key that names it in the cache.

A key is a digest of the code an artifact is compiled from, and of nothing that leaves the
machine code as it is:

* a row's object file (one per row, dtype and part): the row module's generated source
  (``_gen.row_module``), the part it exports, and the hand-written code it is compiled with
  (``NATIVE``: gemm, gemv and exp of ``_native.py`` and ``_prims.py``, the layout constants
  they read);
* a kernel library: its dispatcher's generated source and the keys of the row objects
  linked with it;
* the optimisers' library: the code of ``update.py``;

each with the compile recipe (``RECIPE``: the functions of ``_build.py`` that make machine
code and link it) and, through ``cache.digest``, the environment (FORMAT, python, numba,
llvmlite, numpy, CPU). Generated sources have no comments (the generator reads rules as
``ast`` and unparses them), and hand-written code is hashed as its ``ast`` without
docstrings (``cache.code_digest``): a comment anywhere under ``kernels/`` changes no key,
and an edit of one row's rule changes the keys of that row's objects and of the kernels
whose dispatcher holds the row, nothing else.

Generating a program's sources takes 0.1-0.3 s, as long as a whole warm start; so a kernel's
key is also kept in an index (``cache.read_index``), under a digest of the bytes of every
file under ``kernels/`` and of the request. While no file changes, a warm process reads its
key there and generates nothing; after any change, a comment too, the first process to ask
generates the sources again and finds the same key, and so the same library.
"""
import ast
import functools
import hashlib
from typing import NamedTuple, Tuple

from . import cache, rules
from ._gen import dispatcher_module, parts, row_module, with_functions
from .ops import BY_NAME, ROWS

LEAVES = frozenset(r.name for r in ROWS if r.kind == "leaf")

# The functions of _build.py that turn a generated module into machine code and link it: a
# change of their code (the compile flags, the C entry points, the link command) rebuilds
# everything; the rest of _build.py (which rows to build, the jit engine) changes no key.
RECIPE = ("COMPILE_OPTIONS", "_types", "_update_signature", "_branch_signature", "_c_entry",
          "compile_object", "link")


@functools.lru_cache(maxsize=None)
def recipe():
    return cache.code_digest("_build.py", *RECIPE)


@functools.lru_cache(maxsize=None)
def native():
    """The code compiled into every row object and dispatcher besides its generated module:
    ``_native.py`` (gemm, gemv, exp), the ``_prims.py`` functions it compiles, and the
    layout constants it reads."""
    return [cache.code_digest(name) for name in ("_native.py", "_prims.py", "layout.py")]


@functools.lru_cache(maxsize=None)
def _calls_special(row_name):
    """The special functions (rules.SPECIAL) a row's rules call, as a frozenset of names."""
    row = BY_NAME[row_name]
    if row.kind == "block":         # the calls in its rules (the beta rows' special_beta);
        names = set()               # a block's locals may be named i0, j1 ...: calls only
        for slot in ("fwd", "bwd", "jvp"):
            fn = getattr(row, slot)
            if fn is not None:
                names.update(n.func.id for n in ast.walk(ast.parse(
                    rules.block_source(fn, row.name, slot)))
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name))
        return frozenset(names & set(rules.SPECIAL))
    if row.kind != "map":
        return frozenset()
    found = set()
    for slot in ("fwd", "da", "db"):
        fn = getattr(row, slot)
        if fn is None:
            continue
        r = rules.read(fn, row.name, slot, row.arity)
        for code in r.statements + (r.expr,):
            found.update(n.id for n in ast.walk(ast.parse(code.strip()))
                         if isinstance(n, ast.Name) and n.id in rules.SPECIAL)
    return frozenset(found)


def special(row_names):
    """The digests of the special modules (rules.SPECIAL_MODULES: special.py, ...) whose
    functions one of ``row_names`` calls, else nothing: an edit there rebuilds the rows that
    call it and the kernels that hold them, and the keys of every other artifact stay as
    they were."""
    called = set()
    for n in row_names:
        called |= _calls_special(n)
    return [cache.code_digest(module) for module, names in rules.SPECIAL_MODULES.items()
            if called & set(names)]


def _sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


@functools.lru_cache(maxsize=None)
def row_text(row_name):
    """The generated source of a row's module (every part)."""
    return row_module(BY_NAME[row_name])


@functools.lru_cache(maxsize=None)
def row_key(row_name, dtype):
    """A row's generated module: names its source file and its exported symbols."""
    code = _sha(row_text(row_name))
    return f"{row_name}-{cache.dtype_tag(dtype)}-{cache.digest('row', code, str(dtype))[:16]}"


@functools.lru_cache(maxsize=None)
def object_key(row_name, dtype, part):
    """The object file of one part of a row's code ("core": forward and backward, "jvp")."""
    code = cache.digest("obj", row_key(row_name, dtype), str(dtype), part,
                        native() + special([row_name]), recipe())
    return f"{row_name}-{part}-{cache.dtype_tag(dtype)}-{code[:16]}"


def kernel_rows(row_names, tensor_names):
    """(every row with the leaves, the rows whose functions are linked), sorted names."""
    rows = sorted(set(row_names) | LEAVES)
    linked = sorted(n for n in rows if with_functions(BY_NAME[n], tensor_names))
    return rows, linked


class Plan(NamedTuple):
    """What a kernel library is built from."""
    key: str
    rows: Tuple[str, ...]                 # every row, leaves included, sorted
    linked: Tuple[str, ...]               # the rows whose functions are linked
    source: str                           # the dispatcher's generated module
    objects: Tuple[Tuple[str, str, str], ...]   # (row, part, object key) of the linked code


def plan(row_names, tensor_names, dtype, jvp=False):
    """The Plan of the kernel of ``row_names`` (with the functions of ``tensor_names``
    linked), for ``dtype``, with the tangent sweep when ``jvp``: its sources generated."""
    rows, linked = kernel_rows(row_names, tensor_names)
    source = dispatcher_module([BY_NAME[n] for n in rows], set(linked), jvp)
    objects = tuple((n, part, object_key(n, dtype, part)) for n in linked
                    for part in parts(BY_NAME[n], jvp))
    code = cache.digest("kernel", _sha(source), [o[2] for o in objects], str(dtype),
                        bool(jvp), native() + special(rows), recipe())
    key = f"k{len(rows)}{'j' if jvp else ''}-{cache.dtype_tag(dtype)}-{code[:16]}"
    return Plan(key, tuple(rows), tuple(linked), source, objects)


def _indexed(kind, request, compute):
    """``compute()``, remembered in the index under the kernels' files and ``request``."""
    request = [kind, cache.files_digest(), request]
    name = f"{kind}-{_sha(repr(request))[:32]}"
    value = cache.read_index(name, request)
    if value is None:
        value = compute()
        cache.write_index(name, request, value)
    return value


def kernel_key(row_names, tensor_names, dtype, jvp=False):
    """The key of ``plan(...)``, from the index when the kernels' files are unchanged."""
    rows, linked = kernel_rows(row_names, tensor_names)
    return _indexed("kernel", [rows, linked, str(dtype), bool(jvp)],
                    lambda: plan(rows, linked, dtype, jvp).key)


def current(row_names, tensor_names, dtype, jvp, key):
    """Whether the library ``key`` of a manifest (its rows, linked rows and jvp) was built
    from this process's code: a superset built from other rules must not serve, nor one
    holding a row this op table does not have (built before the row was removed)."""
    if any(name not in BY_NAME for name in list(row_names) + list(tensor_names)):
        return False
    return kernel_key(row_names, tensor_names, dtype, jvp) == key


@functools.lru_cache(maxsize=None)
def update_key(dtype):
    """The optimisers' library: the code of update.py."""
    code = cache.digest("update", cache.code_digest("update.py"), str(dtype), recipe())
    return f"update-{cache.dtype_tag(dtype)}-{code[:16]}"


def source_file(name, text):
    """The generated module ``name`` as a real file in the cache (numba and tracebacks read
    real files); written once, atomically."""
    p = cache.path("src", name + ".py")
    try:
        with open(p) as fh:
            if fh.read() == text:
                return p
    except FileNotFoundError:
        pass
    cache.write_atomic(p, text)
    return p


def row_source(row_name, dtype):
    """(module name, path) of a row's generated module."""
    key = row_key(row_name, dtype)
    return key, source_file("row_" + key.replace("-", "_"), row_text(row_name))


def dispatcher_source(p):
    """(module name, path) of a Plan's dispatcher."""
    return p.key, source_file("run_" + p.key.replace("-", "_"), p.source)


def symbol(row_name, function, dtype):
    """The exported C name of a row function: unique per generated source, so that several
    versions can live in one process (the jit engine registers them globally)."""
    return f"bn_{function}_{row_key(row_name, dtype).split('-')[-1]}_{cache.dtype_tag(dtype)}"
