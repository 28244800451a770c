/* Call a compiled kernel from Python with almost no overhead.
 *
 * A Caller holds a kernel's address and the buffers of one run state (the tape's I, the
 * state's F and C). Calling it with a mode runs ``run(I, F, C, mode)`` and returns the float
 * it returns. It costs about 40 ns, against about 300-450 ns for ctypes with four arguments
 * and 360-390 ns for numba's own entry wrapper. The kernels take raw pointers, so the
 * Caller holds buffer views of the arrays for its whole life: numpy cannot resize or free
 * them meanwhile. With ``nogil`` the GIL is released around the call, so threads running
 * their own states compute in parallel (about 30 ns more, so tiny tapes keep it).
 *
 * ``Fast`` is a transformed function's whole scalar fast path in one call: the check that
 * every argument is a Python float, this thread's Caller, the run, the guards and the result
 * (the tiny graph's value_and_grad from Python went from about 610 to 340 ns with it).
 *
 * ``run_all`` runs several Callers at once, one per thread, with the GIL released once: the
 * chunks of a vmap. Built with OpenMP (``PARALLEL``), its threads wait spinning for a moment
 * after a region, so the next call's chunks start at once; a pool of Python threads woken
 * through the GIL took 30-140 us per call here to start and join a second chunk.
 *
 * Optional: when it cannot be built, burnumba calls the kernels through ctypes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

typedef double (*run_fn)(void *, void *, void *, int64_t);

/* The kinds of guard failed_guard knows (burnumba/tracing/concrete.py's 0 .. LAST_KIND);
   kernels/engine.py asks the module for it, and checks guards in Python when it is less. */
#define GUARD_KINDS 16

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    run_fn fn;
    Py_buffer bufs[3];
    int held;
    int nogil;
    /* the scalar fast path (set_scalars): the first n_in values are the inputs, their
       gradients start at at_grad; F's items are float32 when f32 */
    Py_ssize_t n_in, at_val, at_grad;
    int f32;
    /* the tape's guards, checked by value_and_grad after the run (set_guards): F's item
       at[k] must hold as kind[k] says against want[k] (tracing/concrete.py: holds) */
    Py_ssize_t n_guards;
    Py_ssize_t *guard_at;
    signed char *guard_kind;
    double *guard_want;
} Caller;

static inline double run_kernel(Caller *c, int64_t mode);

static PyObject *
Caller_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Caller *c = (Caller *)self;
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a kernel caller takes one argument: the mode");
        return NULL;
    }
    long mode = PyLong_AsLong(args[0]);
    if (mode == -1 && PyErr_Occurred())
        return NULL;
    return PyFloat_FromDouble(run_kernel(c, (int64_t)mode));
}

static inline double
run_kernel(Caller *c, int64_t mode)
{
    double r;
    void *I = c->bufs[0].buf, *F = c->bufs[1].buf, *C = c->bufs[2].buf;
    if (c->nogil) {
        Py_BEGIN_ALLOW_THREADS
        r = c->fn(I, F, C, mode);
        Py_END_ALLOW_THREADS
    }
    else {
        r = c->fn(I, F, C, mode);
    }
    return r;
}

/* set_scalars(n_in, at_val, at_grad, f32): where the scalar fast path reads and writes. */
static PyObject *
Caller_set_scalars(Caller *c, PyObject *args)
{
    Py_ssize_t n, v, g;
    int f32;
    if (!PyArg_ParseTuple(args, "nnnp", &n, &v, &g, &f32))
        return NULL;
    Py_ssize_t item = f32 ? 4 : 8;
    if (n < 0 || v < 0 || g < 0 || (v + n) * item > c->bufs[1].len ||
            (g + n) * item > c->bufs[1].len) {
        PyErr_SetString(PyExc_ValueError, "set_scalars: the slots lie outside F");
        return NULL;
    }
    c->n_in = n;
    c->at_val = v;
    c->at_grad = g;
    c->f32 = f32;
    Py_RETURN_NONE;
}

/* set_guards(at, kind, want[, f32]): the guards value_and_grad and guards_hold check, three
   C-contiguous buffers of equal length: int64 positions in F (in items), int8 kinds (0 truth,
   1 exact, 2 integer, ...) and float64 expected values; copied. Empty buffers: no guards.
   f32: whether F holds float32 items (else as set_scalars left it). */
