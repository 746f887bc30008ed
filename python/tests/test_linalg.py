"""``pt.linalg`` and the matrix functions of ``pt`` against NumPy/SciPy: values in both
backends, batching, dtypes, error messages, and gradients against central finite
differences."""

import numpy as np
import pytest
import scipy.linalg as sla

import oxtensor
import oxtensor.tensor as pt
from oxtensor.tensor import linalg as la

MODES = ["FAST_COMPILE", "FAST_RUN"]


def run(inputs, outputs, args, mode="FAST_RUN"):
    return oxtensor.function(inputs, outputs, mode=mode)(*args)


def sym(value, name="x"):
    value = np.asarray(value)
    return pt.tensor(name, dtype=value.dtype.name, shape=(None,) * value.ndim)


def spd(rng, *shape):
    m = rng.standard_normal(shape)
    n = shape[-1]
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def well(rng, *shape):
    return rng.standard_normal(shape) + shape[-1] * np.eye(shape[-1])


def fd_check(f, args, rng, eps=1e-6, rtol=1e-5, atol=1e-6):
    """Checks ``pt.grad`` of ``sum(w * f(*xs))`` against central differences."""
    xs = [sym(a, f"x{i}") for i, a in enumerate(args)]
    out = f(*xs)
    w_val = rng.uniform(0.5, 1.5, size=run(xs, [out], args)[0].shape)
    w = pt.constant(w_val)
    cost = pt.sum(w * out)
    grads = oxtensor.grad(cost, xs)
    cost_fn = oxtensor.function(xs, cost)
    got = oxtensor.function(xs, grads)(*args)
    for k, a in enumerate(args):
        num = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            up = [x.copy() for x in args]
            dn = [x.copy() for x in args]
            up[k][idx] += eps
            dn[k][idx] -= eps
            num[idx] = (cost_fn(*up) - cost_fn(*dn)) / (2 * eps)
        np.testing.assert_allclose(got[k], num, rtol=rtol, atol=atol, err_msg=f"input {k}")


@pytest.mark.parametrize("mode", MODES)
def test_decompositions_and_solvers_match_scipy(mode, rng):
    a, g = spd(rng, 4, 4), well(rng, 4, 4)
    b = rng.standard_normal((4, 2))
    A, G, B = sym(a, "a"), sym(g, "g"), sym(b, "b")
    outs = [
        la.cholesky(A),
        la.cholesky(A, lower=False),
        la.solve(G, B),
        la.solve(A, B, assume_a="pos"),
        la.solve(A, B, assume_a="sym", lower=True),
        la.solve(G, B, transposed=True),
        la.solve_triangular(G, B, lower=True),
        la.solve_triangular(G, B, trans="T", unit_diagonal=True),
        la.cho_solve((la.cholesky(A), True), B),
        la.inv(G),
        la.pinv(G[:, :3]),
        la.det(G),
        la.slogdet(G)[1],
        la.eigh(A)[0],
        la.eigvalsh(A),
        la.expm(G / 4),
        pt.linalg.solve_continuous_lyapunov(G, A),
    ]
    want = [
        sla.cholesky(a, lower=True),
        sla.cholesky(a, lower=False),
        sla.solve(g, b),
        sla.solve(a, b, assume_a="pos"),
        sla.solve(a, b, assume_a="sym", lower=True),
        sla.solve(g, b, transposed=True),
        sla.solve_triangular(g, b, lower=True),
        sla.solve_triangular(g, b, trans="T", unit_diagonal=True),
        sla.cho_solve(sla.cho_factor(a, lower=True), b),
        np.linalg.inv(g),
        np.linalg.pinv(g[:, :3]),
        np.linalg.det(g),
        np.linalg.slogdet(g)[1],
        np.linalg.eigh(a)[0],
        sla.eigvalsh(a),
        sla.expm(g / 4),
        sla.solve_continuous_lyapunov(g, a),
    ]
    got = run([A, G, B], outs, [a, g, b], mode)
    for k, (x, y) in enumerate(zip(got, want)):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-11, err_msg=f"output {k}")


