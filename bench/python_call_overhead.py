"""Per-call overhead of a compiled function from Python, on a tiny input.

Compiles ``f = function([x], sum(x**2))`` for a 10-element float64 vector with oxtensor and,
where installed, PyTensor and JAX, and times one call of each against NumPy's own
``np.sum(x**2)``, all in one run. Each row is the best of several rounds (rounds interleave
the contenders, so a busy machine slows them alike); the table gives microseconds per call
and ratios to NumPy and to oxtensor's default (checked) call.

Run after installing the package (``pip install ./crates/oxtensor-py``):

    python bench/python_call_overhead.py [--n 10] [--rounds 7] [--seconds 0.2]

PyTensor and JAX are optional (``pip install pytensor jax``); missing ones are skipped.
"""

from __future__ import annotations

import argparse
import time
import timeit

import numpy as np


def calls_per_round(fn, seconds: float) -> int:
    """A call count that takes about ``seconds``."""
    n = 1
    while True:
        t = timeit.timeit(fn, number=n)
        if t >= seconds / 10:
            return max(1, int(n * seconds / t))
        n *= 4


def contenders(n: int):
    x = np.arange(n, dtype=np.float64)
    rows = [("NumPy   np.sum(x**2)", lambda: np.sum(x**2))]

    import oxtensor
    import oxtensor.tensor as pt

    v = pt.dvector("x")
    f = oxtensor.function([v], pt.sum(v**2))
    ft = oxtensor.function([v], pt.sum(v**2), trust_input=True)
    assert np.allclose(f(x), np.sum(x**2)) and np.allclose(ft(x), np.sum(x**2))
    rows.append(("oxtensor f(x)", lambda: f(x)))
    rows.append(("oxtensor f(x), trust_input=True", lambda: ft(x)))

    try:
        import pytensor
        import pytensor.tensor as ptt
    except ImportError:
        print("PyTensor is not installed: skipped (pip install pytensor)")
    else:
        pv = ptt.dvector("x")
        pf = pytensor.function([pv], ptt.sum(pv**2))
        pft = pytensor.function([pv], ptt.sum(pv**2), trust_input=True)
        assert np.allclose(pf(x), np.sum(x**2))
        rows.append((f"PyTensor {pytensor.__version__} f(x)", lambda: pf(x)))
        rows.append((f"PyTensor {pytensor.__version__} f(x), trust_input=True", lambda: pft(x)))

    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print("JAX is not installed: skipped (pip install jax)")
    else:
        jax.config.update("jax_enable_x64", True)
        jf = jax.jit(lambda a: jnp.sum(a**2))
        xj = jnp.asarray(x)
        assert np.allclose(np.asarray(jf(x)), np.sum(x**2))
        rows.append((f"JAX {jax.__version__} jit f(x) (NumPy in)", lambda: jf(x).block_until_ready()))
        rows.append((f"JAX {jax.__version__} jit f(x) (device array in)", lambda: jf(xj).block_until_ready()))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10, help="vector length (default 10)")
    ap.add_argument("--rounds", type=int, default=7, help="rounds; the best is kept (default 7)")
    ap.add_argument("--seconds", type=float, default=0.2, help="time per contender per round")
    args = ap.parse_args()

    rows = contenders(args.n)
    counts = [calls_per_round(fn, args.seconds) for _, fn in rows]
    best = [float("inf")] * len(rows)
    for _ in range(args.rounds):
        for i, (_, fn) in enumerate(rows):
            t = timeit.timeit(fn, number=counts[i]) / counts[i]
            best[i] = min(best[i], t)
        time.sleep(0.01)

    numpy_us = best[0] * 1e6
    ox_us = best[1] * 1e6
    width = max(len(name) for name, _ in rows)
    print(f"\nper-call time of sum(x**2) on a {args.n}-element float64 vector (best of {args.rounds} rounds)\n")
    print(f"{'':{width}}  {'us/call':>8}  {'vs NumPy':>8}  {'vs oxtensor':>11}")
    for (name, _), t in zip(rows, best):
        us = t * 1e6
        print(f"{name:{width}}  {us:8.3f}  {us / numpy_us:7.2f}x  {us / ox_us:10.2f}x")


if __name__ == "__main__":
    main()
