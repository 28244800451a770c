"""The transformations: a traced function becomes a cached tape per input signature.

core.py       the core: Cache (the bounded store of traced forms, their variants, the lock),
              TapeCache on it (argnums, a tape per signature, trace -> tape -> run, the
              nested path: called on traced values), and grad / value_and_grad / trace
nested.py     the transformations on traced values (emitted into the outer trace)
outputs.py    outputs as one array (pytrees of outputs; the scalar-output checks)
forward.py    jvp, linearize, vjp, the Jacobians, hessian, hvp (on the core's TapeCache)
vmap.py       vmap: the wide tape run in chunks on OpenMP's threads (on the core's Cache)
njit.py       njit_value_and_grad: a handle that the user's @numba.njit code calls
"""