@pytest.mark.parametrize("mode", MODES)
def test_factorisations_reconstruct_their_input(mode, rng):
    a = rng.standard_normal((5, 3))
    s = spd(rng, 4, 4)
    A, S = sym(a, "a"), sym(s, "s")
    u, sv, vh = la.svd(A, full_matrices=False)
    q, r = la.qr(A, mode="economic")
    p, l, uu = la.lu(A)
    w, v = la.eigh(S)
    got = run([A, S], [u, sv, vh, q, r, p, l, uu, w, v, la.svd(A, compute_uv=False)], [a, s], mode)
    u_, s_, vh_, q_, r_, p_, l_, uu_, w_, v_, s_only = got
    np.testing.assert_allclose(u_ * s_ @ vh_, a, atol=1e-12)
    np.testing.assert_allclose(s_, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose(s_only, s_, rtol=1e-12)
    np.testing.assert_allclose(q_ @ r_, a, atol=1e-12)
    np.testing.assert_allclose(p_ @ l_ @ uu_, a, atol=1e-12)
    np.testing.assert_allclose(v_ * w_ @ v_.T, s, atol=1e-11)


@pytest.mark.parametrize("mode", MODES)
def test_batch_dimensions_broadcast_like_numpy(mode, rng):
    a = well(rng, 2, 1, 3, 3)
    b = rng.standard_normal((4, 3))
    A, B = sym(a, "a"), sym(b, "b")
    x = la.solve(A, B, b_ndim=1)
    got = run([A, B], [x, la.det(A), la.cholesky(A @ pt.matrix_transpose(A))], [a, b], mode)
    np.testing.assert_allclose(got[0], np.linalg.solve(a, b[..., None])[..., 0], rtol=1e-10)
    assert got[0].shape == (2, 4, 3)
    np.testing.assert_allclose(got[1], np.linalg.det(a), rtol=1e-10)
    np.testing.assert_allclose(got[2], np.linalg.cholesky(a @ np.swapaxes(a, -1, -2)), rtol=1e-10)


def test_dtypes_follow_pytensor():
    assert la.det(pt.lmatrix("i")).dtype == "float64"
    assert la.inv(pt.fmatrix("f")).dtype == "float32"
    assert la.solve(pt.fmatrix("f"), pt.dvector("v")).dtype == "float64"
    i = np.array([[2, 1], [1, 3]], dtype="int64")
    I = sym(i, "i")
    np.testing.assert_allclose(run([I], [la.det(I)], [i])[0], 5.0)


def test_errors_name_the_inputs():
    with pytest.raises(TypeError, match="'v'.*at least 2"):
        la.cholesky(pt.dvector("v"))
    with pytest.raises(ValueError, match="square"):
        la.inv(pt.tensor("r", dtype="float64", shape=(3, 4)))
    a = pt.tensor("a", dtype="float64", shape=(3, 3))
    b = pt.tensor("b", dtype="float64", shape=(5, 2))
    with pytest.raises(ValueError, match="'a'.*'b'|'b'.*'a'"):
        la.solve(a, b)
    with pytest.raises(ValueError, match="assume_a"):
        la.solve(a, a, assume_a="skew")
    with pytest.raises(ValueError, match="on_error"):
        la.cholesky(a, on_error="ignore")


def test_singular_and_indefinite_inputs():
    x = pt.dmatrix("x")
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    assert np.isnan(run([x], [la.cholesky(x)], [bad])[0]).all()
    with pytest.raises(ValueError, match="not positive definite"):
        run([x], [la.cholesky(x, on_error="raise")], [bad])
    with pytest.raises(ValueError, match="singular"):
        run([x], [la.inv(x)], [np.array([[1.0, 2.0], [2.0, 4.0]])])


@pytest.mark.parametrize("mode", MODES)
def test_matrix_functions_of_pt_match_numpy(mode, rng):
    m = rng.standard_normal((3, 4))
    t3 = rng.standard_normal((2, 3, 4))
    v = rng.standard_normal(4)
    M, T3, V = sym(m, "m"), sym(t3, "t"), sym(v, "v")
    cases = [
        (pt.tril(M), np.tril(m)),
        (pt.triu(M, 1), np.triu(m, 1)),
        (pt.tril(M, -1), np.tril(m, -1)),
        (pt.diagonal(M), np.diagonal(m)),
        (pt.diagonal(M, 1), np.diagonal(m, 1)),
        (pt.diagonal(M, -1), np.diagonal(m, -1)),
        (pt.diagonal(T3, 0, 1, 2), np.diagonal(t3, 0, 1, 2)),
        (pt.trace(M), np.trace(m)),
        (pt.diag(V), np.diag(v)),
        (pt.diag(M), np.diag(m)),
        (pt.matrix_transpose(T3), np.swapaxes(t3, -1, -2)),
        (pt.matvec(T3, V), np.einsum("bij,j->bi", t3, v)),
        (pt.vecmat(V[:3], T3), np.einsum("i,bij->bj", v[:3], t3)),
        (pt.vecdot(T3, V), np.einsum("bij,j->bi", t3, v)),
        (pt.tensordot(T3, M, axes=2), np.tensordot(t3, m, axes=2)),
        (pt.tensordot(T3, M, axes=([1], [0])), np.tensordot(t3, m, axes=([1], [0]))),
        (pt.einsum("bij,jk->bik", T3, M.T), np.einsum("bij,jk->bik", t3, m.T)),
        (pt.einsum("ij,ij", M, M), np.einsum("ij,ij", m, m)),
        (pt.einsum("bij,j", T3, V), np.einsum("bij,j", t3, v)),
        (pt.batched_dot(T3, T3.dimshuffle(0, 2, 1)), np.matmul(t3, np.swapaxes(t3, 1, 2))),
        (la.kron(M, V), np.kron(m, v)),
        (la.kron(M, M), np.kron(m, m)),
        (la.matrix_power(M[:, :3], 3), np.linalg.matrix_power(m[:, :3], 3)),
        (la.matrix_power(M[:, :3], 0), np.eye(3)),
        (la.norm(M), np.linalg.norm(m)),
        (la.norm(V, 1), np.linalg.norm(v, 1)),
        (la.norm(V, np.inf), np.linalg.norm(v, np.inf)),
        (la.norm(V, 3), np.linalg.norm(v, 3)),
        (la.norm(M, "fro"), np.linalg.norm(m, "fro")),
        (la.norm(M, 1), np.linalg.norm(m, 1)),
        (la.norm(M, np.inf), np.linalg.norm(m, np.inf)),
        (la.norm(M, 2), np.linalg.norm(m, 2)),
        (la.norm(M, "nuc"), np.linalg.norm(m, "nuc")),
        (la.norm(T3, axis=-1), np.linalg.norm(t3, axis=-1)),
        (la.norm(T3, axis=(1, 2)), np.linalg.norm(t3, axis=(1, 2))),
    ]
    got = run([M, T3, V], [c[0] for c in cases], [m, t3, v], mode)
    for k, (g, (_, w)) in enumerate(zip(got, cases)):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=f"case {k}")