static PyObject *
Caller_set_guards(Caller *c, PyObject *args)
{
    PyObject *objs[3];
    int f32 = -1;
    if (!PyArg_ParseTuple(args, "OOO|i", &objs[0], &objs[1], &objs[2], &f32))
        return NULL;
    if (f32 >= 0)
        c->f32 = f32 != 0;
    Py_buffer b[3];
    Py_ssize_t items[3] = {8, 1, 8};
    int held = 0;
    PyObject *result = NULL;
    for (; held < 3; held++)
        if (PyObject_GetBuffer(objs[held], &b[held], PyBUF_C_CONTIGUOUS) < 0)
            goto done;
    Py_ssize_t n = b[0].len / items[0];
    Py_ssize_t item = c->f32 ? 4 : 8;
    for (int k = 0; k < 3; k++)
        if (b[k].len != n * items[k]) {
            PyErr_SetString(PyExc_ValueError, "set_guards: three buffers of equal length");
            goto done;
        }
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_ssize_t at = ((int64_t *)b[0].buf)[k];
        signed char kind = ((signed char *)b[1].buf)[k];
        if (at < 0 || (at + 1) * item > c->bufs[1].len || kind < 0 || kind >= GUARD_KINDS) {
            PyErr_SetString(PyExc_ValueError, "set_guards: a guard lies outside F");
            goto done;
        }
    }
    PyMem_Free(c->guard_at);
    PyMem_Free(c->guard_kind);
    PyMem_Free(c->guard_want);
    c->n_guards = 0;
    c->guard_at = PyMem_Malloc(n * sizeof(Py_ssize_t) + 1);
    c->guard_kind = PyMem_Malloc(n + 1);
    c->guard_want = PyMem_Malloc(n * sizeof(double) + 1);
    if (c->guard_at == NULL || c->guard_kind == NULL || c->guard_want == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        c->guard_at[k] = ((int64_t *)b[0].buf)[k];
        c->guard_kind[k] = ((signed char *)b[1].buf)[k];
        c->guard_want[k] = ((double *)b[2].buf)[k];
    }
    c->n_guards = n;
    Py_INCREF(Py_None);
    result = Py_None;
done:
    for (int k = 0; k < held; k++)
        PyBuffer_Release(&b[k]);
    return result;
}

/* The index of the first guard that does not hold for F's values (as tracing/concrete.py's
   holds, whose kinds these numbers are), or -1. */
static inline Py_ssize_t
failed_guard(Caller *c)
{
    char *F = c->bufs[1].buf;
    for (Py_ssize_t k = 0; k < c->n_guards; k++) {
        double v = c->f32 ? (double)((float *)F)[c->guard_at[k]]
                          : ((double *)F)[c->guard_at[k]];
        double want = c->guard_want[k];
        int ok;
        int kind = c->guard_kind[k];
        switch (kind) {
        case 0:
            ok = (v != 0) == (want != 0);
            break;
        case 1:
            ok = v == want || (v != v && want != want);
            break;
        case 2:
            ok = trunc(v) == want;
            break;
        case 3:
            ok = (v != v) == (want != 0);
            break;
        default: {
            /* a comparison with the constant want, true (4 .. 9) or false (10 .. 15) */
            int cmp = (kind - 4) % 6, r;
            switch (cmp) {
            case 0: r = v > want; break;
            case 1: r = v >= want; break;
            case 2: r = v < want; break;
            case 3: r = v <= want; break;
            case 4: r = v == want; break;
            default: r = v != want;
            }
            ok = r == (kind < 10);
        }
        }
        if (!ok)
            return k;
    }
    return -1;
}

/* guards_hold(): whether every guard (set_guards) holds for F's values now, after a run of
   any mode that computed the values they read: one C loop instead of Python's read of them
   (the paths other than value_and_grad's: call plans, hvp, State.run). */
static PyObject *
Caller_guards_hold(Caller *c, PyObject *Py_UNUSED(ignored))
{
    if (c->n_guards && failed_guard(c) >= 0)
        Py_RETURN_FALSE;
    Py_RETURN_TRUE;
}

/* Write the n_in floats of the tuple args (already checked: a tuple of n_in items) into the
   first values, run the kernel's value-and-gradient mode and check the guards: the index of
   the first guard that does not hold, or -1; -2 with an exception set. *value: the run's. */
static inline Py_ssize_t
scalar_run(Caller *c, PyObject *args, double *value)
{
    char *F = c->bufs[1].buf;
    Py_ssize_t n = c->n_in;
    for (Py_ssize_t k = 0; k < n; k++) {
        double x = PyFloat_AsDouble(PyTuple_GET_ITEM(args, k));
        if (x == -1.0 && PyErr_Occurred())
            return -2;
        if (c->f32)
            ((float *)F)[c->at_val + k] = (float)x;
        else
            ((double *)F)[c->at_val + k] = x;
    }
    *value = run_kernel(c, 1);
    return c->n_guards ? failed_guard(c) : -1;
}

