"""Value and gradient of a logistic-regression negative log-likelihood, X of 10000×100.

Each contender computes ``nll(w) = -mean(y·log σ(Xw) + (1−y)·log(1−σ(Xw)))`` and its gradient
with respect to ``w`` in one call: NumPy written by hand (the stable form, with
``logaddexp``), oxtensor (``function([w], [nll, grad(nll, w)])``, FAST_RUN), and, where
installed, PyTensor and JAX (``jit(value_and_grad)``). All run in one process, rounds
interleaved; the table gives the best milliseconds per call and the ratio to NumPy.

    python bench/logreg_grad.py [--n 10000] [--d 100] [--rounds 7]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def numpy_version(X, y):
    n = X.shape[0]

    def f(w):
        z = X @ w
        # -log σ(z) = logaddexp(0, -z);  -log(1-σ(z)) = logaddexp(0, z)
        nll = np.mean(y * np.logaddexp(0.0, -z) + (1.0 - y) * np.logaddexp(0.0, z))
        p = 0.5 * (1.0 + np.tanh(0.5 * z))
        return nll, X.T @ (p - y) / n

    return f


def oxtensor_version(X, y):
    import oxtensor
    import oxtensor.tensor as pt

    w = pt.dvector("w")
    Xs, ys = pt.constant(X), pt.constant(y)
    p = pt.sigmoid(pt.dot(Xs, w))
    nll = -pt.mean(ys * pt.log(p) + (1 - ys) * pt.log(1 - p))
    f = oxtensor.function([w], [nll, oxtensor.grad(nll, w)])
    return lambda v: f(v)


def pytensor_version(X, y):
    import pytensor
    import pytensor.tensor as pt

    w = pt.dvector("w")
    Xs, ys = pt.constant(X), pt.constant(y)
    p = pt.sigmoid(pt.dot(Xs, w))
    nll = -pt.mean(ys * pt.log(p) + (1 - ys) * pt.log(1 - p))
    f = pytensor.function([w], [nll, pytensor.grad(nll, w)])
    return lambda v: f(v)


def jax_version(X, y):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    Xj, yj = jnp.asarray(X), jnp.asarray(y)

    def nll(w):
        z = Xj @ w
        return jnp.mean(yj * jax.nn.softplus(-z) + (1 - yj) * jax.nn.softplus(z))

    g = jax.jit(jax.value_and_grad(nll))
    return lambda v: tuple(np.asarray(a) for a in jax.block_until_ready(g(v)))


def best_ms(fn, w, rounds):
    fn(w)
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn(w)
        times.append(time.perf_counter() - t)
    return min(times) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--d", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((args.n, args.d))
    y = (rng.random(args.n) < 0.5).astype(np.float64)
    w = rng.standard_normal(args.d) * 0.1

    contenders = [("NumPy (by hand)", numpy_version)]
    contenders.append(("oxtensor", oxtensor_version))
    for name, make, module in [("PyTensor", pytensor_version, "pytensor"), ("JAX jit", jax_version, "jax")]:
        try:
            __import__(module)
        except ImportError:
            print(f"{name} is not installed: skipped")
            continue
        contenders.append((name, make))

    built = [(name, make(X, y)) for name, make in contenders]
    ref_v, ref_g = built[0][1](w)
    for name, fn in built[1:]:
        v, g = fn(w)
        assert np.allclose(v, ref_v, rtol=1e-10) and np.allclose(g, ref_g, rtol=1e-8), name
    results = {name: [] for name, _ in built}
    for _ in range(args.rounds):
        for name, fn in built:
            results[name].append(best_ms(fn, w, 1))
    base = min(results["NumPy (by hand)"])
    print(f"logistic-regression NLL + gradient, X {args.n}×{args.d} float64, best of {args.rounds}")
    print(f"{'contender':<20} {'ms/call':>10} {'vs NumPy':>9}")
    for name, times in results.items():
        print(f"{name:<20} {min(times):>10.3f} {min(times) / base:>8.2f}x")


if __name__ == "__main__":
    main()