def test_tensorinv_and_tensorsolve_match_numpy(rng):
    a = rng.standard_normal((6, 2, 3)) + 0.0
    a = (np.eye(6) * 4).reshape(6, 2, 3) + a * 0.1
    A = sym(a, "a")
    np.testing.assert_allclose(run([A], [la.tensorinv(A, ind=1)], [a])[0], np.linalg.tensorinv(a, ind=1), rtol=1e-10)
    b = rng.standard_normal(6)
    B = sym(b, "b")
    np.testing.assert_allclose(run([A, B], [la.tensorsolve(A, B)], [a, b])[0], np.linalg.tensorsolve(a, b), rtol=1e-10)


def test_block_diag_and_lstsq_match_scipy_and_numpy(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((1, 2))
    A, B = sym(a, "a"), sym(b, "b")
    np.testing.assert_allclose(run([A, B], [la.block_diag(A, B)], [a, b])[0], sla.block_diag(a, b))
    m, y = rng.standard_normal((6, 3)), rng.standard_normal((6, 2))
    M, Y = sym(m, "m"), sym(y, "y")
    got = run([M, Y], list(la.lstsq(M, Y)), [m, y])
    want = np.linalg.lstsq(m, y, rcond=None)
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, err_msg=f"output {k}")


def test_old_import_paths():
    from oxtensor.tensor import nlinalg, slinalg

    assert slinalg.cholesky is la.cholesky and nlinalg.det is la.det
    assert pt.linalg.matrix_inverse is la.inv


