"""Where the time of one small call goes: W1 (``sum(x**2)``, x float64 of length 10) from Python.

A sampler calls one compiled function 10^5-10^6 times on tiny arrays, so what counts is the
fixed cost of a call, not the kernel. This script times, side by side in one interleaved run,

* the peers: Numba ``njit`` (the target's yardstick), PyTensor (default and ``trust_input``),
  NumPy by hand;
* oxtensor's ways of making the same call: ``f(x)``, ``trust_input=True``, by keyword (the
  argument-binding path), the interpreter backend instead of the native one;
* oxtensor variants that take parts away: a graph with no node (its output is its input, so the
  output is copied), a graph whose output is a constant (no kernel runs), and
* the stages of one call (``Function._call_stages(stage, x)``, a test hook running the call path
  up to a stage and returning ``None``):

  ====  =======================================================================
  0     the Python -> Rust transition and argument tuple (nothing else)
  1     + the arguments turned into tensors (zero-copy wrap, with the fact checks)
  2     + the executor (the compiled kernels, fresh or reused output buffers)
  3     + the outputs turned into NumPy arrays (the whole call but for returning it)
  4     stage 2 with the GIL released around the executor (what large calls do)
  ====  =======================================================================

  so stage k minus stage k-1 is the cost of stage k.

Each row's statement is timed by ``timeit`` with the objects bound as globals (no lambda in
between); a round times ``--calls`` calls of every row in turn, rows in a new random order each
round, and a row's time is its best round. Ratios are to Numba ``njit`` (a missing Numba leaves
them out). Pin the process to one core for stable numbers::

    taskset -c 1 python bench/call_overhead.py [--rounds 15] [--calls 50000]

Numba, PyTensor and the ``_call_stages`` hook are optional: a missing one drops its rows. Build
oxtensor in release mode first (``pip install ./crates/oxtensor-py``): a dev build's call path
is several times slower and says nothing about the release one.

To compare two builds in one interleaved run, install the other one in another virtualenv and
name its interpreter: its oxtensor rows run in a worker process, round by round in turn with
this one's, and are listed with a ``before:`` prefix::

    taskset -c 1 python bench/call_overhead.py --baseline /path/to/other/venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import timeit

import numpy as np


def rows(x):
    """``(label, statement, globals)`` of every contender that can run here."""
    import oxtensor
    import oxtensor.tensor as pt

    out = []
    ref = float(np.sum(x**2))

    def add(label, stmt, env, check=True):
        env = {**env, "x": x}
        if check:
            got = eval(stmt, env)  # noqa: S307 - our own statements
            if not np.allclose(np.asarray(got, dtype=float), ref):
                raise SystemExit(f"{label}: wrong result {got!r}, expected {ref!r}")
        out.append((label, stmt, env))

    try:
        import numba

        nb = numba.njit(lambda a: np.sum(a**2))
        add("Numba njit", "nb(x)", {"nb": nb})
    except ImportError:
        pass
    add("NumPy np.sum(x**2)", "np.sum(x**2)", {"np": np})
    try:
        import pytensor
        import pytensor.tensor as ptt

        v = ptt.dvector("x")
        for trust in (False, True):
            g = pytensor.function([v], ptt.sum(v**2), trust_input=trust)
            add(f"PyTensor{', trust_input' if trust else ''}", "g(x)", {"g": g})
    except ImportError:
        pass

    v = pt.dvector("x")
    f = oxtensor.function([v], pt.sum(v**2))
    ft = oxtensor.function([v], pt.sum(v**2), trust_input=True)
    fi = oxtensor.function([v], pt.sum(v**2), mode="FAST_COMPILE")
    add("oxtensor f(x)", "f(x)", {"f": f})
    add("oxtensor trust_input", "f(x)", {"f": ft})
    add("oxtensor by keyword f(x=x)", "f(x=x)", {"f": f})
    add("oxtensor interpreter (FAST_COMPILE)", "f(x)", {"f": fi})
    ident = oxtensor.function([v], v)
    add("oxtensor no node: output is input", "f(x)", {"f": ident}, check=False)
    const = oxtensor.function([v], pt.constant(ref), on_unused_input="ignore")
    add("oxtensor constant output", "f(x)", {"f": const})
    if hasattr(f, "_call_stages"):
        names = {0: "transition", 1: "+ arguments", 2: "+ executor", 3: "+ outputs",
                 4: "2 with GIL released"}
        for st, name in names.items():
            add(f"oxtensor stage {st}: {name}", f"f._call_stages({st}, x)", {"f": f}, check=False)
        for st, name in names.items():
            add(f"  trust_input stage {st}: {name}", f"f._call_stages({st}, x)", {"f": ft},
                check=False)
    return out


class Rounds:
    """Times every contender once per round, in a new random order each round."""

    def __init__(self, contenders, calls, seed=17):
        self.timers = [timeit.Timer(stmt, globals=env) for _, stmt, env in contenders]
        self.calls = calls
        self.rnd = random.Random(seed)
        for t in self.timers:  # warm up
            t.timeit(number=max(calls // 10, 1))

    def round(self):
        """Seconds per call of each contender in this round."""
        order = list(range(len(self.timers)))
        self.rnd.shuffle(order)
        times = [0.0] * len(order)
        for i in order:
            times[i] = self.timers[i].timeit(number=self.calls) / self.calls
        return times


def worker(calls):
    """``--worker``: the oxtensor rows of this build, timed one round per ``round`` line on stdin."""
    x = np.random.default_rng(1).standard_normal(10)
    contenders = [c for c in rows(x) if c[0].startswith(("oxtensor", "  "))]
    print(json.dumps([label for label, _, _ in contenders]), flush=True)
    r = Rounds(contenders, calls)
    for line in sys.stdin:
        if line.strip() != "round":
            break
        print(json.dumps(r.round()), flush=True)


def measure(contenders, rounds, calls, baseline=None):
    """Best seconds per call of each contender over interleaved rounds; with a ``baseline``
    interpreter, also its oxtensor rows (labelled ``before:``), timed in turn with ours."""
    r = Rounds(contenders, calls)
    proc = None
    labels = [label for label, _, _ in contenders]
    if baseline:
        proc = subprocess.Popen([baseline, os.path.abspath(__file__), "--worker", "--calls", str(calls)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                cwd=tempfile.gettempdir())
        labels += ["before: " + label for label in json.loads(proc.stdout.readline())]
    best = [float("inf")] * len(labels)
    for k in range(rounds):
        ours = lambda: r.round()  # noqa: E731
        theirs = lambda: [] if proc is None else (proc.stdin.write("round\n"), proc.stdin.flush(),
                                                  json.loads(proc.stdout.readline()))[-1]
        a, b = (ours(), theirs()) if k % 2 == 0 else tuple(reversed((theirs(), ours())))
        best = [min(old, new) for old, new in zip(best, a + b)]
    if proc is not None:
        proc.stdin.close()
        proc.wait()
    return labels, best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15, help="interleaved rounds; the best is kept")
    ap.add_argument("--calls", type=int, default=50_000, help="calls per row and round")
    ap.add_argument("--baseline", help="another build's Python interpreter, timed in the same run")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a.calls)
    x = np.random.default_rng(1).standard_normal(10)
    contenders = rows(x)
    labels, best = measure(contenders, a.rounds, a.calls, a.baseline)
    numba_t = next((t for label, t in zip(labels, best) if label == "Numba njit"), None)
    import oxtensor

    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"oxtensor {oxtensor.__version__}, NumPy {np.__version__}; {affinity} CPU(s) usable, "
          f"load average {os.getloadavg()[0]:.1f}; best of {a.rounds} interleaved rounds of "
          f"{a.calls} calls")
    if a.baseline:
        print(f"rows 'before:' ran in {a.baseline}, interleaved round by round with this process")
    width = max(len(label) for label in labels) + 2
    print(f"{'':<{width}}{'µs/call':>9}{'× Numba':>9}")
    for label, t in zip(labels, best):
        ratio = f"{t / numba_t:>8.2f}×" if numba_t else ""
        print(f"{label:<{width}}{t * 1e6:>9.3f}{ratio}")
    if numba_t:
        for label, goal in (("oxtensor f(x)", 3), ("oxtensor trust_input", 2)):
            t = next(t for lab, t in zip(labels, best) if lab == label)
            verdict = "met" if t <= goal * numba_t else "MISSED"
            print(f"target {label} ≤ {goal}× Numba: {t / numba_t:.2f}× {verdict}")


if __name__ == "__main__":
    main()
