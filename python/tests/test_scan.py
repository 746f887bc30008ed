"""``scan`` against PyTensor and NumPy: PyTensor's documented examples, taps, ``until``,
shared-variable updates, the views (``map``, ``reduce``, ``foldl``, ``foldr``), gradients
through the loop, and clear errors."""

import numpy as np
import pytest

import pytensor
import pytensor.tensor as ptt

import oxtensor
import oxtensor.tensor as pt
from oxtensor.scan.utils import until


def test_power_by_repeated_multiplication():
    k = pt.iscalar("k")
    A = pt.vector("A")
    result, updates = oxtensor.scan(
        fn=lambda prior_result, A: prior_result * A, outputs_info=pt.ones_like(A), non_sequences=A, n_steps=k
    )
    power = oxtensor.function(inputs=[A, k], outputs=result[-1], updates=updates)
    np.testing.assert_allclose(power(np.arange(10.0), 2), np.arange(10.0) ** 2)


def test_polynomial_evaluation():
    coefficients = pt.vector("coefficients")
    x = pt.scalar("x")
    components, updates = oxtensor.scan(
        fn=lambda coefficient, power, free_variable: coefficient * (free_variable**power),
        outputs_info=None,
        sequences=[coefficients, pt.arange(10000)],
        non_sequences=x,
    )
    polynomial = oxtensor.function(inputs=[coefficients, x], outputs=components.sum(), updates=updates)
    assert polynomial(np.asarray([1, 0, 2], dtype=np.float64), 3.0) == pytest.approx(19.0)


def test_fibonacci_with_taps_equals_pytensor():
    def fib(a, b):
        return a + b

    def build(lib, mod):
        n = mod.iscalar("n")
        seq, _ = lib.scan(fib, outputs_info=dict(initial=mod.as_tensor_variable(np.array([0, 1], dtype="int64")), taps=[-2, -1]), n_steps=n)
        return lib.function([n], seq)

    ours, theirs = build(oxtensor, pt), build(pytensor, ptt)
    np.testing.assert_array_equal(ours(20), theirs(20))
    assert ours(20)[-1] == 10946


def test_documented_taps_example_equals_pytensor():
    rng = np.random.default_rng(3)
    values = [rng.standard_normal(s) for s in [(2, 2)] * 4 + [(5, 2)] * 2]

    def build(lib, mod):
        X, W, U, V = mod.matrix("X"), mod.matrix("W"), mod.matrix("U"), mod.matrix("V")
        Y, P = mod.matrix("Y"), mod.matrix("P")
        results, _ = lib.scan(
            lambda y, p, x_tm2, x_tm1: mod.tanh(mod.dot(x_tm1, W) + mod.dot(y, U) + mod.dot(p, V)),
            sequences=[Y, P[::-1]],
            outputs_info=[dict(initial=X, taps=[-2, -1])],
        )
        return lib.function([X, W, U, V, Y, P], results)

    np.testing.assert_allclose(build(oxtensor, pt)(*values), build(pytensor, ptt)(*values), rtol=1e-12)


@pytest.mark.parametrize("backwards", [False, True])
def test_sequence_taps_and_go_backwards_equal_pytensor(backwards):
    xs = np.linspace(-1.0, 2.0, 11)

    def build(lib, mod):
        x = mod.dvector("x")
        out, _ = lib.scan(
            lambda a, b, c, prev: a * c - b + 0.5 * prev,
            sequences=dict(input=x, taps=[-2, 0, 1]),
            outputs_info=mod.as_tensor_variable(np.float64(0.25)),
            go_backwards=backwards,
        )
        return lib.function([x], out)

    np.testing.assert_allclose(build(oxtensor, pt)(xs), build(pytensor, ptt)(xs), rtol=1e-14)


def test_until_stops_the_loop():
    def power_of_2(previous_power, max_value):
        return previous_power * 2, until(previous_power * 2 > max_value)

    max_value = pt.scalar()
    values, _ = oxtensor.scan(power_of_2, outputs_info=pt.constant(1.0), non_sequences=max_value, n_steps=1024)
    f = oxtensor.function([max_value], values)
    np.testing.assert_array_equal(f(45), [2.0, 4.0, 8.0, 16.0, 32.0, 64.0])


def test_shared_variable_updates():
    a = oxtensor.shared(1)
    values, updates = oxtensor.scan(lambda: {a: a + 1}, n_steps=10)
    b = a + 1
    c = updates[a] + 1
    f = oxtensor.function([], [b, c], updates=updates)
    assert [int(v) for v in f()] == [2, 12]
    assert a.get_value() == 11
    with pytest.raises(ValueError, match="return_updates=True"):
        oxtensor.scan(lambda: {a: a + 1}, n_steps=10, return_updates=False)


