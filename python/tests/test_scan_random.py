"""Random recurrences (random taps on sequences and states, several outputs, going backwards,
vector and scalar steps) against a NumPy loop written from PyTensor's semantics, in both
backends (the native one runs elementwise steps as one C loop)."""

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt


def numpy_loop(xs, init, a, seq_taps, state_taps, backwards, combine):
    """The states' and the mapped output's trajectories, step by step."""
    lo, hi = min(seq_taps), max(seq_taps)
    offset = max(-lo, 0)
    windows = len(xs) - (max(hi, 0) + offset)
    need = -min(state_taps)
    buffer = list(init[len(init) - need:])
    states, mapped = [], []
    for t in range(windows):
        w = windows - 1 - t if backwards else t
        seq_vals = [xs[w + offset + k] for k in seq_taps]
        state_vals = [buffer[len(buffer) + k] for k in state_taps]
        mixed = combine(seq_vals + state_vals, np)
        nxt = mixed * a
        buffer.append(nxt)
        states.append(nxt)
        mapped.append(seq_vals[0] * mixed + a)
    return np.array(states), np.array(mapped)


def random_case(rng):
    seq_taps = sorted(rng.choice([-2, -1, 0, 1, 2], size=rng.integers(1, 4), replace=False).tolist())
    state_taps = sorted(rng.choice([-3, -2, -1], size=rng.integers(1, 3), replace=False).tolist())
    ops = rng.integers(0, 4, size=len(seq_taps) + len(state_taps) - 1).tolist()

    def combine(values, mod):
        acc = values[0]
        for op, v in zip(ops, values[1:]):
            if op == 0:
                acc = acc + v
            elif op == 1:
                acc = acc * v
            elif op == 2:
                acc = acc - mod.sin(v)
            else:
                acc = mod.maximum(acc, v)
        return mod.tanh(acc)

    return seq_taps, state_taps, combine


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
@pytest.mark.parametrize("seed", range(12))
def test_random_recurrences_equal_a_numpy_loop(seed, mode):
    rng = np.random.default_rng(seed)
    seq_taps, state_taps, combine = random_case(rng)
    vector = bool(rng.integers(2))
    backwards = bool(rng.integers(2))
    n = int(rng.integers(2, 5))
    length = int(rng.integers(6, 20))
    need = -min(state_taps)
    shape = (n,) if vector else ()
    xs = rng.uniform(-1.5, 1.5, size=(length, *shape))
    init = rng.uniform(-1.0, 1.0, size=(need, *shape))
    a = float(rng.uniform(0.5, 0.99))

    x = pt.dmatrix("x") if vector else pt.dvector("x")
    h0 = pt.dmatrix("h0") if vector else pt.dvector("h0")
    av = pt.dscalar("a")

    def step(*args):
        n_seq = len(seq_taps)
        seq_vals, state_vals, a_in = list(args[:n_seq]), list(args[n_seq:-1]), args[-1]
        mixed = combine(seq_vals + state_vals, pt)
        return mixed * a_in, seq_vals[0] * mixed + a_in

    (states, mapped), _ = oxtensor.scan(
        step,
        sequences=dict(input=x, taps=seq_taps),
        outputs_info=[dict(initial=h0, taps=state_taps), None],
        non_sequences=av,
        go_backwards=backwards,
    )
    f = oxtensor.function([x, h0, av], [states, mapped], mode=mode)
    got_states, got_mapped = f(xs, init, a)
    want_states, want_mapped = numpy_loop(xs, init, a, seq_taps, state_taps, backwards, combine)
    # NumPy's and the backends' sin/tanh differ by a few ulp, which the contracting steps keep
    # at a few ulp of the values' bound.
    np.testing.assert_allclose(got_states, want_states, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(got_mapped, want_mapped, rtol=1e-12, atol=1e-13)


def product_case(seed):
    """A random recurrence whose step holds matrix products (the native backend's staged
    loop): ``h = tanh(a·p + h/2)`` where ``p`` is ``W x_t``, ``(h W) Wᵀ`` or ``W (Wᵀ h)``."""
    rng = np.random.default_rng(200 + seed)
    n, m, steps = (int(v) for v in (rng.integers(1, 9), rng.integers(1, 9), rng.integers(2, 15)))
    form = int(rng.integers(3))
    W = rng.uniform(-1.0, 1.0, size=(n, m)) / np.sqrt(m)
    X = rng.uniform(-1.0, 1.0, size=(steps, m))
    h0 = rng.uniform(-0.8, 0.8, size=n)
    a = float(rng.uniform(0.3, 0.9))

    def product(xt, hp, w, dot):
        if form == 0:
            return dot(w, xt)
        if form == 1:
            return dot(dot(hp, w), w.T)
        return dot(w, dot(w.T, hp))

    def step(xt, hp, w, av):
        return pt.tanh(av * product(xt, hp, w, pt.dot) + 0.5 * hp)

    def numpy_loop(w):
        hs, hp = [], h0
        for xt in X:
            hp = np.tanh(a * product(xt, hp, w, np.dot) + 0.5 * hp)
            hs.append(hp)
        return np.array(hs)

    return step, numpy_loop, (W, X, h0, a)


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE", oxtensor.Mode(linker="py", optimizer="fast_run")])
@pytest.mark.parametrize("seed", range(8))
def test_random_product_recurrences_equal_a_numpy_loop(seed, mode):
    step, numpy_loop, (W, X, h0, a) = product_case(seed)
    w, x, h, av = pt.dmatrix("w"), pt.dmatrix("x"), pt.dvector("h0"), pt.dscalar("a")
    hs = oxtensor.scan(step, sequences=x, outputs_info=h, non_sequences=[w, av], return_updates=False)
    gw = oxtensor.grad((hs**2).sum(), w)
    f = oxtensor.function([w, x, h, av], [hs, gw], mode=mode)
    got, got_gw = f(W, X, h0, a)
    # Reordered dot products and two math libraries' tanh, through contracting steps.
    np.testing.assert_allclose(got, numpy_loop(W), rtol=1e-12, atol=1e-13)
    # The gradient w.r.t. W against central differences of the NumPy loop.
    eps = 1e-6
    want_gw = np.zeros_like(W)
    for idx in np.ndindex(W.shape):
        up, down = W.copy(), W.copy()
        up[idx] += eps
        down[idx] -= eps
        want_gw[idx] = ((numpy_loop(up) ** 2).sum() - (numpy_loop(down) ** 2).sum()) / (2 * eps)
    np.testing.assert_allclose(got_gw, want_gw, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_random_product_recurrence_gradients_pass_verify_grad(seed):
    step, _, (W, X, h0, a) = product_case(seed)

    def cost(w, x, h):
        hs = oxtensor.scan(step, sequences=x, outputs_info=h, non_sequences=[w, pt.constant(a)],
                           return_updates=False)
        return (hs**2).sum()

    oxtensor.gradient.verify_grad(cost, [W, X, h0], rng=np.random.default_rng(seed))
