"""oxtensor's linear algebra against SciPy/NumPy (LAPACK) and JAX, on one thread (issue 14).

    L1  cholesky, solve, eigh, svd, qr, det of an n×n float64 matrix, n = 100, 500, 2000
                                                        target: ≤ 1.2× SciPy at every size
    L2  a Gaussian-process marginal log-likelihood and its gradient w.r.t. the kernel's three
        parameters (squared-exponential kernel, n = 1000, cholesky + solve_triangular)
                                                        target: ≤ 1.0× JAX jit
    L3  a batched cholesky + solve of 1000 × 8 × 8 matrices (a vector right-hand side each)
                                                        target: ≤ 1.0× JAX jit

Every library runs on one thread: the thread variables below are set before anything is
imported (faer is built without its own parallelism; rayon's pool gets one thread). Rounds
interleave the contenders, so machine noise hits them alike; a row's time is its best round,
and "ratio" is oxtensor's time over the reference's (SciPy for L1, JAX for L2/L3; SciPy
written by hand for L2/L3 when JAX is missing). Each result is checked against the reference
before timing.

    python bench/linalg.py [--quick] [--rounds N] [--only L1,L2,L3]

``--quick`` drops n = 2000. JAX is optional.
"""

import os

for var in (
    "RAYON_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
):
    os.environ[var] = "1"
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
)

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.linalg as sla  # noqa: E402

import oxtensor  # noqa: E402
import oxtensor.tensor as pt  # noqa: E402
from oxtensor.tensor import linalg as la  # noqa: E402

try:
    import jax  # noqa: E402

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp  # noqa: E402
    import jax.scipy.linalg as jsla  # noqa: E402
except ImportError:
    jax = None


def best_time(f, budget):
    """Seconds per call of ``f``: calls for about ``budget`` seconds, one round."""
    t0 = time.perf_counter()
    f()
    once = time.perf_counter() - t0
    reps = max(1, int(budget / max(once, 1e-6)))
    t0 = time.perf_counter()
    for _ in range(reps):
        f()
    return (time.perf_counter() - t0) / reps


def race(contenders, rounds, budget):
    """Best time of each contender over interleaved rounds."""
    best = {name: float("inf") for name in contenders}
    for _ in range(rounds):
        for name, f in contenders.items():
            time.sleep(0.05)
            best[name] = min(best[name], best_time(f, budget))
    return best


def check(got, want, what, rtol=1e-6, atol=1e-8):
    for g, w in zip(got, want):
        if not np.allclose(g, w, rtol=rtol, atol=atol):
            raise SystemExit(f"{what}: oxtensor disagrees with the reference")


def row(label, ours, ref, ref_name, target):
    ratio = ours / ref
    flag = "" if ratio <= target else "  (over target)"
    print(
        f"{label:28} oxtensor {ours * 1e3:10.3f} ms   {ref_name} {ref * 1e3:10.3f} ms"
        f"   ratio {ratio:5.2f}{flag}",
        flush=True,
    )


def compile1(build):
    """A compiled oxtensor function of one float64 matrix (and optionally a vector)."""
    A = pt.dmatrix("a")
    out = build(A)
    return oxtensor.function([A], out)


def l1(rng, sizes, rounds):
    print("L1: decompositions, float64, one thread (reference: SciPy)")
    for n in sizes:
        g = rng.standard_normal((n, n))
        spd = g @ g.T + n * np.eye(n)
        b = rng.standard_normal((n, 1))
        cases = {
            "cholesky": (
                spd,
                lambda A: la.cholesky(A, lower=True),
                lambda x: sla.cholesky(x, lower=True, check_finite=False),
            ),
            "solve": (
                g,
                lambda A: la.solve(A, pt.constant(b)),
                lambda x: sla.solve(x, b, check_finite=False),
            ),
            "eigh": (
                spd,
                lambda A: la.eigh(A)[0],
                lambda x: sla.eigh(x, eigvals_only=True, check_finite=False),
            ),
            "eigh (vectors)": (
                spd,
                lambda A: la.eigh(A),
                lambda x: sla.eigh(x, check_finite=False),
            ),
            "svd": (
                g,
                lambda A: la.svd(A, full_matrices=False),
                lambda x: sla.svd(x, full_matrices=False, check_finite=False),
            ),
            "svd (values)": (
                g,
                lambda A: la.svd(A, compute_uv=False),
                lambda x: sla.svd(x, compute_uv=False, check_finite=False),
            ),
            "qr": (
                g,
                lambda A: la.qr(A),
                lambda x: sla.qr(x, check_finite=False),
            ),
            "det": (
                g,
                lambda A: la.det(A),
                lambda x: sla.det(x, check_finite=False),
            ),
        }
        for name, (x, ours, theirs) in cases.items():
            f = compile1(ours)
            got = f(x)
            want = theirs(x)
            if name in ("cholesky", "solve", "det", "eigh", "svd (values)"):
                got = got if isinstance(got, list) else [got]
                want = want if isinstance(want, tuple) else [want]
                check(got, want, f"{name} n={n}", rtol=1e-6, atol=1e-6 * n)
            budget, reps = (0.2, rounds) if n < 2000 else (0.0, min(rounds, 2))
            t = race({"ox": lambda: f(x), "ref": lambda: theirs(x)}, reps, budget)
            row(f"{name} n={n}", t["ox"], t["ref"], "SciPy", 1.2)


def gp_data(rng, n):
    x = np.sort(rng.uniform(0, 10, n))
    y = np.sin(x) + 0.1 * rng.standard_normal(n)
    return x, y, np.array([0.0, 0.0, np.log(0.1)])


