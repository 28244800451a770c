"""``x.at[idx].set(v)`` and its kin on traced arrays: JAX's functional updates, for programs
written for jax.numpy (``import burnumba.numpy as jnp``). Each returns a new array and leaves
``x`` as it was, through this package's in-place updates on a copy:

* ``set(v)``: ``y = x.copy(); y[idx] = v`` (numpy's rules: with a repeated index the last
  write wins, where JAX leaves the order unspecified);
* ``add(v)``: ``np.add.at`` on a copy, so a repeated index adds every time, as JAX's;
* ``multiply``, ``divide``, ``power``, ``min``, ``max`` (``mul``, ``pow`` too):
  ``y[idx] = f(y[idx], v)``, which equals JAX's for an index without repeats: a basic index
  (ints, slices, None, ...), or a constant integer array whose entries differ; a traced or
  repeated array index is refused;
* ``get()``: ``x[idx]``.

Out-of-range indices follow numpy (an error), not JAX's clamping or dropping; ``mode=`` other
than None is refused, ``indices_are_sorted`` / ``unique_indices`` are hints and ignored."""
import numpy as np

from .._errors import UnsupportedOpError, at_user_site
from ..tracing.dispatch import implements_method
from ..tracing.tracer import Var
from .elementwise import maximum, minimum, power

_BUFFERED = {"multiply": np.multiply, "mul": np.multiply, "divide": np.divide,
             "power": power, "pow": power, "min": minimum, "max": maximum}


def _hints(name, kwargs):
    bad = {k: v for k, v in kwargs.items()
           if not (k in ("indices_are_sorted", "unique_indices") or (k == "mode" and v is None))}
    if bad:
        raise UnsupportedOpError(at_user_site(
            f"x.at[...].{name}({', '.join(f'{k}={v!r}' for k, v in bad.items())}): indices "
            "follow numpy here (an index out of range is an error); drop the argument"))


def _distinct(name, idx):
    """A key whose positions cannot repeat: else the buffered update would differ from JAX's."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    for k in parts:
        if k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer)):
            continue
        if isinstance(k, Var):
            raise UnsupportedOpError(at_user_site(
                f"x.at[traced index].{name}(v): with repeated indices JAX applies every one; "
                "write it as a product of scatter-adds (x.at[i].add(...)) or with an index "
                "without repeats"))
        arr = np.asarray(k)
        if arr.dtype.kind in "iu" and len(np.unique(arr)) != arr.size:
            raise UnsupportedOpError(at_user_site(
                f"x.at[idx].{name}(v) with a repeated index ({arr.tolist()!r:.60}): JAX "
                "applies it once per repeat; numpy's buffered update would apply it once. "
                "Combine the repeats first"))


class _Update:
    __slots__ = ("x", "idx")

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def get(self, **kwargs):
        _hints("get", kwargs)
        return self.x[self.idx]

    def set(self, values, **kwargs):
        _hints("set", kwargs)
        y = self.x.copy()
        y[self.idx] = values
        return y

    def add(self, values, **kwargs):
        _hints("add", kwargs)
        y = self.x.copy()
        np.add.at(y, self.idx, values)
        return y

    def _buffered(self, name, f, kwargs):
        """y[idx] = f(y[idx]) on a copy: JAX's update where no index repeats."""
        _hints(name, kwargs)
        _distinct(name, self.idx)
        y = self.x.copy()
        y[self.idx] = f(y[self.idx])
        return y

    def apply(self, func, **kwargs):
        return self._buffered("apply", func, kwargs)

    def __getattr__(self, name):
        op = _BUFFERED.get(name)
        if op is None:
            raise AttributeError(
                f"x.at[...] has no {name!r}: it has set, add, multiply, divide, power, min, "
                "max, apply and get (JAX's)")

        def update(values, **kwargs):
            return self._buffered(name, lambda old: op(old, values), kwargs)
        update.__name__ = name
        return update


class _At:
    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _Update(self.x, idx)


@implements_method("at")
def at(x):
    """``x.at``: JAX's functional-update helper (``x.at[idx].set(v)``, ``.add(v)``, ...)."""
    return _At(x)
