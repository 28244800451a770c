"""burnumba.optim: the update kernels against torch.optim's formulas written out in numpy
(and against torch itself when it is installed), clipping, schedules."""
import math

import numpy as np
import pytest

import burnumba as bn
from burnumba import optim


# -- reference updates: torch.optim's documented algorithms, in float64 numpy ---------------
def ref_sgd(p, grads, lr, momentum=0.0, weight_decay=0.0, nesterov=False):
    p, buf = p.copy(), None
    for g in grads:
        d = g + weight_decay * p
        if momentum:
            buf = d.copy() if buf is None else momentum * buf + d
            d = d + momentum * buf if nesterov else buf
        p = p - lr * d
    return p


def ref_adam(p, grads, lr, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.0, decoupled=False):
    p = p.copy()
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        mhat, vhat = m / (1 - b1 ** t), v / (1 - b2 ** t)
        p = p - lr * mhat / (np.sqrt(vhat) + eps)
    return p


CASES = [
    (lambda: optim.SGD(0.1), lambda p, gs: ref_sgd(p, gs, 0.1)),
    (lambda: optim.SGD(0.05, momentum=0.9, weight_decay=0.01),
     lambda p, gs: ref_sgd(p, gs, 0.05, 0.9, 0.01)),
    (lambda: optim.SGD(0.05, momentum=0.8, nesterov=True),
     lambda p, gs: ref_sgd(p, gs, 0.05, 0.8, nesterov=True)),
    (lambda: optim.Adam(3e-3, weight_decay=0.1),
     lambda p, gs: ref_adam(p, gs, 3e-3, weight_decay=0.1)),
    (lambda: optim.AdamW(3e-3, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.05),
     lambda p, gs: ref_adam(p, gs, 3e-3, 0.8, 0.99, 1e-6, 0.05, decoupled=True)),
]


@pytest.mark.parametrize("make, ref", CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_update_matches_reference(make, ref, dtype):
    rng = np.random.default_rng(0)
    p0 = rng.normal(size=1000)
    grads = [rng.normal(size=1000) * rng.uniform(0.1, 3.0) for _ in range(7)]
    opt = make()
    p = p0.astype(dtype)
    for g in grads:
        opt.step(p, g.astype(dtype))
    expect = ref(p0, [g.astype(dtype).astype(np.float64) for g in grads])
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(p, expect, rtol=tol, atol=tol)
    assert opt.t == 7


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_update_matches_torch(name):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    p0 = rng.normal(size=300)
    kw = {"SGD": dict(lr=0.05, momentum=0.9, weight_decay=0.01),
          "Adam": dict(lr=1e-2, weight_decay=0.1),
          "AdamW": dict(lr=1e-2, weight_decay=0.1)}[name]
    ours = getattr(optim, name)(**kw)
    tp = torch.tensor(p0.copy(), requires_grad=True)
    theirs = getattr(torch.optim, name)([tp], **kw)
    p = p0.copy()
    for _ in range(5):
        g = rng.normal(size=300)
        ours.step(p, g)
        tp.grad = torch.tensor(g)
        theirs.step()
    np.testing.assert_allclose(p, tp.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_schedule_is_read_per_step():
    opt = optim.SGD(lambda t: 0.1 * (t + 1))       # 0.1, then 0.2
    p = np.zeros(3)
    opt.step(p, np.ones(3))
    opt.step(p, np.ones(3))
    np.testing.assert_allclose(p, -0.3)


def test_cosine_schedule():
    s = optim.cosine(1e-3, total_steps=110, warmup=10, min_lr=1e-4)
    assert math.isclose(s(0), 1e-4) and math.isclose(s(9), 1e-3)
    assert math.isclose(s(10), 1e-3)
    assert math.isclose(s(60), 1e-4 + 0.5 * 9e-4)
    assert math.isclose(s(110), 1e-4) and math.isclose(s(500), 1e-4)
    values = [s(t) for t in range(10, 111)]
    assert all(a >= b for a, b in zip(values, values[1:]))


def test_clip_grad_norm():
    rng = np.random.default_rng(2)
    g = rng.normal(size=500)
    norm0 = float(np.linalg.norm(g))
    assert math.isclose(optim.clip_grad_norm(g, 2.0), norm0, rel_tol=1e-12)
    assert math.isclose(np.linalg.norm(g), 2.0 * norm0 / (norm0 + 1e-6), rel_tol=1e-12)
    h = rng.normal(size=500) * 1e-3
    before = h.copy()
    optim.clip_grad_norm(h, 10.0)
    np.testing.assert_array_equal(h, before)          # under the limit: untouched


def test_state_dict_round_trip():
    rng = np.random.default_rng(3)
    a, b = optim.AdamW(1e-2), optim.AdamW(1e-2)
    pa = rng.normal(size=50)
    for _ in range(3):
        a.step(pa, rng.normal(size=50))
    b.load_state_dict(a.state_dict())
    pb = pa.copy()
    g = rng.normal(size=50)
    a.step(pa, g)
    b.step(pb, g)
    np.testing.assert_array_equal(pa, pb)
    assert b.t == 4


def test_bad_arguments_name_the_fix():
    opt = optim.Adam()
    with pytest.raises(bn.InputError, match="flat_params"):
        opt.step(np.zeros((3, 3)), np.zeros((3, 3)))
    with pytest.raises(bn.ShapeError, match="do not match"):
        opt.step(np.zeros(3), np.zeros(4))
    opt.step(np.zeros(3), np.ones(3))
    with pytest.raises(bn.ShapeError, match="new optimiser"):
        opt.step(np.zeros(5), np.ones(5))
    with pytest.raises(bn.CheckpointError, match="optimiser state"):
        optim.SGD(0.1).load_state_dict({"lr": 0.1})
