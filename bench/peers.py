"""oxtensor against its peers (NumPy, PyTensor, JAX, Numba) on the issue's workloads.

    W1  per-call overhead of ``sum(x**2)``, x float64 of length 10, from Python (µs per call;
        extra rows: oxtensor and PyTensor with ``trust_input=True``)      target: ≤ 3× fastest peer
                                                                      (Numba), ≤ 2× with trust_input
    W2  ``exp(-x**2)*sin(y) + log1p(abs(x*y))`` on 10^7 float64     target: oxtensor ≤ 0.5× fastest peer
    W3  row-wise logsumexp of a 2000×2000 float64 matrix              target: ≤ 0.9× fastest peer
    W4  ``relu(X@W1 + b1)@W2`` (X 512×1024, W1 1024×1024, W2 1024×256), float64 and float32
                                                                      target: ≤ 0.95× fastest peer
    W5  logistic-regression NLL and its gradient w.r.t. w, X 10000×100 target: ≤ fastest peer
    W6  AR(1) recurrence ``h[t] = a*h[t-1] + x[t]`` by ``scan``, 10^5 steps, whole trajectory
                                                                      target: ≤ 1.2× fastest peer
                                                                      (Numba's hand-written loop)
    C5  compile time of W5 (``function()`` or ``jit`` to first result): oxtensor from an empty
        cache (a fresh ``OXTENSOR_CACHE_DIR``, in a new process) and warm (a second
        ``function()`` of the same graph); PyTensor and JAX in a new process, for context
                                                                      targets: cold < 0.3 s, warm < 5 ms

oxtensor and PyTensor compile the very same graph (the APIs match; for W3 users write
``log(sum(exp(x), axis=1))`` and the compilers stabilize it) in their default modes: oxtensor
FAST_RUN (the native C backend when a C compiler works), PyTensor whatever its default linker is
(printed; Numba in PyTensor 3). NumPy is written by hand (W3 max-shifted, plus
``scipy.special.logsumexp``); JAX is ``jax.jit`` with x64 on and ``block_until_ready``; Numba is
``njit``, ``parallel=True`` with ``prange`` loops for W2 and W3, plain array code for the BLAS-bound
W4 and W5. Every contender gets the same NumPy arrays, is called once to compile and once to warm
up, and must match NumPy's result (``np.allclose``, looser for float32; same dtype and shape), or
its row says MISMATCH (or ERROR) instead of a time.

Rounds interleave the contenders, so machine noise hits them alike; a round times many calls
(W1: 20,000; others: about 0.1 s worth) and a row's time is its best round. Before each batch the
script sleeps 0.25 s: OpenBLAS workers keep spinning for a while after a call, and without the
pause they steal cores from whichever contender runs next (this doubled NumPy's W4 time once). "vs peer" is the ratio
to the fastest peer (every row that is not oxtensor). Thread counts are each library's default
(pin them with ``OMP_NUM_THREADS``/``OPENBLAS_NUM_THREADS``); the load average is printed because
a busy machine slows multi-threaded BLAS far more than anything else.

    python bench/peers.py [--quick] [--only W2,W3] [--rounds N]

W2-W5 have a second oxtensor row whose C is compiled for a lower CPU (``--targets``, by default
``x86-64-v3``, the AVX2 level, through the linker ``native:x86-64-v3``): on an AVX-512 machine it
measures, in the same run, the code AVX2-only CPUs get; its target is the same.

``--scaling`` prints instead how W2, W3 and W5 scale from 1 to 2 threads, for every contender:
one child process per thread count, pinned to that many CPUs, with every library's thread
variable set (target: oxtensor ≥ 1.7× faster with 2 threads).

    python bench/peers.py --scaling [--quick]

PyTensor, JAX, Numba and SciPy are optional: a missing one is reported as skipped.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import timeit
from dataclasses import dataclass
from typing import Callable

import numpy as np

WORKLOADS = ("W1", "W2", "W3", "W4", "W5", "W6", "C5")


def lib(name):
    """The module ``name``, or None when it is not installed (JAX gets x64 switched on)."""
    try:
        mod = importlib.import_module(name)
    except ImportError:
        return None
    if name == "jax":
        mod.config.update("jax_enable_x64", True)
    return mod


@dataclass
class Row:
    name: str
    build: Callable[[], Callable[[], object]]  # compiles; returns the zero-argument timed call
    needs: str | None = None  # the optional module it needs
    ox: bool = False  # an oxtensor row (not a peer)
    ref: object = None  # what its result must match, when not the workload's reference


#: The CPUs oxtensor's native code is also compiled for, beside this machine's (``--targets``):
#: each adds an oxtensor row whose C is built with that ``-march``, so an AVX-512 machine
#: measures what AVX2-only machines run.
LOWER_TARGETS = ["x86-64-v3"]


def tensor_rows(graph, args, trust_rows=False, lower=False):
    """oxtensor and PyTensor rows compiling ``graph(pkg, pt) -> (inputs, outputs)``: oxtensor
    in its default mode, and (``lower``) once more per ``LOWER_TARGETS`` CPU."""
    rows = []
    for mod, label in (("oxtensor", "oxtensor"), ("pytensor", "PyTensor")):
        variants = [(False, None)] + [(True, None)] * trust_rows
        if mod == "oxtensor" and lower:
            variants += [(False, target) for target in LOWER_TARGETS]
        for trust, target in variants:

            def build(mod=mod, trust=trust, target=target):
                pkg, pt = importlib.import_module(mod), importlib.import_module(mod + ".tensor")
                ins, outs = graph(pkg, pt)
                mode = None if target is None else pkg.Mode(linker=f"native:{target}")
                f = pkg.function(ins, outs, trust_input=trust, mode=mode)
                return lambda: f(*args)

            name = label + (", trust_input=True" if trust else "") + (f" ({target} code)" if target else "")
            rows.append(Row(name, build, mod, mod == "oxtensor"))
    return rows


def jax_row(make, args, name="JAX jit"):
    """``make(jax)`` returns the function to ``jax.jit``."""

    def build():
        jax = lib("jax")
        jf = jax.jit(make(jax))
        return lambda: jax.block_until_ready(jf(*args))

    return Row(name, build, "jax")


def numba_row(make, args, name="Numba njit(parallel)"):
    """``make(numba)`` returns the njit-compiled function."""

    def build():
        f = make(lib("numba"))
        return lambda: f(*args)

    return Row(name, build, "numba")


# ---------------------------------------------------------------- workloads


def w1(s):
    x = np.random.default_rng(1).standard_normal(10)

    def graph(pkg, pt):
        v = pt.dvector("x")
        return [v], pt.sum(v**2)

    rows = [Row("NumPy", lambda: lambda: np.sum(x**2))]
    rows += tensor_rows(graph, [x], trust_rows=True)
    rows.append(jax_row(lambda jax: lambda a: jax.numpy.sum(a**2), [x]))
    rows.append(numba_row(lambda nb: nb.njit(lambda a: np.sum(a**2)), [x], "Numba njit"))
    return dict(title="sum(x**2), x float64[10], per call from Python", target=3.0, trust_target=2.0,
                rows=rows, ref=np.sum(x**2), calls=s.calls)


def w2(s):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal(s.n2), rng.standard_normal(s.n2)

    def graph(pkg, pt):
        a, b = pt.dvector("x"), pt.dvector("y")
        return [a, b], pt.exp(-(a**2)) * pt.sin(b) + pt.log1p(pt.abs(a * b))

    def numba(nb):
        @nb.njit(parallel=True)
        def f(x, y):
            out = np.empty_like(x)
            for i in nb.prange(x.size):
                out[i] = math.exp(-x[i] ** 2) * math.sin(y[i]) + math.log1p(abs(x[i] * y[i]))
            return out

        return f

    def jax(jax):
        jnp = jax.numpy
        return lambda a, b: jnp.exp(-(a**2)) * jnp.sin(b) + jnp.log1p(jnp.abs(a * b))

    def by_hand():
        return np.exp(-(x**2)) * np.sin(y) + np.log1p(np.abs(x * y))

    rows = [Row("NumPy", lambda: by_hand)] + tensor_rows(graph, [x, y], lower=True)
    rows += [jax_row(jax, [x, y]), numba_row(numba, [x, y])]
    return dict(title=f"exp(-x**2)*sin(y) + log1p(abs(x*y)), 10^{round(math.log10(s.n2))} float64",
                target=0.5, rows=rows, ref=by_hand())


def w3(s):
    # Every entry overflows exp(): only a stabilized logsumexp gets the right answer.
    x = 1000.0 + 10.0 * np.random.default_rng(3).standard_normal((s.n3, s.n3))

    def by_hand(x):
        m = x.max(axis=1)
        return m + np.log(np.sum(np.exp(x - m[:, None]), axis=1))

    def graph(pkg, pt):
        a = pt.dmatrix("x")
        return [a], pt.log(pt.sum(pt.exp(a), axis=1))

    def numba(nb):
        @nb.njit(parallel=True)
        def f(x):
            out = np.empty(x.shape[0])
            for i in nb.prange(x.shape[0]):
                m = x[i].max()
                acc = 0.0
                for j in range(x.shape[1]):
                    acc += math.exp(x[i, j] - m)
                out[i] = m + math.log(acc)
            return out

        return f

    rows = [Row("NumPy (max-shifted)", lambda: lambda: by_hand(x))]
    rows.append(Row("SciPy special.logsumexp", lambda: lambda: lib("scipy.special").logsumexp(x, axis=1), "scipy"))
    rows += tensor_rows(graph, [x], lower=True)
    rows.append(jax_row(lambda jax: lambda a: jax.nn.logsumexp(a, axis=1), [x], "JAX jit (nn.logsumexp)"))
    rows.append(numba_row(numba, [x]))
    return dict(title=f"row-wise logsumexp, {s.n3}×{s.n3} float64, written log(sum(exp(x), axis=1))",
                target=0.9, rows=rows, ref=by_hand(x))


def w4(s, dtype):
    n, k, h, m = s.n4
    dtype = np.dtype(dtype).name
    rng = np.random.default_rng(4)
    X = rng.standard_normal((n, k)).astype(dtype)
    W1 = (rng.standard_normal((k, h)) / math.sqrt(k)).astype(dtype)
    b1 = rng.standard_normal(h).astype(dtype)
    W2 = (rng.standard_normal((h, m)) / math.sqrt(h)).astype(dtype)
    args = [X, W1, b1, W2]

    def graph(pkg, pt):
        v = [pt.matrix("X", dtype=dtype), pt.matrix("W1", dtype=dtype), pt.vector("b1", dtype=dtype),
             pt.matrix("W2", dtype=dtype)]
        return v, pt.dot(pt.maximum(pt.dot(v[0], v[1]) + v[2], 0), v[3])

    def numba(nb):
        zero = np.dtype(dtype).type(0)  # keeps float32 float32 in Numba's typing
        return nb.njit(lambda X, W1, b1, W2: np.maximum(X @ W1 + b1, zero) @ W2)

    ref = np.maximum(X @ W1 + b1, 0) @ W2
    rows = [Row("NumPy", lambda: lambda: np.maximum(X @ W1 + b1, 0) @ W2)] + tensor_rows(graph, args, lower=True)
    rows.append(jax_row(lambda jax: lambda X, W1, b1, W2: jax.numpy.maximum(X @ W1 + b1, 0) @ W2, args))
    rows.append(numba_row(numba, args, "Numba njit"))
    return dict(title=f"relu(X@W1 + b1)@W2, X {n}×{k}, W1 {k}×{h}, W2 {h}×{m}, {dtype}",
                target=0.95, rows=rows, ref=ref)


def logreg_data(n, d):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((n, d))
    return X, (rng.random(n) < 0.5).astype(np.float64), rng.standard_normal(d) * 0.1


def logreg_graph(X, y):
    def graph(pkg, pt):  # as a PyTensor user writes it; X and y are constants of the graph
        w = pt.dvector("w")
        Xs, ys = pt.constant(X), pt.constant(y)
        p = pt.sigmoid(pt.dot(Xs, w))
        nll = -pt.mean(ys * pt.log(p) + (1 - ys) * pt.log(1 - p))
        return [w], [nll, pkg.grad(nll, w)]

    return graph


def logreg_jax(X, y):
    def make(jax):
        Xj, yj = jax.numpy.asarray(X), jax.numpy.asarray(y)

        def nll(w):
            z = Xj @ w
            return jax.numpy.mean(yj * jax.nn.softplus(-z) + (1 - yj) * jax.nn.softplus(z))

        return jax.value_and_grad(nll)

    return make


def w5(s):
    X, y, w = logreg_data(*s.n5)
    n = X.shape[0]

    def by_hand(w):  # -log σ(z) = logaddexp(0, -z);  -log(1-σ(z)) = logaddexp(0, z)
        z = X @ w
        nll = np.mean(y * np.logaddexp(0.0, -z) + (1.0 - y) * np.logaddexp(0.0, z))
        return nll, X.T @ (0.5 * (1.0 + np.tanh(0.5 * z)) - y) / n

    def numba(nb):
        @nb.njit  # BLAS does the heavy lifting; parallel=True only oversubscribes the cores
        def f(w, X, y):
            z = X @ w
            r = np.empty_like(z)
            total = 0.0
            for i in range(z.size):  # nll_i = softplus(z) - y z;  dnll_i/dz = σ(z) - y
                total += max(z[i], 0.0) + math.log1p(math.exp(-abs(z[i]))) - y[i] * z[i]
                r[i] = 1.0 / (1.0 + math.exp(-z[i])) - y[i]
            return total / z.size, X.T @ r / z.size

        return f

    rows = [Row("NumPy (by hand)", lambda: lambda: by_hand(w))] + tensor_rows(logreg_graph(X, y), [w], lower=True)
    rows += [jax_row(logreg_jax(X, y), [w], "JAX jit(value_and_grad)"), numba_row(numba, [w, X, y], "Numba njit")]
    return dict(title=f"logistic-regression NLL + gradient, X {n}×{X.shape[1]} float64", target=1.0,
                rows=rows, ref=by_hand(w))


# ---------------------------------------------------------------- measuring


def w6(s):
    x = np.random.default_rng(6).standard_normal(s.n6)
    a, h0 = 0.9, 0.0

    def graph(pkg, pt):
        xs, av, hv = pt.dvector("x"), pt.dscalar("a"), pt.dscalar("h0")
        h = pkg.scan(lambda xt, hp, a: a * hp + xt, sequences=xs, outputs_info=hv, non_sequences=av,
                     return_updates=False)
        return [xs, av, hv], h

    def numba(nb):
        @nb.njit
        def f(x, a, h0):
            out = np.empty_like(x)
            h = h0
            for t in range(x.size):
                h = a * h + x[t]
                out[t] = h
            return out

        return f

    def jax(jax):
        def f(x, a, h0):
            def step(h, xt):
                h = a * h + xt
                return h, h

            return jax.lax.scan(step, h0, x)[1]

        return f

    scipy_signal = lib("scipy.signal")
    ref = np.empty_like(x)
    h = h0
    for t in range(x.size):
        h = a * h + x[t]
        ref[t] = h
    rows = tensor_rows(graph, [x, a, h0]) + [jax_row(jax, [x, a, h0]), numba_row(numba, [x, a, h0], "Numba njit")]
    if scipy_signal:
        rows.append(Row("SciPy lfilter", lambda: lambda: scipy_signal.lfilter([1.0], [1.0, -a], x), "scipy"))
    return dict(title=f"AR(1) by scan, 10^{round(math.log10(s.n6))} steps, whole trajectory", target=1.2,
                rows=rows, ref=ref)


def mismatch(got, ref):
    """Why ``got`` does not match NumPy's ``ref`` (None when it does)."""
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    ref = list(ref) if isinstance(ref, (list, tuple)) else [ref]
    if len(got) != len(ref):
        return f"{len(got)} outputs, expected {len(ref)}"
    for i, (g, r) in enumerate(zip(map(np.asarray, got), map(np.asarray, ref))):
        if g.shape != r.shape or g.dtype != r.dtype:
            return f"output {i}: {g.dtype}{list(g.shape)}, expected {r.dtype}{list(r.shape)}"
        f32 = r.dtype == np.float32
        scale = float(np.max(np.abs(r))) if r.size else 1.0
        if not np.allclose(g, r, rtol=1e-3 if f32 else 1e-7, atol=(1e-4 if f32 else 1e-10) * scale):
            err = np.abs(g.astype(np.float64) - r)
            return f"output {i}: max abs error {np.nanmax(err) if np.isfinite(err).any() else err.max():.3g}" + (
                f", {np.count_nonzero(~np.isfinite(g))} non-finite" if not np.isfinite(g).all() else "")
    return None