/* The gradient of input k after a scalar_run, as a Python float. */
static inline PyObject *
scalar_grad(Caller *c, Py_ssize_t k)
{
    char *F = c->bufs[1].buf;
    return PyFloat_FromDouble(c->f32 ? (double)((float *)F)[c->at_grad + k]
                                     : ((double *)F)[c->at_grad + k]);
}

/* The tuple of the n_in gradients after a scalar_run. */
static PyObject *
scalar_grads(Caller *c)
{
    PyObject *grads = PyTuple_New(c->n_in);
    if (grads == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < c->n_in; k++) {
        PyObject *x = scalar_grad(c, k);
        if (x == NULL) {
            Py_DECREF(grads);
            return NULL;
        }
        PyTuple_SET_ITEM(grads, k, x);
    }
    return grads;
}

/* (value, second), stealing second's reference. */
static PyObject *
pair(double value, PyObject *second)
{
    if (second == NULL)
        return NULL;
    PyObject *v = PyFloat_FromDouble(value);
    PyObject *out = v ? PyTuple_New(2) : NULL;
    if (out == NULL) {
        Py_XDECREF(v);
        Py_DECREF(second);
        return NULL;
    }
    PyTuple_SET_ITEM(out, 0, v);
    PyTuple_SET_ITEM(out, 1, second);
    return out;
}

/* value_and_grad(args): args is a tuple of n_in Python floats, written into the first
   values; runs the kernel's value-and-gradient mode; returns (value, (d0, d1, ...)), or
   (value, k) when guard k (set_guards) is the first that does not hold: the caller then
   decides (a retrace; the exact check after a data error). The caller checks that every
   argument is a float (the type test of the fast path). */
static PyObject *
Caller_value_and_grad(Caller *c, PyObject *args)
{
    if (!PyTuple_CheckExact(args) || PyTuple_GET_SIZE(args) != c->n_in) {
        PyErr_SetString(PyExc_TypeError, "value_and_grad takes a tuple of the input floats");
        return NULL;
    }
    double r;
    Py_ssize_t failed = scalar_run(c, args, &r);
    if (failed == -2)
        return NULL;
    return pair(r, failed >= 0 ? PyLong_FromSsize_t(failed) : scalar_grads(c));
}

static PyMethodDef Caller_methods[] = {
    {"set_scalars", (PyCFunction)Caller_set_scalars, METH_VARARGS,
     "set_scalars(n_in, at_val, at_grad, f32): the slots of the scalar fast path"},
    {"set_guards", (PyCFunction)Caller_set_guards, METH_VARARGS,
     "set_guards(at, kind, want[, f32]): the guards value_and_grad and guards_hold check"},
    {"guards_hold", (PyCFunction)Caller_guards_hold, METH_NOARGS,
     "guards_hold(): whether every guard (set_guards) holds for F's values now"},
    {"value_and_grad", (PyCFunction)Caller_value_and_grad, METH_O,
     "value_and_grad(floats): write the inputs, run mode 1, return (value, gradients)"},
    {NULL, NULL, 0, NULL},
};

static void
Caller_dealloc(Caller *c)
{
    for (int k = 0; k < c->held; k++)
        PyBuffer_Release(&c->bufs[k]);
    PyMem_Free(c->guard_at);
    PyMem_Free(c->guard_kind);
    PyMem_Free(c->guard_want);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyObject *
Caller_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *address, *arrays[3];
    int nogil = 0;
    if (!PyArg_ParseTuple(args, "OOOO|p", &address, &arrays[0], &arrays[1], &arrays[2], &nogil))
        return NULL;
    void *fn = PyLong_AsVoidPtr(address);
    if (fn == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "a kernel caller needs a non-null address");
        return NULL;
    }
    Caller *c = (Caller *)type->tp_alloc(type, 0);
    if (c == NULL)
        return NULL;
    c->vectorcall = Caller_vectorcall;
    c->fn = (run_fn)fn;
    c->nogil = nogil;
    for (int k = 0; k < 3; k++) {
        /* I is only read; F and C are written. All must be C-contiguous. */
        int flags = PyBUF_C_CONTIGUOUS | (k > 0 ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(arrays[k], &c->bufs[k], flags) < 0) {
            Py_DECREF(c);
            return NULL;
        }
        c->held = k + 1;
    }
    return (PyObject *)c;
}

