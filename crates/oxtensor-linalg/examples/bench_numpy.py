"""Times NumPy/SciPy (and JAX jit, when installed) on the shapes of bench.rs, one thread.

Run: `python3 crates/oxtensor-linalg/examples/bench_numpy.py [name filter]`. Each line is the best of
several repetitions, in milliseconds, as bench.rs prints them.
"""

import os

for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"

import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.linalg as sl  # noqa: E402

try:
    import jax  # noqa: E402

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp  # noqa: E402
    import jax.scipy.linalg as jsl  # noqa: E402
except ImportError:
    jax = None

rng = np.random.default_rng(0)


ONLY = sys.argv[1] if len(sys.argv) > 1 else ""


def timed(name, shape, f):
    if ONLY not in name:
        return
    f()
    best, reps, start = float("inf"), 0, time.perf_counter()
    while reps < 3 or (time.perf_counter() - start < 0.5 and reps < 200):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
        reps += 1
    print(f"{name:24} {shape:12} {best * 1e3:10.4f} ms")


def spd(batch, n):
    g = rng.standard_normal((batch, n, n))
    return g @ np.swapaxes(g, -1, -2) + n * np.eye(n)


def banded(n, kl, ku):
    a = np.triu(np.tril(rng.random((n, n)) - 0.5, ku), -kl)
    return a + 2 * np.eye(n)


a, b = spd(1000, 8), rng.standard_normal((1000, 8))
timed("batched chol+cho_solve", "1000x8x8",
      lambda: (np.linalg.cholesky(a), np.linalg.solve(a, b[..., None])))
if jax is not None:

    @jax.jit
    def chol_solve(a, b):
        l_ = jnp.linalg.cholesky(a)
        return l_, jax.vmap(lambda m, v: jsl.cho_solve((m, True), v))(l_, b)

    ja, jb = jnp.asarray(a), jnp.asarray(b)
    timed("batched chol+cho_solve JAX", "1000x8x8", lambda: [x.block_until_ready() for x in chol_solve(ja, jb)])
timed("batched cholesky", "1000x8x8", lambda: np.linalg.cholesky(a))
timed("batched solve", "1000x8x8", lambda: np.linalg.solve(a, b[..., None]))
timed("batched det", "1000x8x8", lambda: np.linalg.det(a))
for n, kl, ku in ((1000, 1, 1), (10000, 1, 1), (2000, 3, 2)):
    t, r = banded(n, kl, ku), rng.standard_normal(n)
    kind = "Tridiagonal" if kl == ku == 1 else "Banded"
    timed(f"solve {kind}", f"n={n}",
          lambda: sl.solve(t, r, assume_a=kind.lower(), check_finite=False))
for n in (100, 500, 2000):
    s, g, r = spd(1, n)[0], rng.standard_normal((n, n)), rng.standard_normal((n, 1))
    shape = f"n={n}"
    timed("cholesky", shape, lambda: sl.cholesky(s, lower=True, check_finite=False))
    timed("solve", shape, lambda: sl.solve(g, r, check_finite=False))
    timed("eigh", shape, lambda: sl.eigh(s, check_finite=False))
    timed("eigvalsh", shape, lambda: sl.eigh(s, eigvals_only=True, check_finite=False))
    timed("svd", shape, lambda: sl.svd(g, full_matrices=False, check_finite=False))
    timed("svd values", shape, lambda: sl.svd(g, compute_uv=False, check_finite=False))
    timed("qr", shape, lambda: sl.qr(g, check_finite=False))
    timed("det", shape, lambda: sl.det(g, check_finite=False))
