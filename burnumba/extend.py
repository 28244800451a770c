"""burnumba.extend: autograd's ``autograd.extend`` for migrating code. A function made a
``primitive`` gets its derivatives from the rules ``defvjp`` / ``defjvp`` give, argument by
argument, in autograd's signatures; its body (traceable numpy) gives the value.

>>> import numpy as np
>>> from burnumba.extend import primitive, defvjp
>>> @primitive
... def logsumexp(x):
...     m = np.max(x)
...     return m + np.log(np.sum(np.exp(x - m)))
>>> defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))
"""
from .transforms.custom import defjvp, defvjp, primitive

__all__ = ["primitive", "defvjp", "defjvp"]