def measure(wl, rounds, round_seconds=0.1, settle=0.25):
    """Builds, checks and times every row; returns [(row, seconds or None, note)]."""
    live, out = [], {}
    for row in wl["rows"]:
        if row.needs and lib(row.needs) is None:
            out[row.name] = (None, f"skipped: {row.needs} is not installed")
            continue
        try:
            fn = row.build()
            fn()  # compile
            t = time.perf_counter()
            got = fn()
            once = time.perf_counter() - t
        except Exception as e:  # noqa: BLE001 - report any contender failure in its row
            out[row.name] = (None, f"ERROR: {type(e).__name__}: {e}".splitlines()[0][:200])
            continue
        bad = mismatch(got, wl["ref"] if row.ref is None else row.ref)
        if bad:
            out[row.name] = (None, f"MISMATCH vs NumPy: {bad}")
            continue
        live.append((row, fn, wl.get("calls") or max(1, min(1000, int(round_seconds / max(once, 1e-9))))))
    best = {row.name: math.inf for row, _, _ in live}
    for _ in range(rounds):
        for row, fn, calls in live:
            time.sleep(settle)  # lets the previous contender's spinning BLAS/thread-pool workers go idle
            best[row.name] = min(best[row.name], timeit.timeit(fn, number=calls) / calls)
    out.update({name: (t, "") for name, t in best.items()})
    return [(row, *out[row.name]) for row in wl["rows"]]


