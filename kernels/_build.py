"""Compile kernels with numba: this module and its callers are the only ones that import it.

The default ("aot") engine compiles ahead of time into the cache folder, in a subprocess
(``python -m burnumba.kernels._build REQUEST``), so the process that trains a model never
loads numba or LLVM: numba lowers each function with its ahead-of-time code generator
(position-independent machine code for this CPU), each row becomes one object file, and the
system C compiler links a set of rows with their dispatcher into a shared library. Exported
functions have C signatures over pointers and ints; the only symbols they import are libm's.

The "jit" engine (no C compiler, or ``BURNUMBA_ENGINE=jit``) compiles the same functions
in-process as numba cfuncs, without a disk cache. The "python" engine runs the generated
source itself (``bind`` supplies the same names to it).
"""
import functools
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time

from . import cache, keys, layout, update
from .errors import KernelError
from ._gen import parts, row_functions
from .keys import row_source, symbol
from .ops import BY_NAME

# part of every cache key (keys.RECIPE). "contract": a * b + c may be one fused
# multiply-add (one rounding instead of two), as XLA and the BLAS compute them
COMPILE_OPTIONS = {"error_model": "numpy", "fastmath": {"contract"}}


# -- modules --------------------------------------------------------------------------------
def load_module(p, name):
    spec = importlib.util.spec_from_file_location(f"burnumba_kernels_gen.{name}", p)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bind(module, names):
    """Give a generated module the functions it calls: ``names`` maps each to a Python
    function (the python engine) or a numba callable (compilation)."""
    for name, fn in names.items():
        setattr(module, name, fn)
    return module


def python_kernel(row_names, tensor_names, dtype, jvp=False):
    """``run`` as plain Python, with its rows' Python functions bound (BURNUMBA_ENGINE=python).
    Values are numpy scalars, and the math functions numpy's, so that 0, inf and NaN follow
    IEEE as in compiled code (Python's math raises there)."""
    import numpy as np
    from . import _prims
    from .reference import IEEE_MATH
    plan = keys.plan(row_names, tensor_names, dtype, jvp)
    bound = {}
    for name in plan.linked:
        key, p = row_source(name, dtype)
        module = bind(load_module(p, "row_" + key),
                      {"gemm": _prims.gemm, "gemv": _prims.gemv, "user": _prims.user,
                       **IEEE_MATH})
        for fn in row_functions(BY_NAME[name]):
            bound[fn] = getattr(module, fn)
    key, p = keys.dispatcher_source(plan)
    run = bind(load_module(p, "run_" + key), {**bound, **IEEE_MATH}).run

    def ieee_run(I, F, C, mode):
        with np.errstate(all="ignore"):
            return run(I, F, C, mode)
    return ieee_run


# -- numba ---------------------------------------------------------------------------------
def _types(dtype):
    from numba import types
    real = types.float64 if str(dtype) == "float64" else types.float32
    ptr = types.CPointer
    row = types.int64(ptr(types.int32), ptr(real), ptr(types.int64), types.int64)
    run = types.float64(ptr(types.int32), ptr(real), ptr(types.int64), types.int64)
    return real, row, run


def _update_signature(name, dtype):
    from numba import types
    real = _types(dtype)[0]
    kinds = {"F": types.CPointer(real), "i": types.int64, "d": types.float64}
    args, ret = update.SIGNATURES[name]
    return (kinds["d"] if ret == "d" else types.void)(*[kinds[k] for k in args])


def _native_names(row_name):
    """What a row module's functions call, compiled: gemm, and for a map row the math
    functions its loops vectorize with (``_native.VECTOR_MATH``)."""
    from . import _native
    vector = _native.VECTOR_MATH if BY_NAME[row_name].kind == "map" else {}
    return {**_native.NATIVE, **vector, **_special()}


@functools.lru_cache(maxsize=None)
def _special():
    """kernels/special.py's functions compiled (rules.SPECIAL), and those of the other
    special modules (rules.SPECIAL_MODULES), which the special rows' code calls: bound into
    every module, used by those that name them."""
    from . import (special, special_beta, special_bessel, special_bessel_real, special_gamma,
                   special_owens)
    out = special.compiled()
    for module in (special_bessel, special_gamma, special_beta, special_owens,
                   special_bessel_real):
        out.update(_compiled_functions(module.FUNCTIONS))
    return out


