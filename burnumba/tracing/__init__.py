"""Recording: running the user's function on ``Var`` objects appends rows to a ``Builder``.

tracer.py     Builder (the growing struct-of-arrays trace) and Var / ArrayVar (traced values)
signature.py  a call's signature: differentiated, data and static leaves; the cache key
pytree.py     tuples, lists, dicts and namedtuples flattened to leaves and a structure
plan.py       the fast path for calls shaped like the traced one
"""