@pytest.mark.parametrize("batch", [(), (2,)])
def test_gradients_match_finite_differences(batch, rng):
    a = spd(rng, *batch, 3, 3)
    g = well(rng, *batch, 3, 3)
    b = rng.standard_normal((3, 2))
    v = rng.standard_normal(3)
    fd_check(lambda x: la.cholesky(x), [a], rng)
    fd_check(lambda x: la.cholesky(x, lower=False), [a], rng)
    fd_check(lambda x, y: la.solve(x, y), [g, b], rng)
    fd_check(lambda x, y: la.solve(x, y, assume_a="pos"), [a, b], rng)
    fd_check(lambda x, y: la.solve(x, y, b_ndim=1), [g, v], rng)
    fd_check(lambda x, y: la.solve_triangular(x, y, lower=True), [g, b], rng)
    fd_check(lambda x, y: la.solve_triangular(x, y, trans=1, unit_diagonal=True), [g, b], rng)
    fd_check(lambda x, y: la.cho_solve((x, True), y, b_ndim=1), [np.linalg.cholesky(a), v], rng)
    fd_check(lambda x: la.inv(x), [g], rng)
    fd_check(lambda x: la.det(x), [g], rng)
    fd_check(lambda x: la.slogdet(x)[1], [g], rng)
    fd_check(lambda x: la.eigh(x)[0], [a], rng)
    fd_check(lambda x: la.eigh(x)[1] ** 2, [a], rng)
    fd_check(lambda x: la.eigvalsh(x), [a], rng)
    fd_check(lambda x: pt.trace(x, axis1=-2, axis2=-1), [g], rng)
    fd_check(lambda x: la.svd(x, compute_uv=False), [g[..., :2]], rng)
    fd_check(lambda x: la.svd(x, full_matrices=False)[0] ** 2, [g[..., :2]], rng)
    fd_check(lambda x: la.expm(x / 4), [g], rng)
    fd_check(lambda x, y: la.solve_continuous_lyapunov(x, y), [g, a], rng)
    fd_check(lambda x, y, z: la.solve_sylvester(x, y, z), [g, g[..., :2, :2], b], rng)
    fd_check(lambda x: la.kron(x, x), [g], rng)
    fd_check(lambda x: la.norm(x, axis=(-2, -1)), [g], rng)


def test_the_cholesky_gradient_is_lower_triangular_as_in_pytensor(rng):
    a = spd(rng, 4, 4)
    x = pt.dmatrix("x")
    gx = oxtensor.grad(pt.sum(la.cholesky(x) ** 2), x)
    got = oxtensor.function([x], gx)(a)
    np.testing.assert_allclose(np.triu(got, 1), 0.0)


def test_a_gp_log_likelihood_and_its_gradient(rng):
    """-½ yᵀK⁻¹y − ½ log|K| for K = exp(-d²/ℓ²) + σ²I, checked against NumPy and differences."""
    xs = np.linspace(0, 1, 6)
    y = rng.standard_normal(6)
    ell = pt.dscalar("ell")
    d2 = pt.constant((xs[:, None] - xs[None, :]) ** 2)
    K = pt.exp(-d2 / ell**2) + 0.1 * pt.eye(6)
    L = la.cholesky(K)
    alpha = la.solve_triangular(L, pt.constant(y), lower=True)
    ll = -0.5 * pt.sum(alpha**2) - pt.sum(pt.log(pt.diagonal(L)))
    f = oxtensor.function([ell], [ll, oxtensor.grad(ll, ell)])

    def ref(e):
        k = np.exp(-((xs[:, None] - xs[None, :]) ** 2) / e**2) + 0.1 * np.eye(6)
        return -0.5 * y @ np.linalg.solve(k, y) - 0.5 * np.linalg.slogdet(k)[1]

    val, grad = f(0.7)
    np.testing.assert_allclose(val, ref(0.7), rtol=1e-10)
    np.testing.assert_allclose(grad, (ref(0.7 + 1e-6) - ref(0.7 - 1e-6)) / 2e-6, rtol=1e-6)


