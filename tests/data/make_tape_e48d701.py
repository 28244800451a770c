# Made with the burnumba of commit e48d701 (git worktree add /work/wt-old e48d701; its
# own venv): python tests/data/make_tape_e48d701.py tests/data/tape_e48d701.pkl. Not a test.
"""Run with the burnumba of commit e48d701: pickles a tape traced there."""
import pickle
import sys
import numpy as np
import burnumba as bn



def f(w, x):
    h = np.tanh(x @ w)
    p = bn.softmax(h, axis=-1)
    return np.sum(p * p) + 0.5 * np.sum(w * w)


w = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
x = np.linspace(0.5, -0.5, 8).reshape(2, 4)
tape = bn.trace(f, w, x, argnums=0)
data = pickle.dumps(tape, protocol=4)
open(sys.argv[1], "wb").write(data)
print(len(data), tape)
