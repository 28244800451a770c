"""``autograd.misc.flatten``'s path: ``from burnumba.misc.flatten import flatten_func``.
``flatten`` and ``flatten_func`` are ``bn.flatten`` and ``bn.flatten_func``."""
from ..tools.check import flatten, flatten_func

__all__ = ["flatten", "flatten_func"]
