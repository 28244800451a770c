"""The tape: a finished trace as immutable numpy arrays, and what can be done with it as data.

tape.py       Tape (op, a0, a1, pp, need, off, P views of one int array; F0) and State
              (values, gradients and scratch of one run: per call or per thread)
tapefile.py   the .npz format, pickling, validation of untrusted arrays, DOT pictures
checked.py    debug_nans: the stepped run that finds the first non-finite node
profile.py    Tape.profile: the stepped runs timed node by node
lanes.py      the wide form of a tape: L samples side by side (vmap's kernels)
"""