def _compiled_functions(functions):
    """A special module's FUNCTIONS compiled with numba, inlined where a kernel calls them:
    each function's helpers (the plain functions its module defines) compiled first and
    bound in its globals (numba resolves a global call at compile time). Errors follow
    numpy's model (a division by zero gives inf, never raises)."""
    import types

    from numba import njit

    done = {}

    def compile_(fn):
        if fn.__name__ not in done:
            glob = dict(fn.__globals__)
            for name in fn.__code__.co_names:
                helper = fn.__globals__.get(name)
                if (isinstance(helper, types.FunctionType) and helper is not fn
                        and helper.__module__ == fn.__module__):
                    glob[name] = compile_(helper)
            done[fn.__name__] = njit(inline="always", error_model="numpy")(
                types.FunctionType(fn.__code__, glob, fn.__name__))
        return done[fn.__name__]

    return {name: compile_(fn) for name, fn in functions.items()}


def _dispatcher_names(linked, dtype, jvp):
    """What the dispatcher calls: its rows' functions, and vexp (an inline block's)."""
    from . import _native
    return {**_externals(linked, dtype, jvp), "vexp": _native.exp, **_special()}


def _branch_signature(function, dtype):
    """A branch function's numba signature: the arrays I, F, C and its integers (int64; the
    loop's ints, which indices only add, so their width changes no result), to a status."""
    from numba import types
    pointers = _types(dtype)[1].args[:3]
    ints = function.__code__.co_argcount - 3
    return types.int64(*pointers, *[types.int64] * ints)


def _dispatcher(p, name, dtype, linked, jvp, prefix):
    """A dispatcher's module loaded with what it calls bound, and its branch functions
    (``_gen``: one per row and sweep) as (python function, C symbol, signature) triples,
    each name bound to its symbol (compile_object inlines them into ``run``)."""
    from numba import types
    module = load_module(p, name)
    branches = [(getattr(module, fn), f"{prefix}_{fn}", _branch_signature(getattr(module, fn),
                                                                        dtype))
                for fn in module.BRANCHES]
    calls = {fn: types.ExternalFunction(sym, sig)
             for fn, (_, sym, sig) in zip(module.BRANCHES, branches)}
    return bind(module, {**_dispatcher_names(linked, dtype, jvp), **calls}), branches


def _externals(linked, dtype, jvp=False):
    """The dispatcher's row functions as numba external functions (C symbols)."""
    from numba import types
    row_sig = _types(dtype)[1]
    bound = {}
    for name in linked:
        for part in parts(BY_NAME[name], jvp):
            for fn in row_functions(BY_NAME[name], part):
                bound[fn] = types.ExternalFunction(symbol(name, fn, dtype), row_sig)
    return bound


# What compiled kernels may import: libm, and what LLVM emits for loops (memset, memcpy).
# Anything else (numba's exception machinery, the Python C API) means a rule can raise,
# which a kernel must not: it reports errors through the control block.
ALLOWED_IMPORTS = frozenset({
    "exp", "log", "sqrt", "sin", "cos", "tanh", "erf", "pow", "fabs", "copysign", "expm1",
    "log1p", "exp2", "log2", "log10", "sinh", "cosh", "asin", "acos", "atan", "atan2",
    "asinh", "acosh", "atanh", "hypot", "floor", "ceil", "fmod", "erfc", "lgamma", "tgamma",
    "memset", "memcpy", "memmove", "expf", "logf", "sqrtf", "sinf", "cosf", "tanhf", "erff",
    "powf", "fmodf", "floorf", "ceilf", "tan", "tanf", "sinhf", "coshf", "asinf", "acosf",
    "atanf", "atan2f", "hypotf", "exp2f", "expm1f", "log1pf", "log2f", "log10f", "copysignf",
    "fabsf", "asinhf", "acoshf", "atanhf", "cbrt", "cbrtf", "rint", "rintf", "trunc", "truncf",
    "erfcf", "lgammaf",   # the special rows in float32 (maps_special.py)
    "nearbyint", "nearbyintf"})


def _c_entry(context, library, fndesc, name, on_error):
    """A C function ``name`` with the compiled function's arguments and result, calling it
    with numba's calling convention. numba's own cfunc wrapper would report an error status
    through the Python C API; a kernel never raises, so a status here (which the sources do
    not produce) returns ``on_error`` instead."""
    from llvmlite import ir
    module = context.create_module(name)
    callee = ir.Function(module, context.call_conv.get_function_type(
        fndesc.restype, fndesc.argtypes), fndesc.llvm_func_name)
    ret = context.get_value_type(fndesc.restype)
    fnty = ir.FunctionType(ret, [context.get_value_type(t) for t in fndesc.argtypes])
    fn = ir.Function(module, fnty, name)
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    status, out = context.call_conv.call_function(builder, callee, fndesc.restype,
                                                  fndesc.argtypes, fn.args)
    if isinstance(ret, ir.VoidType):
        builder.ret_void()
    else:
        with builder.if_then(status.is_error, likely=False):
            builder.ret(ir.Constant(ret, on_error))
        builder.ret(out)
    library.add_ir_module(module)