def test_jacobian_by_scan():
    x = pt.dvector("x")
    y = x**2
    J, updates = oxtensor.scan(
        lambda i, y, x: oxtensor.grad(y[i], x), sequences=pt.arange(y.shape[0]), non_sequences=[y, x]
    )
    f = oxtensor.function([x], J, updates=updates)
    np.testing.assert_allclose(f([4.0, 4.0]), [[8.0, 0.0], [0.0, 8.0]])


def test_views_map_reduce_foldl_foldr():
    x = pt.dvector("x")
    squares = oxtensor.map(lambda v: v**2, x, return_updates=False)
    total = oxtensor.reduce(lambda v, acc: acc + v, x, pt.constant(np.float64(0.0)), return_updates=False)
    left = oxtensor.foldl(lambda v, acc: acc * 2 + v, x, pt.constant(np.float64(0.0)), return_updates=False)
    right = oxtensor.foldr(lambda v, acc: acc * 2 + v, x, pt.constant(np.float64(0.0)), return_updates=False)
    f = oxtensor.function([x], [squares, total, left, right])
    xs = np.array([1.0, 2.0, 3.0])
    got = f(xs)
    np.testing.assert_allclose(got[0], xs**2)
    assert got[1] == 6.0
    assert got[2] == ((0 * 2 + 1) * 2 + 2) * 2 + 3
    assert got[3] == ((0 * 2 + 3) * 2 + 2) * 2 + 1


def test_gradient_through_time_matches_finite_differences():
    a, h0 = pt.dscalar("a"), pt.dscalar("h0")
    x = pt.dvector("x")
    h, _ = oxtensor.scan(lambda xt, hp, a: a * hp + pt.tanh(xt), sequences=x, outputs_info=h0, non_sequences=a)
    cost = (h**2).sum()
    f = oxtensor.function([a, x, h0], [cost, *oxtensor.grad(cost, [a, x, h0])])
    point = (0.8, np.array([0.3, -0.5, 1.1, 0.8, -0.2]), 0.4)
    _, ga, gx, gh = f(*point)
    eps = 1e-6

    def cost_at(a_, x_, h_):
        return f(a_, x_, h_)[0]

    num_a = (cost_at(point[0] + eps, point[1], point[2]) - cost_at(point[0] - eps, point[1], point[2])) / (2 * eps)
    num_h = (cost_at(point[0], point[1], point[2] + eps) - cost_at(point[0], point[1], point[2] - eps)) / (2 * eps)
    num_x = []
    for i in range(5):
        up, down = point[1].copy(), point[1].copy()
        up[i] += eps
        down[i] -= eps
        num_x.append((cost_at(point[0], up, point[2]) - cost_at(point[0], down, point[2])) / (2 * eps))
    np.testing.assert_allclose(ga, num_a, rtol=1e-6)
    np.testing.assert_allclose(gh, num_h, rtol=1e-6)
    np.testing.assert_allclose(gx, num_x, rtol=1e-6)


def test_errors_say_which_output():
    x = pt.dvector("x")
    with pytest.raises(TypeError, match="output 0 is float32"):
        oxtensor.scan(lambda v, prev: pt.cast(prev + v, "float32"), sequences=x, outputs_info=pt.constant(np.float64(0.0)))
    with pytest.raises(ValueError, match="fn returned 2 outputs but outputs_info has 1"):
        oxtensor.scan(lambda v, prev: [prev + v, prev], sequences=x, outputs_info=[pt.constant(np.float64(0.0))])
    h, _ = oxtensor.scan(lambda v, prev: prev + v, sequences=x, outputs_info=pt.constant(np.float64(0.0)), n_steps=10)
    f = oxtensor.function([x], h)
    with pytest.raises(ValueError, match="n_steps is 10 but sequence 0"):
        f(np.ones(3))


def test_jacobian_and_hessian_of_run_time_sizes_equal_pytensor():
    xs = np.array([0.5, -1.0, 2.0, 0.25])

    def build(lib, mod):
        x = mod.dvector("x")
        y = mod.exp(x) * x.sum()
        return lib.function([x], [lib.gradient.jacobian(y, x), lib.gradient.hessian((x**3).sum(), x)])

    for got, want in zip(build(oxtensor, pt)(xs), build(pytensor, ptt)(xs)):
        np.testing.assert_allclose(got, want, rtol=1e-13)


