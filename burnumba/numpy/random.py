"""``import burnumba.numpy.random as npr`` (autograd's ``autograd.numpy.random``): numpy.random
itself, looked up at each use. A draw inside a traced function is recorded wherever it is
made (plain ``np.random``, a ``RandomState`` or a ``Generator``): each call draws fresh
numbers from the user's generator, as the untraced program does (tracing/randomness.py)."""
from ._common import namesake

__getattr__ = namesake(__name__, "numpy.random")
