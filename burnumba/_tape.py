"""The Tape: a traced function as a struct of numpy arrays, run by the njit entry points."""
import struct

import numpy as np

from . import kernels
from ._errors import InputError
from .kernels import ROWS


def check_integer_data(x, dtype):
    """Integer data written into a float tape must be exact there (below 2**24 in float32)."""
    if x.dtype.kind in "iu" and x.size:
        exact = 2 ** 24 if dtype == np.float32 else 2 ** 53      # integers a float holds
        big = max(int(x.max()), -int(x.min()))
        if big >= exact:
            raise InputError(f"integer data up to {big} does not fit exactly in this {dtype} "
                             f"tape; use indices below {exact}")


class Tape:
    """A traced function. Columns are numpy views into two packed buffers.

    ``op, a0, a1, pp, need, imm`` have one entry per node, ``off`` has n + 1 (node ``i`` owns
    ``val[off[i]:off[i+1]]`` and the same slice of ``grad``), ``P`` holds the integer
    parameters of n-ary and gather rows. The inputs are the first nodes, differentiated
    leaves first, so their values and gradients are the first elements of ``val`` / ``grad``.
    """

    def __init__(self, builder, key, n_diff, in_slots, out, out_shape, aux):
        b = builder
        self.key = key
        self.n = b.n
        self.I, self.F = kernels.pack(b.op, b.a0, b.a1, b.pp, b.need, b.off, b.params, b.imm,
                                      out, scratch=b.scratch, dtype=b.dtype)
        self.dtype = b.dtype
        for name, column in kernels.views(self.I, self.F).items():
            setattr(self, name, column)
        for node, values in b.consts.items():
            self.val[b.off[node]:b.off[node + 1]] = values
        self.shapes = b.shapes
        self.n_diff = n_diff                 # how many input leaves are differentiated
        self.in_slots = in_slots             # per input leaf: (start, size, shape, is_py_float)
        self.n_diff_elems = sum(s[1] for s in in_slots[:n_diff])
        self.out = out                       # output node
        self.out_shape = out_shape
        self.aux = aux                       # (treedef, [(node, shape) or ("const", value)])
        self._write_in = self._make_writer()
        self._vg = kernels.entry(kernels.value_and_grad, self.dtype)
        self._fwd = self._vjp = None       # loaded on first use: each costs ~0.1 s warm
        self.plan = None                   # the CallPlan bn.grad / value_and_grad made

    # -- running --------------------------------------------------------------------------
    def _make_writer(self):
        """Copy input leaves into their slices (views made once); scalars by item."""
        val = self.val
        dtype = self.dtype
        slots = [(start, val[start:start + size].reshape(shape) if shape else None)
                 for start, size, shape, _ in self.in_slots]

        def write(leaves):
            for (start, dst), x in zip(slots, leaves):
                if dst is None:
                    val[start] = x
                    continue
                dst[...] = x
                check_integer_data(x, dtype)
        return write

    def _read(self, node, shape):
        o = int(self.off[node])
        return self.val[o:o + int(self.off[node + 1]) - o].reshape(shape).copy() if shape \
            else np.float64(self.val[o])

    def _aux_values(self):
        if self.aux is None:
            return None
        from ._pytree import unflatten
        treedef, items = self.aux
        return unflatten(treedef, [self._read(*it) if it[0] != "const" else it[1] for it in items])

    def run_value_and_grad(self, leaves, copy=True):
        """leaves: the input leaves in slot order. Returns (value, a copy of the flat
        gradient of the differentiated inputs), or only the value when not ``copy``."""
        self._write_in(leaves)
        value = self._vg(self.I, self.F)
        return (value, self.grad[:self.n_diff_elems].copy()) if copy else value

    def vjp(self, seed):
        """Forward, then pull the flat cotangent ``seed`` back; gradients stay in ``grad``."""
        if self._vjp is None:
            self._vjp = kernels.entry(kernels.vjp, self.dtype, seed=True)
        self._vjp(self.I, self.F, np.ascontiguousarray(seed, dtype=self.dtype))

    def run_forward(self, leaves):
        self._write_in(leaves)
        if self._fwd is None:
            self._fwd = kernels.entry(kernels.run_forward, self.dtype)
        self._fwd(self.I, self.F)
        return self._read(self.out, self.out_shape)

    def split_grads(self, flat):
        """Per differentiated leaf, in float64: a Python float for a Python float, a numpy
        float64 scalar for a numpy scalar, and an array of the leaf's shape for an array."""
        out = []
        for start, size, shape, py in self.in_slots[:self.n_diff]:
            if shape == ():
                out.append(float(flat[start]) if py else flat[start])
            else:
                out.append(flat[start:start + size].reshape(shape))
        return out

    def scalar_runner(self, order, with_value, single):
        """A call path for the case where every argument is a differentiated Python float.

        The inputs are the first nodes, so one ``struct`` call writes them all into F and one
        reads their gradients back as Python floats; both are cheaper than numpy item access.
        They go through a memoryview taken once, which spares numpy's buffer export per call.
        ``order[j]`` is the argument position of the j-th entry of argnums.
        """
        I, kern = self.I, self._vg
        F = self.F
        M = memoryview(F)
        nd = self.n_diff
        layout = struct.Struct(f"{nd}d")
        pack_into, unpack_from = layout.pack_into, layout.unpack_from
        at_val = F.itemsize * self.n                  # F = imm[n] | val | grad
        at_grad = at_val + F.itemsize * self.val.size
        if single:
            k = order[0]
            if with_value:
                def run(args):
                    pack_into(M, at_val, *args)
                    return kern(I, F), unpack_from(M, at_grad)[k]
            else:
                def run(args):
                    pack_into(M, at_val, *args)
                    kern(I, F)
                    return unpack_from(M, at_grad)[k]
        elif list(order) == list(range(nd)):
            if with_value:
                def run(args):
                    pack_into(M, at_val, *args)
                    return kern(I, F), unpack_from(M, at_grad)
            else:
                def run(args):
                    pack_into(M, at_val, *args)
                    kern(I, F)
                    return unpack_from(M, at_grad)
        else:
            def run(args):
                pack_into(M, at_val, *args)
                value = kern(I, F)
                g = unpack_from(M, at_grad)
                g = tuple([g[k] for k in order])
                return (value, g) if with_value else g
        return run

    # -- public calls, with the arguments checked against the traced signature --------------
    def __call__(self, *args, **kwargs):
        """The output for these arguments (same structure, shapes and dtypes as traced)."""
        from ._api import run_tape
        return run_tape(self, args, kwargs, with_grad=False)

    def value_and_grad(self, *args, **kwargs):
        """``(value, grad)`` for these arguments, for the argnums the tape was traced with."""
        from ._api import run_tape
        return run_tape(self, args, kwargs, with_grad=True)

    # -- inspection -----------------------------------------------------------------------
    def __len__(self):
        return self.n

    @property
    def nbytes(self):
        """Bytes held by every array of the tape (columns, parameters, values, gradients)."""
        return self.I.nbytes + self.F.nbytes

    @property
    def bytes_per_node(self):
        return self.nbytes / max(self.n, 1)

    def row(self, i):
        """One node as text: ``%i = name(%a0, %a1) shape``."""
        r = ROWS[self.op[i]]
        args = []
        if r.kind == "map" or r.name == "where":
            args = [f"%{self.a0[i]}"] + ([f"%{self.a1[i]}"] if self.a1[i] >= 0 else [])
            if r.name == "where":
                args.insert(0, f"%{self.P[self.pp[i]]}")
        elif r.name in ("sum", "sumsq", "inner"):
            p = self.pp[i]
            m = self.P[p]
            ids = self.P[p + 1:p + 1 + (2 * m if r.name == "inner" else m)]
            args = [f"%{k}" for k in ids[:8]] + (["..."] if len(ids) > 8 else [])
            if r.name == "inner" and self.a0[i] >= 0:
                args.append(f"bias=%{self.a0[i]}")
        elif r.name == "gather":
            args = [f"%{self.a0[i]}, ..."]
        if r.name in ("powi", "pow_c") or (r.name == "sum" and self.imm[i] != 1.0):
            args.append(f"c={self.imm[i]:g}")
        shape = self.shapes[i]
        o, e = int(self.off[i]), int(self.off[i + 1])
        shown = np.array2string(self.val[o:min(e, o + 4)], precision=6, separator=", ")
        if e - o > 4:
            shown = shown[:-1] + ", ...]"
        need = " " if self.need[i] else "·"
        return f"{need} %{i:<4d} = {r.name}({', '.join(args)})  {list(shape)}  val={shown}"

    def __str__(self, limit=60):
        lines = [f"Tape: {self.n} nodes, {self.val.size} {self.dtype} values, {self.nbytes} bytes "
                 f"({self.bytes_per_node:.1f} B/node); output %{self.out}"]
        idx = range(self.n) if self.n <= limit else \
            list(range(limit // 2)) + [None] + list(range(self.n - limit // 2, self.n))
        for i in idx:
            lines.append("  ..." if i is None else "  " + self.row(i))
        lines.append("  (· = no gradient flows through this node)")
        return "\n".join(lines)

    def __repr__(self):
        return f"<burnumba.Tape: {self.n} nodes, {self.nbytes} bytes, output %{self.out}>"
