"""The code generated from the op table: self-contained, and exactly the rows asked for."""
import ast

import pytest

from burnumba.kernels import _gen, layout, rules
from burnumba.kernels.ops import BY_NAME, ROWS

NON_LEAVES = [r for r in ROWS if r.kind != "leaf"]


def _imports(source):
    tree = ast.parse(source)
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "generated code must not import relative modules"
            modules.add(node.module)
    return modules


def _defined(source):
    return {n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)}


@pytest.mark.parametrize("row", NON_LEAVES, ids=lambda r: r.name)
def test_each_row_module_is_self_contained_python(row):
    """A row module imports only math and numpy (the rest, gemm, is bound by the loader),
    and defines its forward, tangent and (when it has one) backward function."""
    source = _gen.row_module(row)
    compile(source, f"<{row.name}>", "exec")
    assert _imports(source) <= {"math", "numpy"}
    expected = {f"{row.name}_fwd"} | (
        {f"{row.name}_jvp"} if _gen.has_tangent(row) else set()) | (
        {f"{row.name}_bwd"} if _gen.has_backward(row) else set())
    assert _defined(source) == expected
    assert "raise " not in source, "kernels report errors through the control block"


@pytest.mark.parametrize("names", [("add", "multiply"), ("tanh", "matmul", "softmax"),
                                   tuple(r.name for r in NON_LEAVES)])
def test_a_dispatcher_holds_exactly_its_rows(names):
    """The dispatcher of a set of rows has a branch per row (and the leaves), each a function
    of its own (inlined back into ``run`` when compiled), calls only those rows' functions,
    and nothing else: the cost of a program grows with its ops."""
    rows = [BY_NAME[n] for n in names]
    source = _gen.dispatcher_module(rows, set(names))
    compile(source, "<run>", "exec")
    assert _imports(source) <= {"math", "numpy"}
    branches = {f"branch_fwd_{r.name}" for r in rows} | {
        f"branch_bwd_{r.name}" for r in rows if _gen.has_backward(r)}
    assert _defined(source) == {"run"} | branches
    namespace = {}
    exec(compile(source, "<run>", "exec"), namespace)
    assert set(namespace["BRANCHES"]) == branches
    opcodes = {line.split(" = ")[0].lower() for line in source.splitlines()
               if line.split(" = ")[0].isupper() and line.split(" = ")[0].lower() in BY_NAME}
    assert opcodes == set(names) | {"input", "const"}
    called = {n.func.id for n in ast.walk(ast.parse(source))
              if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
              and n.func.id.endswith(("_fwd", "_bwd"))}
    assert called == set(_gen.externals([BY_NAME[n] for n in names], set(names)))


def test_map_rows_used_on_scalars_only_link_no_loops():
    """A map row whose nodes are all scalars runs inline: its tensor functions are neither
    called nor linked (a tensor node of it would be an error, which the tape check rules
    out); block rows call theirs, except the small ones written inline (gather, sum,
    softmax)."""
    rows = [BY_NAME[n] for n in ("add", "tanh", "layer_norm", "gather", "sum", "softmax")]
    source = _gen.dispatcher_module(rows, {"tanh"})
    assert "add_fwd(" not in source and "tanh_fwd(" in source and "layer_norm_fwd(" in source
    assert "gather_fwd(" not in source and "sum_bwd(" not in source
    assert "softmax_fwd(" not in source
    assert set(_gen.externals(rows, {"tanh"})) == {"tanh_fwd", "tanh_bwd", "layer_norm_fwd",
                                                    "layer_norm_bwd"}


def _clobbers_the_sample(oy, val):
    sample = 1.0
    val[oy] = sample


def _returns_a_status(oy, val):
    val[oy] = 1.0
    return 2


@pytest.mark.parametrize("rule, words", [
    (_clobbers_the_sample, "assigns the interpreter loop's names ['sample']"),
    (_returns_a_status, "returns a status"),
])
def test_an_inline_block_row_may_not_clobber_the_loop(rule, words):
    """A row written into the interpreter loop must not assign the names the loop keeps
    across nodes (the vmap ``sample``), nor return a status, which would leave the loop."""
    row = BY_NAME["gather"]._replace(name="myrow", fwd=rule)
    with pytest.raises(rules.RuleError, match="myrow") as e:
        _gen._inline_block(row, "fwd")
    assert words in str(e.value)


def _reads_the_lanes(oy, val, lanes):
    val[oy] = 1.0 * lanes


def test_an_inline_block_row_may_not_read_the_loop():
    """A branch of the interpreter loop is a function of its own, passed the arrays, the
    node and the column bases: a row that reads another of the loop's names (the vmap
    ``lanes``) is refused with its name, not compiled into a NameError."""
    row = BY_NAME["gather"]._replace(name="myrow", fwd=_reads_the_lanes)
    with pytest.raises(rules.RuleError, match="myrow.*lanes"):
        _gen._branch_function(row, "branch_fwd_myrow", _gen._branch(row, "fwd", False))


def test_unknown_opcodes_are_an_error_not_a_skip():
    """A tape with an op the kernel was not built for must not be skipped silently."""
    source = _gen.dispatcher_module([BY_NAME["add"]], {"add"})
    assert source.count("C[C_ERR] = ERR_OPCODE") == 3     # forward, backward, no tangent sweep
    source = _gen.dispatcher_module([BY_NAME["add"]], {"add"}, jvp=True)
    assert source.count("C[C_ERR] = ERR_OPCODE") == 3     # forward, tangent, backward chains


def test_generated_code_indexes_columns_with_unsigned_offsets():
    """Every column access becomes I[np.uintp(b_col + x)] or F[np.uintp(...)]: unsigned
    indices let LLVM vectorize the loops (numba's wraparound test blocks it otherwise)."""
    source = _gen.row_module(BY_NAME["multiply"])
    assert "val[" not in source and "grad[" not in source and "off[" not in source
    assert "F[np.uintp(b_val + " in source and "I[np.uintp(b_off + " in source


def test_gemm_calls_are_rewritten_onto_the_packed_buffer():
    source = _gen.row_module(BY_NAME["matmul"])
    assert "gemm(C, 0, 0, M, N, K, F, b_val + xa, K, F, b_val + xb, N, 0.0, F, b_val + xy, N)" \
        in source


def test_layout_constants_reach_the_generated_code():
    source = _gen.dispatcher_module([BY_NAME["add"]], set())
    for name in ("C_ERR", "C_NODE", "MODE_VALUE_AND_GRAD", "ERR_OPCODE"):
        assert f"{name} = {getattr(layout, name)}\n" in source
