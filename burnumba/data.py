"""``burnumba.data`` (tokenizer, corpora and samplers) is ``burnumba.train.data``:
importing this path gives that module itself, so its names, pickles and monkeypatches are the
same."""
import sys

from .train import data

sys.modules[__name__] = data