def report(key, wl, results, unit, summary):
    scale, ulabel = (1e6, "µs/call") if unit == "us" else (1e3, "ms/call")
    peers = [(t, row.name) for row, t, _ in results if t is not None and not row.ox]
    fastest, fastest_name = min(peers) if peers else (None, "none")
    target, limit = wl["target"], wl.get("limit")
    scaled_limit = f"{limit * scale:g} {ulabel.split('/')[0]}" if limit else ""
    goal = (f"target: oxtensor < {scaled_limit}" if limit else
            "no target" if target is None else f"target: oxtensor ≤ {target:g}× fastest peer")
    if wl.get("trust_target"):
        goal += f", ≤ {wl['trust_target']:g}× with trust_input=True"
    print(f"\n{key}  {wl['title']}  ({goal}; fastest peer: {fastest_name})")
    width = max(len(row.name) for row, _, _ in results) + 2
    print(f"{'contender':<{width}}{ulabel:>10}{'vs peer':>9}  target")
    for row, t, note in results:
        if t is None:
            print(f"{row.name:<{width}}{note}")
            continue
        ratio = t / fastest if fastest else math.nan
        met = ""
        row_target = wl.get("trust_target") if "trust_input" in row.name else target
        if row.ox and row_target is not None and fastest:
            met = "met" if ratio <= row_target else "MISSED"
            summary.append((f"{key} {row.name} ≤ {row_target:g}× fastest peer ({ratio:.2f}×)", met == "met"))
        if row.ox and limit is not None and "trust_input" not in row.name:
            met = "met" if t < limit else "MISSED"
            summary.append((f"{key} {row.name} < {scaled_limit} ({t * scale:.3f})", met == "met"))
        print(f"{row.name:<{width}}{t * scale:>10.3f}{ratio:>8.2f}×  {met}")
    if target is not None and not any(row.ox and t is not None for row, t, _ in results):
        summary.append((f"{key} oxtensor ≤ {target:g}× fastest peer (oxtensor failed)", False))