def compile_object(exports, inline=()):
    """Native object code (bytes) of ``exports``: (python function, C symbol, numba
    signature) triples, compiled together with numba's ahead-of-time code generator for
    this machine's CPU. Everything but the exports is hidden. ``inline``: more triples,
    functions the exports call by their C symbols (numba external functions), compiled each
    on its own (numba's front end is superlinear in a function's size) and then inlined
    into their callers by LLVM (``alwaysinline``), so that the machine code is what one
    function holding them all would give."""
    from llvmlite.binding import Linkage
    from numba import types
    from numba.core.compiler import Flags, compile_extra
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.cpu import FastMathOptions
    from numba.core.registry import cpu_target

    name = exports[0][1]
    context = cpu_target.target_context.with_aot_codegen(name, cpu_name="host")
    library = context.codegen().create_library(name)
    flags = Flags()
    flags.no_compile = True
    flags.no_cpython_wrapper = True
    flags.no_cfunc_wrapper = True         # _c_entry instead
    flags.nrt = False                     # no reference counting: nothing is allocated
    flags.error_model = COMPILE_OPTIONS["error_model"]
    flags.fastmath = FastMathOptions(COMPILE_OPTIONS["fastmath"])
    with global_compiler_lock:
        symbols, inlined = set(), []
        for k, (func, sym, sig) in enumerate(list(inline) + list(exports)):
            cres = compile_extra(cpu_target.typing_context, context, func, sig.args,
                                 sig.return_type, flags, locals={}, library=library)
            on_error = float("nan") if sig.return_type == types.float64 else \
                (layout.ERR_NUMBA if isinstance(sig.return_type, types.Integer) else None)
            _c_entry(context, library, cres.fndesc, sym, on_error)
            if k < len(inline):
                inlined += [sym, cres.fndesc.llvm_func_name]
            else:
                symbols.add(sym)
        for name in inlined:
            fn = library.get_function(name)
            fn.linkage = "internal"
            fn.add_function_attribute("alwaysinline")
        library.finalize()
        for fn in library.get_defined_functions():
            if fn.name not in symbols:
                if fn.linkage in {Linkage.private, Linkage.internal}:
                    fn.visibility = "default"
                else:
                    fn.visibility = "hidden"
        imports = {f.name for f in library._final_module.functions
                   if f.is_declaration and not f.name.startswith(("llvm.", "bn_"))}
        if imports - ALLOWED_IMPORTS:
            raise RuntimeError(
                f"{name}: the compiled code calls {sorted(imports - ALLOWED_IMPORTS)}, which a "
                "kernel must not (a rule that can raise, or allocates): report errors through "
                "the control block instead")
        return library.emit_native_object()


def c_compiler():
    """The command of the system C compiler (to link), or None."""
    for candidate in (os.environ.get("CC"), sysconfig.get_config_var("CC"), "cc", "gcc",
                      "clang"):
        if candidate:
            argv = shlex.split(candidate)
            if argv and shutil.which(argv[0]):
                return argv
    return None


def link(objects, target):
    """Link object files into the shared library ``target`` (atomically)."""
    cc = c_compiler()
    if cc is None:
        raise RuntimeError("no C compiler found to link the kernels (set CC)")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = target + f".tmp{os.getpid()}"
    cmd = cc + ["-shared", "-o", tmp] + list(objects) + ["-lm"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"linking the kernels failed: {' '.join(cmd)}\n{done.stderr}")
    os.replace(tmp, target)


# -- the ahead-of-time builds (under the build lock) ---------------------------------------
def build_row(name, dtype, part="core"):
    """The object file of one part of a row (compiled unless it exists); returns its path."""
    key, p = row_source(name, dtype)
    target = cache.path("obj", keys.object_key(name, dtype, part) + ".o")
    if os.path.exists(target):
        return target
    module = bind(load_module(p, "row_" + key), _native_names(name))
    row_sig = _types(dtype)[1]
    exports = [(getattr(module, fn), symbol(name, fn, dtype), row_sig)
               for fn in row_functions(BY_NAME[name], part)]
    cache.write_atomic(target, compile_object(exports))
    return target


def _built(key):
    """Whether the library ``key`` is built and undamaged (a damaged one is removed)."""
    try:
        return cache.read_manifest(key) is not None
    except cache.Damaged:
        cache.discard(key)
        return False


