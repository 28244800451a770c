"""The kernels' exception (re-exported as ``burnumba.KernelError``); a module of its own, so
that the op table and the rule reader can use it without importing the engine."""


class KernelError(RuntimeError):
    """A kernel could not be built or loaded (the message names the file and the fix)."""
