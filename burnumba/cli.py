"""``burnumba.cli`` (the ``burnumba`` command) is ``burnumba.train.cli``:
importing this path gives that module itself, so its names, pickles and monkeypatches are the
same."""
import sys

from .train import cli

sys.modules[__name__] = cli