def _compile_dispatcher(plan, dtype, jvp):
    """The object file of a Plan's dispatcher (``run`` with its branches inlined); returns
    (its path, its C symbol)."""
    _, p = keys.dispatcher_source(plan)
    run_symbol = f"bn_run_{plan.key.replace('-', '_')}"
    module, branches = _dispatcher(p, "run_" + plan.key, dtype, plan.linked, jvp, run_symbol)
    run_obj = cache.path("obj", plan.key + ".o")
    cache.write_atomic(run_obj, compile_object([(module.run, run_symbol, _types(dtype)[2])],
                                               inline=branches))
    return run_obj, run_symbol


def _link_kernel(plan, dtype, jvp, run_obj, run_symbol, seconds, processes=1):
    library = cache.path("lib", plan.key + ".so")
    link([run_obj] + [cache.path("obj", o[2] + ".o") for o in plan.objects], library)
    cache.write_manifest(plan.key, library, kind="kernel", dtype=str(dtype),
                         rows=list(plan.rows), tensor_rows=list(plan.linked), jvp=bool(jvp),
                         symbol=run_symbol, seconds=round(seconds, 3), processes=processes)


def build_kernel(row_names, tensor_names, dtype, jvp=False):
    """The shared library of a set of rows and its manifest (built unless valid): the
    dispatcher of ``row_names`` linked with the functions of the block rows and of the map
    rows in ``tensor_names``, with the tangent sweep when ``jvp``. Compiled in this process
    only (``serve`` spreads a request over the cores)."""
    plan = keys.plan(row_names, tensor_names, dtype, jvp)     # generated here, not indexed
    if _built(plan.key):
        return plan.key
    t0 = time.perf_counter()
    for n, part, _ in plan.objects:
        build_row(n, dtype, part)
    _link_kernel(plan, dtype, jvp, *_compile_dispatcher(plan, dtype, jvp),
                 time.perf_counter() - t0)
    return plan.key


def build_update(dtype):
    """The optimisers' shared library for ``dtype``."""
    key = keys.update_key(dtype)
    try:
        if cache.read_manifest(key) is not None:
            return key
    except cache.Damaged:
        cache.discard(key)
    exports = [(getattr(update, name), f"bn_{name}_{cache.dtype_tag(dtype)}",
                _update_signature(name, dtype)) for name in update.SIGNATURES]
    obj = cache.path("obj", key + ".o")
    cache.write_atomic(obj, compile_object(exports))
    library = cache.path("lib", key + ".so")
    link([obj], library)
    cache.write_manifest(key, library, kind="update", dtype=str(dtype),
                         symbols={name: sym for name, (_, sym, _) in zip(update.SIGNATURES,
                                                                         exports)})
    return key


def processes():
    """How many processes a build may use: the cores this process may run on, or
    ``BURNUMBA_BUILD_PROCESSES`` (1: compile everything in the builder itself)."""
    wanted = os.environ.get("BURNUMBA_BUILD_PROCESSES", "").strip()
    if wanted:
        try:
            return max(1, int(wanted))
        except ValueError:
            raise KernelError(f"BURNUMBA_BUILD_PROCESSES={wanted!r}: give a whole number of "
                             "processes (1: no helper processes)") from None
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:                     # no affinity (macOS, Windows)
        return os.cpu_count() or 1


def _cost(unit, plans):
    """A rough size of a compile, to start the largest first: the bytes of the generated
    source numba compiles (its front end takes time in proportion: 0.12-0.19 ms a byte for
    a GPT block's rows and dispatcher on the 2-core VM, 2026-12-07). ``plans``: the
    request's Plans by their dispatcher's unit."""
    kind, what = unit
    if kind == "dispatcher":
        return len(plans[unit].source)
    if kind == "object":
        name, dtype, part = what
        return os.path.getsize(row_source(name, dtype)[1]) * (1.0 if part == "core" else 0.5)
    return os.path.getsize(update.__file__)


def _compile(unit):
    """One compile of a build, in whichever process: ("dispatcher", (rows, tensor rows,
    dtype, jvp)) gives (object path, symbol); ("object", (row, dtype, part)) the row
    object's path; ("update", dtype) the optimiser library's key."""
    kind, what = unit
    if kind == "dispatcher":
        rows, tensor, dtype, jvp = what
        return _compile_dispatcher(keys.plan(rows, tensor, dtype, jvp), dtype, jvp)
    if kind == "object":
        return build_row(*what)
    return build_update(what)