# ---------------------------------------------------------------- compile time (C5)


def compile_probe(name, n, d):
    """In a fresh process: seconds from ``function()``/``jit`` to the first W5 result, twice."""
    X, y, w = logreg_data(n, d)
    times = []
    if name == "jax":
        jax = lib("jax")
        make = logreg_jax(X, y)
        for _ in range(2):  # the second is a new jit of the same function
            t = time.perf_counter()
            jax.block_until_ready(jax.jit(make(jax))(w))
            times.append(time.perf_counter() - t)
        pc = jax.config.jax_compilation_cache_dir
        note = f"persistent cache {pc}" if pc else "no persistent cache"
    else:
        pkg, pt = importlib.import_module(name), importlib.import_module(name + ".tensor")
        cache = os.environ["OXTENSOR_CACHE_DIR"] if name == "oxtensor" else pkg.config.base_compiledir
        files = lambda: [f for _, _, fs in os.walk(cache) for f in fs]  # noqa: E731 - its C/Numba caches
        before = len(files())
        ins, outs = logreg_graph(X, y)(pkg, pt)
        for _ in range(2):
            t = time.perf_counter()
            pkg.function(ins, outs)(w)
            times.append(time.perf_counter() - t)
        added = len(files()) - before
        note = f"cache cold: {added} files added to it" if added else "cache warm: nothing added to it"
        if name == "oxtensor" and not any(f.endswith(".so") for f in files()):
            note += "; no native module in the cache: interpreter?"
    print(json.dumps(dict(times=times, note=note)))