@pytest.mark.parametrize("truncate", [1, 2, 4, 7, 20])
@pytest.mark.parametrize("backwards", [False, True])
def test_truncated_gradients_equal_pytensor(truncate, backwards):
    xs = np.linspace(-1.0, 1.5, 7)
    init = np.array([0.2, -0.4])

    def build(lib, mod):
        x, y0, c = mod.dvector("x"), mod.dvector("y0"), mod.dscalar("c")
        y, _ = lib.scan(
            lambda xt, ym2, ym1, c: mod.tanh(c * ym1 - 0.3 * ym2 + xt),
            sequences=x,
            outputs_info=dict(initial=y0, taps=[-2, -1]),
            non_sequences=c,
            truncate_gradient=truncate,
            go_backwards=backwards,
        )
        cost = (y**2).sum()
        return lib.function([x, y0, c], lib.grad(cost, [x, y0, c]))

    ours = build(oxtensor, pt)(xs, init, 0.7)
    theirs = build(pytensor, ptt)(xs, init, 0.7)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_truncate_gradient_must_be_a_positive_number_of_steps():
    x = pt.dvector("x")
    with pytest.raises(ValueError, match="truncate_gradient must be -1"):
        oxtensor.scan(lambda v, prev: prev + v, sequences=x, outputs_info=pt.constant(np.float64(0.0)), truncate_gradient=0)


def test_nested_scan_equals_a_double_loop_and_pytensor():
    """An outer scan over rows whose step runs an inner scan along the row (an AR(1) carried
    from row to row, reading the outer state and non-sequence), an inner loop counted by the
    outer step's value and an inner while-loop; with the gradient w.r.t. ``a``."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((7, 5))
    k = np.array([3, 1, 4, 1, 5, 2, 6], dtype=np.int64)

    def build(lib, mod, until):
        xs, a, h0, ks = mod.dmatrix("x"), mod.dscalar("a"), mod.dscalar("h0"), mod.lvector("k")

        def row(xr, carry, a):
            ys = lib.scan(lambda xt, hp, a: a * hp + xt, sequences=xr, outputs_info=carry, non_sequences=a,
                          return_updates=False)
            return ys[-1], ys

        _, ys = lib.scan(row, sequences=xs, outputs_info=[h0, None], non_sequences=a, return_updates=False)

        def counted(n, xr, z, a):
            zs = lib.scan(lambda zp, a, s: a * zp + s, outputs_info=z, non_sequences=[a, xr.sum()], n_steps=n,
                          return_updates=False)
            return zs[-1]

        zs = lib.scan(counted, sequences=[ks, xs], outputs_info=h0, non_sequences=a, return_updates=False)

        def halvings(xt, a):
            hs = lib.scan(lambda h: (0.5 * h, until(abs(0.5 * h) < a)), outputs_info=xt, n_steps=100,
                          return_updates=False)
            return hs.shape[0]

        ns = lib.scan(halvings, sequences=xs[:, 0] * 100.0, non_sequences=a, return_updates=False)
        cost = (ys**2).sum() + zs.sum()
        return lib.function([xs, a, h0, ks], [ys, zs, ns, lib.grad(cost, a)])

    a, h0 = 0.8, 0.25
    # NumPy double loops.
    ys, prev = np.empty_like(x), h0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            prev = a * prev + x[i, j]
            ys[i, j] = prev
    zs, z = [], h0
    for n, xr in zip(k, x):
        for _ in range(n):
            z = a * z + xr.sum()
        zs.append(z)
    ns = []
    for xt in x[:, 0] * 100.0:
        h, n = xt, 0
        while True:
            h, n = 0.5 * h, n + 1
            if abs(h) < a:
                break
        ns.append(n)
    ours = build(oxtensor, pt, until)(x, a, h0, k)
    np.testing.assert_allclose(ours[0], ys, rtol=1e-12)
    np.testing.assert_allclose(ours[1], zs, rtol=1e-12)
    np.testing.assert_array_equal(ours[2], ns)
    from pytensor.scan.utils import until as pytensor_until

    theirs = build(pytensor, ptt, pytensor_until)(x, a, h0, k)
    for got, want in zip(ours, theirs):
        np.testing.assert_allclose(got, want, rtol=1e-11)


def test_a_step_with_ifelse_equals_pytensor_with_its_gradient():
    # A step that branches on its state (both branches taken over the loop), nested branches,
    # and a branch reading a product: values and gradients against PyTensor's lazy ifelse.
    rng = np.random.default_rng(11)
    values = [rng.standard_normal((40, 5)), rng.standard_normal(5), rng.standard_normal((5, 5)) / 3]

    def build(lib, mod, ifelse):
        Y, h0, W = mod.matrix("Y"), mod.vector("h0"), mod.matrix("W")

        def step(y, h, W):
            inner = ifelse(mod.sum(y) > 0, mod.tanh(mod.dot(W, h)) + y, h * 0.5)
            return ifelse(mod.sum(h) > 0, inner, h - y)

        out = lib.scan(step, sequences=[Y], outputs_info=[h0], non_sequences=[W], return_updates=False)
        cost = mod.sum(out**2)
        return lib.function([Y, h0, W], [out, *lib.grad(cost, [Y, h0, W])])

    from oxtensor.ifelse import ifelse as ours_ifelse
    from pytensor.ifelse import ifelse as their_ifelse

    ours = build(oxtensor, pt, ours_ifelse)(*values)
    theirs = build(pytensor, ptt, their_ifelse)(*values)
    for got, want in zip(ours, theirs):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