static PyTypeObject CallerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "burnumba.kernels._bncall.Caller",
    .tp_basicsize = sizeof(Caller),
    .tp_dealloc = (destructor)Caller_dealloc,
    .tp_vectorcall_offset = offsetof(Caller, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Caller(address, I, F, C, nogil=False): call(mode) runs run(I, F, C, mode)",
    .tp_new = Caller_new,
    .tp_methods = Caller_methods,
};

/* Fast(local, run, n_in, with_value, single): a transformed function's scalar fast path,
 * whole, in one C call (about 200 ns less than the same steps in Python).
 *
 * fast(args) returns None unless args is a tuple of exactly n_in Python floats: the caller
 * then takes its general path. Otherwise it runs this thread's Caller, ``local.caller`` (a
 * threading.local's, set by the Python runner ``run`` once it made the thread's state),
 * and returns what ``run(args)`` would: (value, gradients) with ``with_value``, else the
 * gradients; a tuple of n_in floats, or the one float with ``single``. Every other case
 * goes to run(args): no caller yet on this thread, a guard that does not hold, or a NaN
 * value (which may be a data error to raise). run runs the kernel again there, which gives
 * the same numbers (a tape with random draws has no fast path). */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *local, *run, *name;
    Py_ssize_t n_in;
    int with_value, single;
} Fast;

static PyObject *
Fast_vectorcall(PyObject *self, PyObject *const *argv, size_t nargsf, PyObject *kwnames)
{
    Fast *f = (Fast *)self;
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a fast path takes one argument: the tuple of args");
        return NULL;
    }
    PyObject *args = argv[0];
    if (!PyTuple_CheckExact(args) || PyTuple_GET_SIZE(args) != f->n_in)
        Py_RETURN_NONE;
    for (Py_ssize_t k = 0; k < f->n_in; k++) {
        if (!PyFloat_CheckExact(PyTuple_GET_ITEM(args, k)))
            Py_RETURN_NONE;
    }
    PyObject *c = PyObject_GetAttr(f->local, f->name);
    if (c == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return NULL;
        PyErr_Clear();
        return PyObject_CallOneArg(f->run, args);
    }
    if (!PyObject_TypeCheck(c, &CallerType) || ((Caller *)c)->n_in != f->n_in) {
        Py_DECREF(c);
        return PyObject_CallOneArg(f->run, args);
    }
    Caller *caller = (Caller *)c;
    double r;
    Py_ssize_t failed = scalar_run(caller, args, &r);
    if (failed == -2) {
        Py_DECREF(c);
        return NULL;
    }
    if (failed >= 0 || r != r) {
        Py_DECREF(c);
        return PyObject_CallOneArg(f->run, args);
    }
    PyObject *grads = f->single ? scalar_grad(caller, 0) : scalar_grads(caller);
    Py_DECREF(c);
    return f->with_value ? pair(r, grads) : grads;
}

static int
Fast_traverse(Fast *f, visitproc visit, void *arg)
{
    Py_VISIT(f->local);
    Py_VISIT(f->run);
    return 0;
}

static int
Fast_clear(Fast *f)
{
    Py_CLEAR(f->local);
    Py_CLEAR(f->run);
    return 0;
}

static void
Fast_dealloc(Fast *f)
{
    PyObject_GC_UnTrack(f);
    Fast_clear(f);
    Py_CLEAR(f->name);
    Py_TYPE(f)->tp_free((PyObject *)f);
}

static PyObject *
Fast_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *local, *run;
    Py_ssize_t n_in;
    int with_value, single;
    if (!PyArg_ParseTuple(args, "OOnpp", &local, &run, &n_in, &with_value, &single))
        return NULL;
    if (n_in < 1 || (single && n_in != 1)) {
        PyErr_SetString(PyExc_ValueError, "Fast: n_in >= 1, and 1 with single");
        return NULL;
    }
    PyObject *name = PyUnicode_InternFromString("caller");
    if (name == NULL)
        return NULL;
    Fast *f = (Fast *)type->tp_alloc(type, 0);
    if (f == NULL) {
        Py_DECREF(name);
        return NULL;
    }
    f->vectorcall = Fast_vectorcall;
    Py_INCREF(local);
    Py_INCREF(run);
    f->local = local;
    f->run = run;
    f->name = name;
    f->n_in = n_in;
    f->with_value = with_value;
    f->single = single;
    return (PyObject *)f;
}