def run_probe(name, n, d, env=None):
    """Runs ``compile_probe`` in a new process: (result, None) or (None, error)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--compile-probe", name, "--probe-size", f"{n},{d}"]
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if p.returncode != 0:
        return None, "ERROR: " + (p.stderr.strip().splitlines() or ["no output"])[-1]
    return json.loads(p.stdout.strip().splitlines()[-1]), None


def compile_times(s, summary):
    n, d = s.n5
    print(f"\nC5  compile time of W5 (X {n}×{d}): function()/jit to first result, in new processes  "
          "(targets: oxtensor cold < 300 ms, warm < 5 ms)")
    rows = []  # (label, seconds or None, note, target seconds or None)
    with tempfile.TemporaryDirectory(prefix="oxtensor-peers-") as root:
        dirs = [os.path.join(root, str(i)) for i in range(s.cold_runs)]
        runs = [run_probe("oxtensor", n, d, {"OXTENSOR_CACHE_DIR": dir_}) for dir_ in dirs]
        errors = [err for _, err in runs if err]
        if errors:
            rows.append(("oxtensor", None, errors[0], None))
        else:
            best = min((r for r, _ in runs), key=lambda r: r["times"][0])
            rows.append((f"oxtensor cold (empty cache, best of {len(runs)})", best["times"][0], best["note"], 0.3))
            rows.append(("oxtensor warm (2nd function() of the graph)", min(r["times"][1] for r, _ in runs), "", 0.005))
            res, err = run_probe("oxtensor", n, d, {"OXTENSOR_CACHE_DIR": dirs[0]})
            rows.append(("oxtensor warm (new process, filled cache)", res and res["times"][0], err or "", None))
    for name, label, again in (("pytensor", "PyTensor", "2nd function()"),
                               ("jax", "JAX jit", "new jit, same function")):
        res, err = (None, f"skipped: {name} is not installed") if lib(name) is None else run_probe(name, n, d)
        if err:
            rows.append((label, None, err, None))
        else:
            rows.append((f"{label} first", res["times"][0], res["note"], None))
            rows.append((f"{label} again ({again})", res["times"][1], "", None))
    width = max(len(r[0]) for r in rows) + 2
    print(f"{'':<{width}}{'ms':>10}  target")
    for label, t, note, goal in rows:
        if t is None:
            print(f"{label:<{width}}{note}")
            continue
        met = ""
        if goal:
            met = f"< {goal * 1e3:g} ms " + ("met" if t < goal else "MISSED")
            summary.append((f"C5 {label}: {t * 1e3:.1f} ms, {met}", t < goal))
        print(f"{label:<{width}}{t * 1e3:>10.2f}  {met}{'  ' + note if note else ''}")


# ---------------------------------------------------------------- thread scaling


#: The workloads whose thread scaling the issue sets a target for, and that target: 2 threads
#: at least this many times faster than 1.
SCALING = ("W2", "W3", "W5")
SCALING_TARGET = 1.7


def thread_env(n):
    """The environment that gives every library ``n`` threads (XLA has no thread-count flag
    but one that turns its thread pool off; the CPU affinity the child gets bounds the rest)."""
    env = {k: str(n) for k in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                               "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}
    if n == 1:
        env["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    return env


def scaling(a, summary):
    """Runs the ``SCALING`` workloads in one child process per thread count (1 and 2), each
    pinned to that many CPUs with the thread environment set, and prints each contender's speedup."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        print("\nthread scaling: skipped, this process may use only one CPU")
        return
    only = [k for k in SCALING if k in a.only.upper().split(",")] or list(SCALING)
    times = {}
    with tempfile.TemporaryDirectory(prefix="oxtensor-scaling-") as root:
        for n in (1, 2):
            out = os.path.join(root, f"{n}.json")
            cmd = [sys.executable, os.path.abspath(__file__), "--only", ",".join(only), "--json", out]
            cmd += ["--quick"] * a.quick + (["--rounds", str(a.rounds)] if a.rounds else [])
            p = subprocess.run(cmd, env={**os.environ, **thread_env(n)}, capture_output=True, text=True,
                               preexec_fn=lambda n=n: os.sched_setaffinity(0, cpus[:n]))
            if p.returncode != 0:
                print(f"\nthread scaling: the {n}-thread run failed: {p.stderr.strip()[-500:]}")
                return
            with open(out) as f:
                times[n] = json.load(f)
    print(f"\nthread scaling: each workload with 1 and with 2 threads (separate runs, each pinned to that "
          f"many CPUs; target: oxtensor ≥ {SCALING_TARGET}× faster with 2)")
    for key in times[1]:
        print(f"\n{key}")
        width = max(len(name) for name, _, _ in times[1][key]) + 2
        print(f"{'contender':<{width}}{'1 thread ms':>12}{'2 threads ms':>14}{'speedup':>9}  target")
        two = {name: t for name, t, _ in times[2].get(key, [])}
        for name, t1, note in times[1][key]:
            t2 = two.get(name)
            if t1 is None or t2 is None:
                print(f"{name:<{width}}{note or 'no 2-thread time'}")
                continue
            speedup, met = t1 / t2, ""
            if name == "oxtensor":
                met = "met" if speedup >= SCALING_TARGET else "MISSED"
                summary.append((f"{key} oxtensor 2 threads ≥ {SCALING_TARGET}× 1 thread ({speedup:.2f}×)",
                                met == "met"))
            print(f"{name:<{width}}{t1 * 1e3:>12.3f}{t2 * 1e3:>14.3f}{speedup:>8.2f}×  {met}")


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes and 3 rounds (a smoke run)")
    ap.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated subset of " + ",".join(WORKLOADS))
    ap.add_argument("--rounds", type=int, default=None, help="timing rounds; the best is kept (default 7, quick 3)")
    ap.add_argument("--targets", default=",".join(LOWER_TARGETS),
                    help="comma-separated GCC -march names oxtensor's C is also built for, each an extra "
                         "row of W2-W5 (default %(default)s; empty for none)")
    ap.add_argument("--scaling", action="store_true",
                    help=f"only the thread-scaling table: {','.join(SCALING)} with 1 and 2 threads")
    ap.add_argument("--json", help="also write the timings to this file (JSON)")
    ap.add_argument("--compile-probe", help=argparse.SUPPRESS)
    ap.add_argument("--probe-size", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.compile_probe:
        return compile_probe(a.compile_probe, *map(int, a.probe_size.split(",")))

    only = [k.strip().upper() for k in a.only.split(",") if k.strip()]
    unknown = set(only) - set(WORKLOADS)
    if unknown:
        ap.error(f"unknown workload(s) {sorted(unknown)}; choose from {','.join(WORKLOADS)}")
    LOWER_TARGETS[:] = [t.strip() for t in a.targets.split(",") if t.strip()]
    q = a.quick
    s = argparse.Namespace(calls=2_000 if q else 20_000, n2=10**6 if q else 10**7, n3=500 if q else 2000,
                           n4=(128, 256, 256, 64) if q else (512, 1024, 1024, 256),
                           n5=(2000, 50) if q else (10_000, 100), n6=10**4 if q else 10**5,
                           cold_runs=1 if q else 3)
    rounds = a.rounds or (3 if q else 7)

    import oxtensor

    versions = [f"oxtensor {oxtensor.__version__} (mode {oxtensor.config.mode})", f"NumPy {np.__version__}"]
    for mod in ("pytensor", "jax", "numba", "scipy"):
        m = lib(mod)
        versions.append(f"{mod} {m.__version__}" if m else f"{mod} not installed: its rows are skipped")
        if m and mod == "pytensor":
            versions[-1] += f" ({type(m.compile.mode.get_default_mode().linker).__name__})"
    print(f"{', '.join(versions)}; {os.cpu_count()} CPUs (load average {os.getloadavg()[0]:.1f}); "
          f"best of {rounds} interleaved rounds; "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '-')}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '-')}"
          + ("; --quick sizes" if q else ""))

    summary = []
    if a.scaling:
        scaling(a, summary)
        only = []
    timings = {}
    builders = dict(W1=lambda: [("W1", w1(s), "us")], W2=lambda: [("W2", w2(s), "ms")],
                    W3=lambda: [("W3", w3(s), "ms")], W5=lambda: [("W5", w5(s), "ms")],
                    W6=lambda: [("W6", w6(s), "ms")],
                    W4=lambda: [("W4 f64", w4(s, np.float64), "ms"), ("W4 f32", w4(s, np.float32), "ms")])
    for key in WORKLOADS:
        if key not in only:
            continue
        if key == "C5":
            compile_times(s, summary)
            continue
        for label, wl, unit in builders[key]():
            results = measure(wl, rounds)
            timings[label] = [(row.name, t, note) for row, t, note in results]
            report(label, wl, results, unit, summary)
            sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(timings, f)
    if summary:
        print(f"\ntargets: {sum(ok for _, ok in summary)} of {len(summary)} met (load average now "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs: a busy machine slows threaded BLAS most)")
        for text, ok in summary:
            print(f"  {'met   ' if ok else 'MISSED'}  {text}")


if __name__ == "__main__":
    main()
