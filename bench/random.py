"""Random draws: oxtensor against NumPy's ``Generator`` and PyTensor (issue 13's targets).

    T1  10^7 draws of ``normal``, ``uniform``, ``gamma(2, 1)`` and ``exponential``, one thread,
        from a compiled function ``f()`` returning the draw            target: ≤ NumPy's time
    T2  per-call time of a compiled ``normal(size=1000)`` function, next to a compiled
        ``sum(x**2)`` call (x float64 of length 1000) and NumPy's ``rng.normal(size=1000)``
                                                                        target: ≤ 1.5× sum(x**2)

Every contender draws from ``default_rng(0)``; oxtensor and PyTensor compile the same graph
(``pt.random.normal(0, 1, size=n, rng=shared(np.random.default_rng(0)))`` with the generator
update, so each call advances it, as ``rng.normal`` does). The first draws of each contender are
compared with NumPy's (oxtensor must match NumPy; PyTensor's ``normal`` is NumPy's, so it does
too). Rounds interleave the contenders and a row's time is its best round; the ratio column is
the time over NumPy's. Pin one thread with ``OMP_NUM_THREADS=1`` (the draws are single-threaded
anyway).

    python bench/random.py [--n 10000000] [--rounds 5] [--calls 20000]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")


def best(fn, rounds, number):
    """The best time of ``number`` calls of ``fn`` over ``rounds`` rounds, per call."""
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return min(times)


DISTS = {
    "normal": (lambda m, n, rng: m.normal(0.0, 1.0, size=n, rng=rng), lambda g, n: g.normal(0.0, 1.0, n)),
    "uniform": (lambda m, n, rng: m.uniform(0.0, 1.0, size=n, rng=rng), lambda g, n: g.uniform(0.0, 1.0, n)),
    "gamma": (lambda m, n, rng: m.gamma(2.0, scale=1.0, size=n, rng=rng), lambda g, n: g.gamma(2.0, 1.0, n)),
    "exponential": (lambda m, n, rng: m.exponential(1.0, size=n, rng=rng), lambda g, n: g.exponential(1.0, n)),
}


def compiled(lib, pt_random, dist, n):
    """A compiled ``f()`` drawing ``n`` values of ``dist`` and advancing its shared generator."""
    rng = lib.shared(np.random.default_rng(0))
    next_rng, x = dist(pt_random, n, rng)
    return lib.function([], x, updates={rng: next_rng})


def contenders():
    """The libraries present: name -> (pytensor-like module, its tensor.random module)."""
    out = {}
    import oxtensor
    import oxtensor.tensor.random as ox_random

    out["oxtensor"] = (oxtensor, ox_random)
    try:
        import pytensor
        import pytensor.tensor.random as pt_random

        out["pytensor"] = (pytensor, pt_random)
    except ImportError:
        print("pytensor: not installed (skipped)")
    return out


def with_next(pt_random):
    """``pt_random`` with every distribution returning ``(next_rng, draw)``."""

    class Wrapped:
        def __getattr__(self, name):
            fn = getattr(pt_random, name)

            def call(*a, **k):
                out = fn(*a, **k, return_next_rng=True)
                return out

            return call

    return Wrapped()


def throughput(libs, n, rounds):
    print(f"\nT1: {n:.0e} draws, one thread (s per call, best of {rounds}; ratio = time / NumPy's)")
    print(f"{'distribution':<13}{'numpy':>10}" + "".join(f"{k:>12}{'ratio':>8}" for k in libs))
    for name, (sym, ref) in DISTS.items():
        g = np.random.default_rng(0)
        want = ref(np.random.default_rng(0), 5)
        fns = {}
        for lib, (mod, pt_random) in libs.items():
            f = compiled(mod, with_next(pt_random), sym, n)
            got = np.asarray(f())[:5]
            ok = np.allclose(got, want, rtol=1e-12) if lib == "oxtensor" or name != "gamma" else True
            fns[lib] = f if ok else None
        t_np = best(lambda: ref(g, n), rounds, 1)
        row = f"{name:<13}{t_np:>10.4f}"
        for lib in libs:
            f = fns[lib]
            if f is None:
                row += f"{'MISMATCH':>12}{'':>8}"
                continue
            t = best(f, rounds, 1)
            row += f"{t:>12.4f}{t / t_np:>8.2f}"
        print(row)


def per_call(libs, rounds, calls):
    print(f"\nT2: per-call time, size 1000 (µs per call, best of {rounds} × {calls} calls)")
    g = np.random.default_rng(0)
    x = np.random.default_rng(1).normal(size=1000)
    t_np = best(lambda: g.normal(size=1000), rounds, calls) * 1e6
    print(f"{'numpy rng.normal(size=1000)':<40}{t_np:>10.2f}")
    for lib, (mod, pt_random) in libs.items():
        f = compiled(mod, with_next(pt_random), DISTS["normal"][0], 1000)
        f()
        t_draw = best(f, rounds, calls) * 1e6
        xs = (mod.tensor if hasattr(mod, "tensor") else None).dvector("x")
        s = mod.function([xs], (xs**2).sum())
        s(x)
        t_sum = best(lambda: s(x), rounds, calls) * 1e6
        print(f"{lib + ' normal(size=1000)':<40}{t_draw:>10.2f}")
        print(f"{lib + ' sum(x**2), x of 1000':<40}{t_sum:>10.2f}   draw / sum = {t_draw / t_sum:.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=20_000)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print(f"numpy {np.__version__}; load average {os.getloadavg()[0]:.2f}")
    libs = contenders()
    throughput(libs, args.n, args.rounds)
    per_call(libs, args.rounds, args.calls)


if __name__ == "__main__":
    main()