def test_cholesky_eigh_and_det_gradients_equal_pytensors(rng):
    pytensor = pytest.importorskip("pytensor")
    ptt = pytest.importorskip("pytensor.tensor")
    a = spd(rng, 4, 4)
    w = rng.uniform(0.5, 1.5, size=(4, 4))

    def costs(lib, mod, x):
        return [
            mod.sum(w * mod.linalg.cholesky(x)),
            mod.sum(w[0] * mod.linalg.eigh(x)[0]) + mod.sum(w * mod.linalg.eigh(x)[1] ** 2),
            mod.linalg.det(x),
        ]

    xo, xp = pt.dmatrix("x"), ptt.dmatrix("x")
    ours = oxtensor.function([xo], [oxtensor.grad(c, xo) for c in costs(oxtensor, pt, xo)])(a)
    theirs = pytensor.function([xp], [pytensor.grad(c, xp) for c in costs(pytensor, ptt, xp)])(a)
    for k, (o, p) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(o, p, rtol=1e-9, atol=1e-11, err_msg=f"cost {k}")


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 4)])
def test_qr_gradients_match_finite_differences(shape, rng):
    a = rng.standard_normal(shape)
    fd_check(lambda x: la.qr(x, mode="economic")[0], [a], rng)
    fd_check(lambda x: la.qr(x, mode="economic")[1], [a], rng)
    fd_check(lambda x: pt.sum(la.qr(x, mode="r")), [a], rng)


def test_lu_gradients_match_finite_differences(rng):
    a = rng.standard_normal((4, 4)) + 0.5 * np.eye(4)
    b = rng.standard_normal((4, 2))
    for p_indices in (False, True):
        fd_check(lambda x: la.lu(x, p_indices=p_indices)[1], [a], rng)
        fd_check(lambda x: la.lu(x, p_indices=p_indices)[2], [a], rng)
    fd_check(lambda x: la.lu(x, permute_l=True)[0], [a], rng)
    fd_check(lambda x: la.lu_factor(x)[0], [a], rng)
    for trans in (False, True):
        fd_check(lambda x, y: la.lu_solve(la.lu_factor(x), y, trans=trans), [a, b], rng)


@pytest.mark.parametrize("k", [-2, -1, 1, 3])
def test_diag_builds_off_diagonal_matrices_as_numpy(k, rng):
    v = rng.standard_normal(3)
    V = sym(v, "v")
    np.testing.assert_array_equal(run([V], [pt.diag(V, k)], [v])[0], np.diag(v, k))


@pytest.mark.parametrize("mode", MODES)
def test_structured_assume_a_matches_scipy(mode, rng):
    n = 5
    a = well(rng, n, n)
    band = np.triu(np.tril(a, 1), -1)
    b, v = rng.standard_normal((n, 2)), rng.standard_normal(n)
    A, B, V = sym(a, "a"), sym(b, "b"), sym(v, "v")
    cases = [
        (la.solve(A, B, assume_a="tridiagonal"), sla.solve(band, b)),
        (la.solve(A, V, assume_a="tridiagonal", transposed=True), sla.solve(band.T, v)),
        (la.solve(A, B, assume_a="banded"), sla.solve(a, b)),
        (la.solve(A, B, assume_a="diagonal"), b / np.diag(a)[:, None]),
        (la.solve(A, V, assume_a="diagonal"), v / np.diag(a)),
        (la.solve(A, B, assume_a="lower triangular"), sla.solve_triangular(a, b, lower=True)),
        (la.solve(A, B, assume_a="upper triangular"), sla.solve_triangular(a, b)),
        (la.solve(A, A, assume_a="positive definite"), sla.solve(a, a, assume_a="pos")),
    ]
    got = run([A, B, V], [c[0] for c in cases], [a, b, v], mode)
    for k, (g, (_, w)) in enumerate(zip(got, cases)):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=f"case {k}")


def test_tridiagonal_solve_gradient_reads_only_the_band(rng):
    a, b = well(rng, 4, 4), rng.standard_normal((4, 2))
    fd_check(lambda x, y: la.solve(x, y, assume_a="tridiagonal"), [a, b], rng)
    A = sym(a, "a")
    g = run([A], [oxtensor.grad(pt.sum(la.solve(A, b, assume_a="tridiagonal")), A)], [a])[0]
    assert np.all(g[np.triu(np.tril(np.ones((4, 4)), 1), -1) == 0] == 0)


