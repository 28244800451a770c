"""``burnumba.nn`` (layers and the paper's models) is ``burnumba.train.nn``:
importing this path gives that module itself, so its names, pickles and monkeypatches are the
same."""
import sys

from .train import nn

sys.modules[__name__] = nn
