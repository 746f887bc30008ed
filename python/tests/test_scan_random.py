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