def serve(request):
    """Build what ``request`` asks for: {"kernels": [[rows, tensor rows, dtype, jvp], ...],
    "updates": [dtype, ...]}; returns their keys.

    A build is independent compiles, each written atomically to a file of its own under a
    key of its content: each kernel's dispatcher, each row object it lacks (shared by the
    kernels that link it) and each optimiser library. With more than one core they run in
    a pool of processes (the standard library's; ``processes()`` of them), largest first,
    each process taking the next when it is done; this process then links each kernel. A
    GPT block's float32 kernel with the optimiser's took 12.1 s in one process on the
    2-core VM (its dispatcher 4.6 s, its 6 row objects 7.2 s) and 7.2-7.7 s spread over
    two (2026-12-07)."""
    t0 = time.perf_counter()
    with cache.build_lock():
        plans = [(keys.plan(rows, tensor, dtype, jvp), dtype, bool(jvp))
                 for rows, tensor, dtype, jvp in request.get("kernels", [])]
        todo = {plan.key: (plan, dtype, jvp) for plan, dtype, jvp in plans
                if not _built(plan.key)}
        dispatchers = {("dispatcher", (plan.rows, plan.linked, dtype, jvp)): plan
                       for plan, dtype, jvp in todo.values()}
        units = list(dispatchers)
        units += sorted({("object", (n, dtype, part)) for plan, dtype, _ in todo.values()
                         for n, part, key in plan.objects
                         if not os.path.exists(cache.path("obj", key + ".o"))})
        units += [("update", dtype) for dtype in request.get("updates", [])
                  if not _built(keys.update_key(dtype))]
        units.sort(key=lambda unit: _cost(unit, dispatchers), reverse=True)
        workers = max(1, min(processes(), len(units)))
        if workers > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor
            with ProcessPoolExecutor(workers,
                                     mp_context=multiprocessing.get_context("spawn")) as pool:
                done = list(pool.map(_compile, units))   # a process's error is the build's
        else:                                           # here, with the Plans made above
            done = [_compile_dispatcher(dispatchers[unit], *unit[1][2:]) if unit in dispatchers
                    else _compile(unit) for unit in units]
        results = dict(zip(units, done))
        for unit, plan in dispatchers.items():
            _link_kernel(plan, *unit[1][2:], *results[unit], time.perf_counter() - t0, workers)
        built = [plan.key for plan, _, _ in plans]
        built += [keys.update_key(dtype) for dtype in request.get("updates", [])]
    return {"keys": built, "seconds": round(time.perf_counter() - t0, 3), "processes": workers}


# -- the in-process jit engine -------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _jit_row(name, dtype):
    """Compile one row's functions as numba cfuncs and register their symbols with LLVM, so
    that a dispatcher compiled later links against them. Returns the cfuncs (kept alive)."""
    import llvmlite.binding as llvm
    from numba import cfunc
    key, p = row_source(name, dtype)
    module = bind(load_module(p, "row_" + key), _native_names(name))
    row_sig = _types(dtype)[1]
    compiled = []
    for fn in row_functions(BY_NAME[name]):
        cf = cfunc(row_sig, **COMPILE_OPTIONS)(getattr(module, fn))
        llvm.add_symbol(symbol(name, fn, dtype), cf.address)
        compiled.append(cf)
    return tuple(compiled)


@functools.lru_cache(maxsize=None)
def jit_kernel(row_names, tensor_names, dtype, jvp=False):
    """(address of run, the cfuncs to keep alive) for a set of rows, compiled in-process."""
    from numba import cfunc, njit
    plan = keys.plan(row_names, tensor_names, dtype, jvp)
    keep = [_jit_row(n, dtype) for n in plan.linked]
    key, p = keys.dispatcher_source(plan)
    module = bind(load_module(p, "run_" + key), _dispatcher_names(plan.linked, dtype, jvp))
    # the branches as numba functions of their own, which LLVM inlines as it sees fit
    bind(module, {fn: njit(**COMPILE_OPTIONS)(getattr(module, fn)) for fn in module.BRANCHES})
    run = cfunc(_types(dtype)[2], **COMPILE_OPTIONS)(module.run)
    return run.address, (run, keep)


@functools.lru_cache(maxsize=None)
def jit_update(dtype):
    from numba import cfunc
    out = {}
    for name in update.SIGNATURES:
        cf = cfunc(_update_signature(name, dtype), **COMPILE_OPTIONS)(getattr(update, name))
        out[name] = (cf.address, cf)
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m burnumba.kernels._build REQUEST_JSON", file=sys.stderr)
        return 2
    print(json.dumps(serve(json.loads(argv[0]))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
