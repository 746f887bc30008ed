"""What a user can throw at the package without crashing it: bad inputs, many threads on one
function, concurrent updates of one shared variable, a corrupted or contended cache, no C
compiler, and many calls and functions in one process. Faults that need a fresh process (an
empty cache, another PATH) run in one."""

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt
from oxtensor import function, shared

# A program run in fresh processes: compiles one graph natively, checks its values against
# NumPy, and prints whether the graph ran as generated code.
PROGRAM = textwrap.dedent(
    """
    import numpy as np
    import oxtensor, oxtensor.tensor as pt
    x = pt.dvector("x")
    f = oxtensor.function([x], pt.exp(-x * x) * pt.sin(x) + pt.log1p(abs(x)))
    a = np.linspace(-3.0, 3.0, 1001)
    want = np.exp(-a * a) * np.sin(a) + np.log1p(abs(a))
    np.testing.assert_allclose(f(a), want, rtol=1e-13, atol=1e-15)
    print("ok")
    """
)


def run_program(cache_dir, env_extra=None, code=PROGRAM):
    """Runs ``code`` in a fresh interpreter with its own compile cache; returns the process."""
    env = dict(os.environ, OXTENSOR_CACHE_DIR=str(cache_dir))
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)


def cache_entries(cache_dir):
    """The libraries in a cache directory (one per compiled graph)."""
    return sorted(p for p in os.listdir(cache_dir) if p.endswith(".so"))


@pytest.mark.parametrize(
    "arg, error, message",
    [
        (np.ones(3, dtype="complex128"), TypeError, "expected dtype float64"),
        (np.ones((2, 2)), TypeError, "expected 1 dimensions, got 2"),
        (np.ones(4), ValueError, r"expected shape \(3\)"),
        ("not an array", (TypeError, ValueError), "x"),
        (np.array([1.0, 2.0, 3.0], dtype=object), (TypeError, ValueError), "x"),
    ],
)
def test_bad_arguments_raise_naming_the_input(arg, error, message):
    x = pt.tensor("x", dtype="float64", shape=(3,))
    f = function([x], pt.exp(x))
    with pytest.raises(error, match=message) as info:
        f(arg)
    assert "x" in str(info.value)
    np.testing.assert_allclose(f(np.zeros(3)), np.ones(3))


def test_wrong_argument_counts_and_names_raise():
    x, y = pt.dvector("x"), pt.dvector("y")
    f = function([x, y], x + y)
    with pytest.raises(TypeError, match="takes 2 arguments, got 1"):
        f(np.ones(2))
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        f(np.ones(2), z=np.ones(2))
    with pytest.raises(ValueError, match="shape"):
        f(np.ones(2), np.ones(3))


def test_eight_threads_call_one_function():
    x = pt.dvector("x")
    f = function([x], pt.sum(pt.exp(x) * x))
    inputs = [np.linspace(0.0, 1.0 + k, 50_000) for k in range(8)]
    wants = [np.sum(np.exp(a) * a) for a in inputs]
    failures = []

    def work(k):
        for _ in range(30):
            got = float(f(inputs[k]))
            if not np.isclose(got, wants[k], rtol=1e-12):
                failures.append((k, got, wants[k]))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_a_shared_counter_updated_from_four_threads_counts_every_call():
    count = shared(np.int64(0), name="count")
    total = shared(np.zeros(3), name="total")
    step = pt.dvector("step")
    f = function([step], count, updates=[(count, count + 1), (total, total + step)])

    def work():
        for _ in range(500):
            f(np.ones(3))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Each call reads and updates both under one lock: no increment is lost.
    assert int(count.get_value()) == 2000
    np.testing.assert_array_equal(total.get_value(), np.full(3, 2000.0))


def test_a_corrupted_cache_is_rebuilt(tmp_path):
    first = run_program(tmp_path)
    assert first.returncode == 0 and first.stdout.strip() == "ok", first.stderr
    entries = cache_entries(tmp_path)
    assert entries, "the first run stores its library"
    for root, _, files in os.walk(tmp_path):
        for name in files:
            if name.endswith((".so", ".o", ".meta")):
                with open(os.path.join(root, name), "r+b") as fh:
                    fh.truncate(max(os.path.getsize(fh.name) // 2, 1))
                    fh.seek(0)
                    fh.write(b"\x7fnot what it was")
    second = run_program(tmp_path)
    assert second.returncode == 0 and second.stdout.strip() == "ok", second.stderr


def test_four_processes_compile_one_graph_into_an_empty_cache(tmp_path):
    env = dict(os.environ, OXTENSOR_CACHE_DIR=str(tmp_path))
    procs = [
        subprocess.Popen([sys.executable, "-c", PROGRAM], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    results = [p.communicate(timeout=300) + (p.returncode,) for p in procs]
    for out, err, code in results:
        assert code == 0 and out.strip() == "ok", err
    # Built once: one library for the one graph.
    assert len(cache_entries(tmp_path)) == 1


def test_no_c_compiler_falls_back_to_the_interpreter(tmp_path):
    env = {"PATH": str(tmp_path / "empty-bin"), "CC": "", "OXTENSOR_CXX": ""}
    result = run_program(tmp_path / "cache", env)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
    assert "functions run in the interpreter" in result.stderr
    assert result.stderr.count("oxtensor warning") == 1


def test_many_calls_and_many_functions_in_one_process(tmp_path):
    code = textwrap.dedent(
        """
        import gc, resource
        import numpy as np
        import oxtensor, oxtensor.tensor as pt
        x = pt.dvector("x")
        f = oxtensor.function([x], pt.sum(x * x))
        a = np.arange(10.0)
        for _ in range(50_000):
            assert f(a) == 285.0
        for k in range(100):
            g = oxtensor.function([x], pt.exp(x) * k + k)
            np.testing.assert_allclose(g(a), np.exp(a) * k + k, rtol=1e-14)
        gc.collect()
        # This process's own peak (VmHWM): ru_maxrss keeps the peak of the process that
        # spawned it (Linux carries it across vfork+exec), i.e. of the whole pytest session.
        try:
            status = open("/proc/self/status").read().split("VmHWM:")[1]
            print(int(status.split()[0]))
        except (OSError, IndexError):
            print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        """
    )
    result = run_program(tmp_path, code=code)
    assert result.returncode == 0, result.stderr
    # 100 libraries loaded and 50,000 calls stay well within a few hundred megabytes.
    assert int(result.stdout.strip()) < 600_000, result.stdout
