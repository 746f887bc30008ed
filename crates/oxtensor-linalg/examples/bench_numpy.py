"""Times NumPy/SciPy on the shapes of bench.rs (batched calls; SciPy's expm batches natively)."""

import time

import numpy as np
import scipy.linalg as sl

rng = np.random.default_rng(0)


def timed(name, batch, n, f):
    f()
    reps = 5
    t = time.perf_counter()
    for _ in range(reps):
        f()
    ms = (time.perf_counter() - t) * 1e3 / reps
    print(f"{name:10} batch={batch:5} n={n:4} {ms:10.3f} ms")


for batch, n in [(1000, 4), (100, 32), (1, 256), (1, 512)]:
    g = rng.random((batch, n, n)) - 0.5
    a = g @ np.swapaxes(g, -1, -2) + n * np.eye(n)
    b = rng.random((batch, n, 1)) - 0.5
    timed("cholesky", batch, n, lambda: np.linalg.cholesky(a))
    timed("solve", batch, n, lambda: np.linalg.solve(g, b))
    timed("inv", batch, n, lambda: np.linalg.inv(g))
    timed("det", batch, n, lambda: np.linalg.det(g))
    timed("eigh", batch, n, lambda: np.linalg.eigh(a))
    timed("svd", batch, n, lambda: np.linalg.svd(g, full_matrices=False))
    timed("expm", batch, n, lambda: sl.expm(g))
