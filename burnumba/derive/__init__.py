"""Derivatives as traced ops: every row's vjp and jvp written with burnumba.numpy, so that a
derivative is itself a trace that can be differentiated, batched and compiled.

graph.py    a trace seen as a graph (operands, parameters, sources of arena positions)
maps.py     map rows: the op table's rules evaluated on traced values
traced.py   the block rows that carry their rules in numpy's names (Op.traced, in their
            kernels/blocks_<family>.py): run here, by their layout, with no code per row
softmax.py, gather.py
            the block rows whose derivatives are made of rows without a numpy name
            (cross_entropy: the softmax row; gather, scatter, take, take_add: arena
            positions and the adjoint rows), each module with its RULES {name: (vjp, jvp)}
sweeps.py   a node's vjp / jvp by its row; the backward and forward sweeps
batched.py  the forward sweep with B directions at once (Jacobians, Hessians); the batched
            rules of gather and matmul, which read how the trace holds their operands
"""