@pytest.mark.parametrize("mode", MODES)
def test_banded_and_tridiagonal_solves_match_scipy_structured_solvers(mode, rng):
    n = 60
    a = np.triu(np.tril(rng.standard_normal((n, n)) + 3 * np.eye(n), 1), -2)
    ab = np.zeros((4, n))  # solve_banded's layout for (l, u) = (2, 1)
    for i in range(n):
        for j in range(max(0, i - 2), min(n, i + 2)):
            ab[1 + i - j, j] = a[i, j]
    # A small diagonal under larger off-diagonals: elimination must interchange rows.
    tri = np.diag(rng.uniform(0.1, 0.3, n))
    tri += np.diag(rng.uniform(1, 2, n - 1), -1) + np.diag(rng.uniform(1, 2, n - 1), 1)
    junk = rng.standard_normal((n, n))
    t = tri + np.triu(junk, 2) + np.tril(junk, -2)  # never read by the tridiagonal solve
    b = rng.standard_normal((n, 3))
    A, T, B = sym(a, "a"), sym(t, "t"), sym(b, "b")
    cases = [
        (la.solve(A, B, assume_a="banded"), sla.solve_banded((2, 1), ab, b), a),
        (la.solve(A, B, assume_a="banded", transposed=True), sla.solve(a.T, b), a),
        (la.solve(T, B, assume_a="tridiagonal"), sla.solve(t, b, assume_a="tridiagonal"), tri),
        (la.solve(T, B, assume_a="tridiagonal", transposed=True), sla.solve(tri.T, b), tri),
    ]
    got = run([A, T, B], [c[0] for c in cases], [a, t, b], mode)
    for k, (g, (_, want, m)) in enumerate(zip(got, cases)):
        tol = 1e-14 * np.linalg.cond(m) * np.abs(want).max()
        np.testing.assert_allclose(g, want, rtol=0, atol=tol, err_msg=f"case {k}")


def test_banded_solve_gradient_matches_finite_differences(rng):
    a = np.triu(np.tril(rng.standard_normal((5, 5)) + 3 * np.eye(5), 2), -1)
    fd_check(lambda x, y: la.solve(x, y, assume_a="banded"), [a, rng.standard_normal(5)], rng)


@pytest.mark.parametrize("lower", [True, False])
def test_generalized_eigh_matches_scipy(lower, rng):
    a, b = rng.standard_normal((4, 4)), spd(rng, 4, 4)
    a = a + a.T
    A, B = sym(a, "a"), sym(b, "b")
    w, v = la.eigh(A, B, lower=lower)
    got_w, got_v, got_vals = run([A, B], [w, v, la.eigvalsh(A, B, lower=lower)], [a, b])
    want_w, want_v = sla.eigh(a, b, lower=lower)
    np.testing.assert_allclose(got_w, want_w, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_vals, want_w, rtol=1e-10, atol=1e-12)
    # Eigenvectors are unique up to sign: compare after fixing each column's sign.
    signs = np.sign(np.sum(got_v * want_v, axis=0))
    np.testing.assert_allclose(got_v * signs, want_v, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(got_v.T @ b @ got_v, np.eye(4), atol=1e-10)


def test_generalized_eigh_gradients_match_finite_differences(rng):
    a, b = rng.standard_normal((3, 3)), spd(rng, 3, 3)
    a = a + a.T + np.diag([0.0, 3.0, 6.0])

    def sym_pair(x, y):
        return la.eigh(x + x.T, y + y.T)[0]

    fd_check(sym_pair, [a / 2, b / 2], rng)


@pytest.mark.parametrize("mode", MODES)
def test_singular_matrices_raise_linalgerror_as_numpy(mode):
    x = pt.dmatrix("x")
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.inv(singular)
    for out in (la.inv(x), la.solve(x, x)):
        with pytest.raises(np.linalg.LinAlgError, match="singular"):
            run([x], [out], [singular], mode)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        run([x], [la.cholesky(x, on_error="raise")], [np.array([[1.0, 2.0], [2.0, 1.0]])], mode)