static PyTypeObject FastType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "burnumba.kernels._bncall.Fast",
    .tp_basicsize = sizeof(Fast),
    .tp_dealloc = (destructor)Fast_dealloc,
    .tp_vectorcall_offset = offsetof(Fast, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Fast(local, run, n_in, with_value, single): a scalar fast path in one call",
    .tp_new = Fast_new,
    .tp_traverse = (traverseproc)Fast_traverse,
    .tp_clear = (inquiry)Fast_clear,
};

/* address(array): where a C-contiguous buffer's data starts (about 0.1 us, against 1 us for
 * numpy's ``.ctypes.data``). The caller keeps the array alive while it uses the address. */
static PyObject *
address(PyObject *self, PyObject *obj)
{
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    PyObject *out = PyLong_FromVoidPtr(view.buf);
    PyBuffer_Release(&view);
    return out;
}

/* run_all(callers, mode): run every Caller of the tuple ``callers`` with ``mode``, each on
 * its own thread (OpenMP, when built with it; else one after another), with the GIL released
 * once; returns the tuple of their floats, or None in a child forked after OpenMP ran. The Callers hold their buffers, and the tuple
 * holds the Callers, for the whole call. */
#define RUN_ALL_MAX 256
#ifdef _OPENMP
#include <pthread.h>
/* libgomp is not fork-safe: a child forked after the parent's OpenMP threads ran waits for
 * them forever in its own first parallel region. So a process records that it ran them,
 * and a child forked after that runs no region (run_all returns None: the caller uses
 * threads of its own). The one state of this module, a fact about the process. */
static int team_started = 0, forked_after_team = 0;

static void
child_after_fork(void)
{
    if (team_started)
        forked_after_team = 1;
}
#endif

static PyObject *
run_all(PyObject *self, PyObject *args)
{
    PyObject *callers;
    long mode;
    if (!PyArg_ParseTuple(args, "O!l", &PyTuple_Type, &callers, &mode))
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(callers);
    if (n < 1 || n > RUN_ALL_MAX) {
        PyErr_Format(PyExc_ValueError, "run_all takes 1 to %d callers, got %zd", RUN_ALL_MAX, n);
        return NULL;
    }
    Caller *cs[RUN_ALL_MAX];
    double out[RUN_ALL_MAX];
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *c = PyTuple_GET_ITEM(callers, k);
        if (!PyObject_TypeCheck(c, &CallerType)) {
            PyErr_SetString(PyExc_TypeError, "run_all takes a tuple of Callers");
            return NULL;
        }
        cs[k] = (Caller *)c;
    }
    int threads = (int)n;
#ifdef _OPENMP
    if (forked_after_team)
        Py_RETURN_NONE;
    team_started = 1;
#endif
    Py_BEGIN_ALLOW_THREADS
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static, 1)
#endif
    for (int k = 0; k < threads; k++) {
        Caller *c = cs[k];
        out[k] = c->fn(c->bufs[0].buf, c->bufs[1].buf, c->bufs[2].buf, (int64_t)mode);
    }
    Py_END_ALLOW_THREADS
    PyObject *result = PyTuple_New(n);
    if (result == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *x = PyFloat_FromDouble(out[k]);
        if (x == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        PyTuple_SET_ITEM(result, k, x);
    }
    return result;
}

static PyMethodDef methods[] = {
    {"address", address, METH_O, "address(array): the address of a C-contiguous buffer"},
    {"run_all", run_all, METH_VARARGS,
     "run_all(callers, mode): run a tuple of Callers at once, one per thread; their floats"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_bncall", "Low-overhead calls into burnumba's compiled kernels.",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__bncall(void)
{
    if (PyType_Ready(&CallerType) < 0 || PyType_Ready(&FastType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&CallerType);
    if (PyModule_AddObject(m, "Caller", (PyObject *)&CallerType) < 0) {
        Py_DECREF(&CallerType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&FastType);
    if (PyModule_AddObject(m, "Fast", (PyObject *)&FastType) < 0) {
        Py_DECREF(&FastType);
        Py_DECREF(m);
        return NULL;
    }
#ifdef _OPENMP
    int parallel = 1;
    if (pthread_atfork(NULL, NULL, child_after_fork) != 0) {
        PyErr_SetString(PyExc_RuntimeError, "_bncall: pthread_atfork failed");
        Py_DECREF(m);
        return NULL;
    }
#else
    int parallel = 0;
#endif
    if (PyModule_AddIntConstant(m, "PARALLEL", parallel) < 0 ||
            PyModule_AddIntConstant(m, "GUARD_KINDS", GUARD_KINDS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
