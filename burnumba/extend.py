"""burnumba.extend: autograd's ``autograd.extend`` for migrating code. A function made a
``primitive`` gets its derivatives from the rules ``defvjp`` / ``defjvp`` give, argument by
argument, in autograd's signatures (a None rule is a zero derivative, as autograd's; also
``defvjp_argnum``, ``defjvp_argnum`` and ``def_linear``); its body (traceable numpy) gives
the value.

>>> import numpy as np
>>> from burnumba.extend import primitive, defvjp
>>> @primitive
... def logsumexp(x):
...     m = np.max(x)
...     return m + np.log(np.sum(np.exp(x - m)))
>>> defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))
"""
from .transforms.custom import def_linear, defjvp, defjvp_argnum, defvjp, defvjp_argnum, primitive

__all__ = ["primitive", "defvjp", "defjvp", "defvjp_argnum", "defjvp_argnum", "def_linear"]
