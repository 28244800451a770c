"""Derivatives as traced ops: every row's vjp and jvp written with burnumba.numpy, so that a
derivative is itself a trace that can be differentiated, batched and compiled.

graph.py    a trace seen as a graph (operands, parameters, sources of arena positions)
maps.py     map rows: the op table's rules evaluated on traced values
traced.py   every block row's rules, which its row carries (kernels/blocks_<family>.py):
            those in numpy's names (Op.traced), run by the row's layout, and those that
            read the trace itself (Op.on_trace: gather, scatter, take, take_add,
            cross_entropy, matmul's batched rule), run on a Trace; no code per row
sweeps.py   a node's vjp / jvp by its row; the backward and forward sweeps
batched.py  the forward sweep with B directions at once (Jacobians, Hessians)
"""
