"""Derivatives as traced ops: every row's vjp and jvp written with burnumba.numpy, so that a
derivative is itself a trace that can be differentiated, batched and compiled.

graph.py    a trace seen as a graph (operands, parameters, sources of arena positions)
maps.py     map rows: the op table's rules evaluated on traced values
reduce.py, softmax.py, gather.py, matmul.py
            block rows, one module per family, each with its RULES {name: (vjp, jvp)}
            (linalg's rows keep theirs in burnumba/numpy/linalg.py: BLOCK)
traced.py   the rows that carry their rules in numpy's names (Op.traced): run here
sweeps.py   a node's vjp / jvp by its row; the backward and forward sweeps
batched.py  the forward sweep with B directions at once (Jacobians, Hessians)
"""
