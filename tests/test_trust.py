"""The non-finite locator and the hard edges of the API: nested transformations, the bounded
tape cache, frozen captures, and ndarray methods a traced value does not have."""
import numpy as np
import pytest

import burnumba as bn
from burnumba import nn, optim


def _bad_log(x, y):
    a = np.sin(x) * y
    b = np.log(a)                       # NaN where a < 0
    return np.sum(b * 2.0)


def test_debug_nans_names_the_forward_node_and_the_line():
    vg = bn.value_and_grad(_bad_log)
    x, y = np.array([0.5, 1.0]), np.array([1.0, -2.0])
    value, _ = vg(x, y)                 # off: a NaN result, no error
    assert np.isnan(value)
    with pytest.raises(FloatingPointError) as e, bn.debug_nans():
        vg(x, y)
    msg = str(e.value)
    assert isinstance(e.value, bn.NonFiniteError)
    assert "forward value" in msg and "= log" in msg and "nan at flat index 1" in msg
    assert "b = np.log(a)" in msg and "test_trust.py" in msg
    vg(x, y)                            # the context restored the switch


def test_debug_nans_names_the_backward_node_and_its_operand():
    g = bn.grad(lambda x: np.sum(np.sqrt(x)))
    bn.debug_nans(True)                 # as a global switch
    try:
        with pytest.raises(bn.NonFiniteError) as e:
            g(np.array([0.0, 1.0]))
    finally:
        bn.debug_nans(False)
    msg = str(e.value)
    assert "backward of node %1 = sqrt" in msg and "operand %0 (input) inf" in msg
    assert "np.sum(np.sqrt(x))" in msg
    assert np.isinf(g(np.array([0.0, 1.0]))[0])       # off again: no check


def test_debug_nans_on_scalars_inputs_and_a_trainer():
    vg = bn.value_and_grad(lambda a, b: a / b, argnums=(0, 1))
    assert vg(1.0, 2.0) == (0.5, (0.5, -0.25))        # the fast path, before and after
    with bn.debug_nans():
        with pytest.raises(bn.NonFiniteError, match="= divide"):
            vg(1.0, 0.0)
        with pytest.raises(bn.NonFiniteError, match="input of node %0"):
            vg(float("nan"), 1.0)
        assert vg(1.0, 2.0) == (0.5, (0.5, -0.25))
    model = nn.MLP([3, 8, 2])
    x, y = np.random.default_rng(0).normal(size=(4, 3)), np.array([0, 1, 1, 0])
    params = model.init(seed=0)
    params["layers.0.b"][0] = np.inf
    trainer = optim.Trainer(model.loss, params, optim.SGD(0.1), x, y)
    with bn.debug_nans(), pytest.raises(bn.NonFiniteError, match="input of node"):
        trainer.step(x, y)


def test_transformations_nest_and_say_so_where_they_cannot():
    assert bn.grad(bn.grad(lambda x: x ** 3))(2.0) == 12.0
    # a closure over the outer value: the inner derivative treats it as a constant
    assert bn.grad(lambda x: bn.value_and_grad(lambda y: y * x)(1.0)[1])(2.0) == 1.0
    with pytest.raises(bn.UnsupportedOpError, match="bn.trace on traced values"):
        bn.grad(lambda x: bn.trace(lambda y: y * 2.0, x).n * x)(2.0)


def test_the_tape_cache_is_bounded_least_recently_used():
    g = bn.grad(lambda x, n: x * n, cache_size=3, static_argnums=1)
    for n in range(10):                  # a static argument with 10 values
        assert g(2.0, n) == n
    assert len(g.tapes) == 3
    def static_values():                 # the key's part for argument 1: (treedef, ((int, n),))
        return [key[1][1][0][1] for key in g.tapes]
    assert static_values() == [7, 8, 9]                      # the last three
    g(2.0, 7)                             # a hit moves 7 to the end
    g(2.0, 10)
    assert static_values() == [9, 7, 10]
    with pytest.raises(bn.InputError, match="cache_size"):
        bn.grad(lambda x: x, cache_size=0)


def test_captured_arrays_are_frozen_at_trace_time():
    """As under jax.jit: a captured array is a constant of the tape. Changing it later does
    not change the traced function (pass it as an argument to vary it)."""
    w = np.array([1.0, 2.0])
    g = bn.value_and_grad(lambda x: np.sum(w * x))
    assert g(np.ones(2))[0] == 3.0
    w[:] = [10.0, 20.0]
    assert g(np.ones(2))[0] == 3.0
    assert bn.value_and_grad(lambda x, w: np.sum(w * x))(np.ones(2), w)[0] == 30.0


@pytest.mark.parametrize("method", ["searchsorted", "partition", "argpartition", "tolist",
                                    "resize", "dump", "choose"])
def test_every_unsupported_ndarray_method_is_a_burnumba_error(method):
    def f(x):
        attr = getattr(x, method)
        return np.sum(x) if not callable(attr) else attr()
    with pytest.raises(bn.UnsupportedOpError, match=f"ndarray.{method} is not supported"):
        bn.grad(f)(np.ones(3))


def test_squeeze_and_astype_on_traced_arrays():
    g = bn.grad(lambda x: np.sum(x.reshape(3, 1).squeeze().astype(np.float64) ** 2))
    np.testing.assert_array_equal(g(np.ones(3)), [2.0, 2.0, 2.0])
    g32 = bn.grad(lambda x: np.sum(x.squeeze(axis=0).astype(np.float32) * 3.0))
    out = g32(np.ones((1, 2), np.float32))
    assert out.dtype == np.float32 and out.tolist() == [[3.0, 3.0]]
    with pytest.warns(bn.PrecisionWarning, match="float32"):
        bn.grad(lambda x: np.sum(x.astype(np.float32)))(np.ones(3))
    # astype(int) is trunc with no gradient (an index computed from traced values, #30)
    np.testing.assert_array_equal(bn.grad(lambda x: np.sum(x.astype(int)))(np.ones(3)), 0.0)
    with pytest.raises(bn.UnsupportedOpError, match="not be differentiable"):
        bn.grad(lambda x: np.sum(x.astype(bool)))(np.ones(3))
    with pytest.raises(bn.UnsupportedOpError, match="complex"):
        bn.grad(lambda x: np.sum(x.astype(complex)))(np.ones(3))
    assert not hasattr(bn.trace(lambda x: x, np.ones(2)).shapes, "nope")
