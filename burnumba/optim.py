"""``burnumba.optim`` (optimisers and the Trainer) is ``burnumba.train.optim``:
importing this path gives that module itself, so its names, pickles and monkeypatches are the
same."""
import sys

from .train import optim

sys.modules[__name__] = optim