def gp_oxtensor(x, y):
    """The negative marginal log-likelihood and its gradient, compiled by oxtensor."""
    theta = pt.dvector("theta")
    X, Y = pt.constant(x), pt.constant(y)
    ell, amp, noise = pt.exp(theta[0]), pt.exp(theta[1]), pt.exp(theta[2])
    d = X[:, None] - X[None, :]
    n = x.shape[0]
    K = amp**2 * pt.exp(-0.5 * d**2 / ell**2) + (noise**2 + 1e-6) * pt.eye(n)
    L = la.cholesky(K, lower=True)
    alpha = la.solve_triangular(L, Y, lower=True)
    nll = 0.5 * pt.sum(alpha**2) + pt.sum(pt.log(pt.diagonal(L))) + 0.5 * n * np.log(2 * np.pi)
    return oxtensor.function([theta], [nll, oxtensor.grad(nll, theta)])


def gp_jax(x, y):
    def nll(theta):
        ell, amp, noise = jnp.exp(theta[0]), jnp.exp(theta[1]), jnp.exp(theta[2])
        d = x[:, None] - x[None, :]
        n = x.shape[0]
        K = amp**2 * jnp.exp(-0.5 * d**2 / ell**2) + (noise**2 + 1e-6) * jnp.eye(n)
        L = jnp.linalg.cholesky(K)
        alpha = jsla.solve_triangular(L, y, lower=True)
        return 0.5 * jnp.sum(alpha**2) + jnp.sum(jnp.log(jnp.diag(L))) + 0.5 * n * np.log(2 * np.pi)

    f = jax.jit(jax.value_and_grad(nll))
    x, y = jnp.asarray(x), jnp.asarray(y)

    def call(theta):
        v, g = f(theta)
        return [np.asarray(v), np.asarray(g)]

    return call


def gp_scipy(x, y):
    """The same by hand with SciPy: K⁻¹ from the Cholesky factor, tr((ααᵀ − K⁻¹) ∂K)/2."""
    d2 = (x[:, None] - x[None, :]) ** 2
    n = x.shape[0]

    def call(theta):
        ell, amp, noise = np.exp(theta)
        e = np.exp(-0.5 * d2 / ell**2)
        K = amp**2 * e + (noise**2 + 1e-6) * np.eye(n)
        L = sla.cholesky(K, lower=True, check_finite=False)
        a = sla.cho_solve((L, True), y, check_finite=False)
        kinv = sla.cho_solve((L, True), np.eye(n), check_finite=False)
        nll = 0.5 * y @ a + np.sum(np.log(np.diag(L))) + 0.5 * n * np.log(2 * np.pi)
        w = kinv - np.outer(a, a)
        dks = [amp**2 * e * d2 / ell**2, 2 * amp**2 * e, 2 * noise**2 * np.eye(n)]
        return [nll, np.array([0.5 * np.sum(w * dk) for dk in dks])]

    return call


def l2(rng, rounds):
    print("L2: GP marginal log-likelihood + gradient, n = 1000")
    x, y, theta = gp_data(rng, 1000)
    ours = gp_oxtensor(x, y)
    refs = {"SciPy": gp_scipy(x, y)}
    if jax is not None:
        refs["JAX"] = gp_jax(x, y)
    got = ours(theta)
    for name, ref in refs.items():
        check(got, ref(theta), f"GP vs {name}", rtol=1e-6, atol=1e-6)
    t = race({"ox": lambda: ours(theta), **{k: (lambda r=r: r(theta)) for k, r in refs.items()}},
             rounds, 0.5)
    for name in refs:
        row(f"GP nll+grad vs {name}", t["ox"], t[name], name, 1.0)


def l3(rng, rounds):
    print("L3: batched cholesky + solve, 1000 × 8 × 8")
    g = rng.standard_normal((1000, 8, 8))
    a = g @ np.swapaxes(g, -1, -2) + 8 * np.eye(8)
    b = rng.standard_normal((1000, 8))
    A, B = pt.dtensor3("a"), pt.dmatrix("b")
    L = la.cholesky(A, lower=True)
    ours = oxtensor.function([A, B], [L, la.cho_solve((L, True), B, b_ndim=1)])

    def numpy_ref():
        l_ = np.linalg.cholesky(a)
        return [l_, np.linalg.solve(a, b[..., None])[..., 0]]

    refs = {"NumPy": numpy_ref}
    if jax is not None:
        @jax.jit
        def jf(a, b):
            l_ = jnp.linalg.cholesky(a)
            return l_, jax.vmap(lambda m, v: jsla.cho_solve((m, True), v))(l_, b)

        ja, jb = jnp.asarray(a), jnp.asarray(b)
        refs["JAX"] = lambda: [np.asarray(r) for r in jf(ja, jb)]
    got = ours(a, b)
    for name, ref in refs.items():
        check(got, ref(), f"batched vs {name}")
    t = race({"ox": lambda: ours(a, b), **refs}, rounds, 0.3)
    for name in refs:
        row(f"batched chol+solve vs {name}", t["ox"], t[name], name, 1.0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", default="L1,L2,L3")
    args = p.parse_args()
    only = set(args.only.split(","))
    rng = np.random.default_rng(0)
    print(f"load average {os.getloadavg()[0]:.2f}; JAX {'present' if jax else 'missing'}")
    if "L1" in only:
        l1(rng, [100, 500] if args.quick else [100, 500, 2000], args.rounds)
    if "L2" in only:
        l2(rng, args.rounds)
    if "L3" in only:
        l3(rng, args.rounds)


if __name__ == "__main__":
    main()
