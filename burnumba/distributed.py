"""``burnumba.distributed`` (gradients and training on Dask) is ``burnumba.train.distributed``:
importing this path gives that module itself, so its names, pickles and monkeypatches are the
same."""
import sys

from .train import distributed

sys.modules[__name__] = distributed
