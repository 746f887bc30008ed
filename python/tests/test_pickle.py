"""Pickling, copies and the no-code files (``oxtensor.save``/``load``) of compiled functions
and variables: results equal the original function's, across processes (a fresh interpreter,
spawn-based multiprocessing), and bad files are refused with a clear error."""

import copy
import json
import multiprocessing as mp
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt
from oxtensor.compile.pickling import SerializationError


def model():
    """A function with a shared weight updated by each call, a named input, a default value,
    a scan and an ifelse: what a sampler's worker would receive."""
    x = pt.vector("x")
    a = pt.scalar("a")
    w = oxtensor.shared(np.array([0.5, -1.0, 2.0]), name="w")
    h, _ = oxtensor.scan(lambda xt, hp: a * hp + xt, sequences=[x], outputs_info=[pt.constant(np.array(0.0))])
    y = oxtensor.ifelse(pt.gt(a, 0), pt.exp(-x * w).sum() + h[-1], pt.sin(x).sum())
    f = oxtensor.function(
        [x, oxtensor.In(a, value=0.9)], [y, h], updates=[(w, w * 1.5 + x)], name="model"
    )
    return f, w


ARGS = (np.array([0.1, 0.7, -0.3]),)


def test_pickled_function_equals_the_original_and_keeps_its_shared_state():
    f, w = model()
    f(*ARGS)  # w has moved once
    g = pickle.loads(pickle.dumps(f))
    assert g.name == "model"
    want = f(*ARGS)
    got = g(*ARGS)
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)
    # g has its own copy of w, carrying the state at pickling time: both advanced alike.
    again_f, again_g = f(*ARGS), g(*ARGS)
    np.testing.assert_array_equal(again_f[0], again_g[0])
    assert g(a=-1.0, x=ARGS[0])[0] == f(ARGS[0], -1.0)[0]


def test_variables_and_shared_variables_pickle():
    x = pt.matrix("x")
    s = oxtensor.shared(np.arange(6.0).reshape(2, 3), name="s")
    y = (x * s).sum(axis=0)
    y2, s2 = pickle.loads(pickle.dumps((y, s)))
    assert s2.name == "s"
    np.testing.assert_array_equal(s2.get_value(), s.get_value())
    data = np.ones((2, 3))
    f = oxtensor.function([x], y)
    ins = _inputs_of(y2)
    assert len(ins) == 1 and ins[0].name == "x"
    g = oxtensor.function(ins, y2)
    np.testing.assert_array_equal(f(data), g(data))


@pytest.mark.parametrize("mode", [None, "JAX"])
def test_a_function_and_its_shared_variable_pickled_together_stay_linked(mode):
    # As in PyTensor: one pickle keeps one shared variable one object, in every mode.
    if mode == "JAX":
        pytest.importorskip("jax")
    x = pt.vector("x")
    w = oxtensor.shared(np.array([1.0, 2.0]), name="w")
    f = oxtensor.function([x], (x * w).sum(), updates=[(w, w * 2)], mode=mode)
    h = oxtensor.function([], w.sum(), mode=mode)
    g, w2, h2 = pickle.loads(pickle.dumps((f, w, h)))
    assert g(np.ones(2)) == 3.0
    np.testing.assert_array_equal(w2.get_value(), [2.0, 4.0])  # g's update reached w2
    assert h2() == 6.0  # and the other function reading it
    w2.set_value(np.array([10.0, 10.0]))
    assert g(np.ones(2)) == 20.0
    np.testing.assert_array_equal(w.get_value(), [1.0, 2.0])  # the originals are untouched
    assert f(np.ones(2)) == 3.0
    # Pickled apart, each object loads with its own copy.
    g3 = pickle.loads(pickle.dumps(f))
    w3 = pickle.loads(pickle.dumps(w))
    g3(np.ones(2))
    np.testing.assert_array_equal(w3.get_value(), w.get_value())


def test_an_expression_and_its_shared_variable_pickled_together_stay_linked():
    x = pt.vector("x")
    w = oxtensor.shared(np.array([1.0, 2.0]), name="w")
    y = (x * w).sum()
    y2, w2 = pickle.loads(pickle.dumps((y, w)))
    (x2,) = _inputs_of(y2)
    g = oxtensor.function([x2], y2, updates=[(w2, w2 + 1)])
    assert g(np.ones(2)) == 3.0
    np.testing.assert_array_equal(w2.get_value(), [2.0, 3.0])  # the loaded w is the one read
    assert g(np.ones(2)) == 5.0
    np.testing.assert_array_equal(w.get_value(), [1.0, 2.0])
    # Pickled alone, the expression still loads with its own copy of w.
    y3 = pickle.loads(pickle.dumps(y))
    (x3,) = _inputs_of(y3)
    assert oxtensor.function([x3], y3)(np.ones(2)) == 3.0


def test_clone_replace_rebuilds_the_graph_on_the_replacements():
    x, z = pt.dvector("x"), pt.dvector("z")
    y = pt.exp(x).sum() * 2
    y2 = oxtensor.clone_replace(y, {x: z * 3})
    f = oxtensor.function([z], y2)
    np.testing.assert_allclose(f(np.array([0.1, -0.2])), np.exp([0.3, -0.6]).sum() * 2, rtol=1e-14)
    assert oxtensor.function([x], y)(np.zeros(2)) == 4.0  # the original graph is unchanged
    a, b = oxtensor.clone_replace([y, x + 1], [(x, z)])
    assert oxtensor.function([z], b)(np.array([1.0, 2.0])).tolist() == [2.0, 3.0]
    with pytest.raises(TypeError, match=r"cannot replace .*x.* the types differ"):
        oxtensor.clone_replace(y, {x: pt.fmatrix("m")})


def test_a_generator_pickled_with_its_function_reseeds_it():
    rng = oxtensor.shared(np.random.default_rng(3))
    nxt, d = pt.random.normal(0, 1, size=(3,), rng=rng, return_next_rng=True)
    f = oxtensor.function([], d, updates={rng: nxt})
    g, rng2 = pickle.loads(pickle.dumps((f, rng)))
    first = g()
    assert not np.array_equal(g(), first)
    rng2.set_value(np.random.default_rng(3))
    np.testing.assert_array_equal(g(), first)
    np.testing.assert_array_equal(f(), first)  # the original generator had not moved


@pytest.mark.parametrize("mode", [None, "JAX"])
def test_a_random_stream_pickled_with_its_function_reseeds_it(mode):
    if mode == "JAX":
        pytest.importorskip("jax")
    from oxtensor.tensor.random.utils import RandomStream

    stream = RandomStream(seed=4)
    f = oxtensor.function([], stream.normal(size=(2,)), mode=mode)
    g, stream2 = pickle.loads(pickle.dumps((f, stream)))
    first = g()
    assert not np.array_equal(g(), first)
    stream2.seed(4)
    np.testing.assert_array_equal(g(), first)
    np.testing.assert_array_equal(f(), first)


def _inputs_of(var):
    seen, stack, found = set(), [var], []
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v._kind == "input":
            found.append(v)
        stack.extend(v._inputs)
    return found


def test_random_generators_survive_pickling():
    rng = oxtensor.shared(np.random.default_rng(123))
    d = pt.random.normal(0, 1, size=(3,), rng=rng)
    f = oxtensor.function([], d)
    g = pickle.loads(pickle.dumps(f))
    for _ in range(3):
        np.testing.assert_array_equal(f(), g())


SCRIPT = """
import pickle, sys
import numpy as np
f = pickle.load(open(sys.argv[1], "rb"))
out = f(np.array([0.1, 0.7, -0.3]))
np.save(sys.argv[2], np.concatenate([np.ravel(out[0]), np.ravel(out[1])]))
"""


def test_unpickled_in_a_fresh_process(tmp_path):
    f, _ = model()
    f(*ARGS)
    path = tmp_path / "f.pkl"
    path.write_bytes(pickle.dumps(f))
    want = f(*ARGS)
    out = tmp_path / "out.npy"
    subprocess.run([sys.executable, "-c", SCRIPT, str(path), str(out)], check=True, timeout=300)
    np.testing.assert_array_equal(np.load(out), np.concatenate([np.ravel(want[0]), np.ravel(want[1])]))


def _call_in_worker(f, x):
    return f(x)[0]


def test_spawn_multiprocessing():
    f, _ = model()
    xs = [np.array([0.1, 0.2, 0.3]) * k for k in range(4)]
    want = [copy.deepcopy(f)(x)[0] for x in xs]  # each worker gets its own pristine copy
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        got = pool.starmap(_call_in_worker, [(f, x) for x in xs])
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("mode", ["JAX", "PYTORCH"])
def test_spawn_multiprocessing_in_other_engines(mode):
    # The same pool with a function of another engine: each worker imports the engine and
    # rebuilds the function from its pickle.
    pytest.importorskip("jax" if mode == "JAX" else "torch")
    x = pt.vector("x")
    w = oxtensor.shared(np.array([0.5, -1.0, 2.0]), name="w")
    f = oxtensor.function([x], [pt.exp(-x * w).sum(), pt.cumsum(x)], updates=[(w, w * 1.5 + x)], mode=mode)
    xs = [np.array([0.1, 0.2, 0.3]) * k for k in range(4)]
    want = [copy.deepcopy(f)(x)[0] for x in xs]
    with mp.get_context("spawn").Pool(2) as pool:
        got = pool.starmap(_call_in_worker, [(f, x) for x in xs])
    for a, b in zip(want, got):
        np.testing.assert_allclose(a, b, rtol=1e-15)


def test_copy_share_memory_and_swap():
    x = pt.vector("x")
    w = oxtensor.shared(np.zeros(3), name="w")
    f = oxtensor.function([x], w.sum(), updates=[(w, w + x)])
    shared_copy = f.copy(share_memory=True)
    own_copy = f.copy()
    deep = copy.deepcopy(f)
    shared_copy(np.ones(3))
    np.testing.assert_array_equal(w.get_value(), np.ones(3))  # the shared copy updated w
    own_copy(np.ones(3))
    deep(np.ones(3))
    np.testing.assert_array_equal(w.get_value(), np.ones(3))  # the others did not
    assert own_copy(np.ones(3)) == 3.0 and deep(np.ones(3)) == 3.0
    v = oxtensor.shared(np.full(3, 10.0), name="v")
    swapped = f.copy(swap={w: v})
    assert swapped(np.ones(3)) == 30.0
    np.testing.assert_array_equal(v.get_value(), np.full(3, 11.0))
    np.testing.assert_array_equal(w.get_value(), np.ones(3))
    assert copy.copy(f)(np.zeros(3)) == 3.0


def test_save_and_load(tmp_path):
    f, _ = model()
    path = tmp_path / "model.oxt"
    oxtensor.save(f, path)
    text = path.read_text()
    doc = json.loads(text)
    assert doc["format"] == "oxtensor-graph" and doc["version"] == 1
    g = oxtensor.load(path)
    for a, b in zip(f(*ARGS), g(*ARGS)):
        np.testing.assert_array_equal(a, b)
    x = pt.vector("x")
    oxtensor.save([pt.exp(x), x], tmp_path / "vars.oxt")
    e, x2 = oxtensor.load(tmp_path / "vars.oxt")
    assert x2.name == "x"


def test_corrupt_and_future_files_are_refused(tmp_path):
    f, _ = model()
    path = tmp_path / "model.oxt"
    oxtensor.save(f, path)
    text = path.read_text()
    bad = tmp_path / "bad.oxt"
    bad.write_text(text[: len(text) // 2])
    with pytest.raises(SerializationError, match="invalid JSON"):
        oxtensor.load(bad)
    bad.write_bytes(b"\x80\x04\x95 not a graph")
    with pytest.raises(SerializationError, match="not an oxtensor graph"):
        oxtensor.load(bad)
    doc = json.loads(text)
    doc["version"] = 99
    bad.write_text(json.dumps(doc))
    with pytest.raises(SerializationError, match="version 99.*upgrade oxtensor"):
        oxtensor.load(bad)
    doc = json.loads(text)
    apply = next(n for n in doc["nodes"] if n["kind"] == "apply")
    apply["op"]["op"] = "os.system"
    bad.write_text(json.dumps(doc))
    with pytest.raises(SerializationError, match="unknown op"):
        oxtensor.load(bad)
    assert isinstance(SerializationError("x"), ValueError)


def test_unaligned_and_read_only_inputs():
    x = pt.vector("x")
    f = oxtensor.function([x], pt.exp(x) * 2)
    buf = bytes(1) + np.arange(5, dtype=np.float64).tobytes()
    unaligned = np.frombuffer(buf, dtype=np.float64, offset=1)
    assert not unaligned.flags.aligned and not unaligned.flags.writeable
    np.testing.assert_allclose(f(unaligned), np.exp(np.arange(5.0)) * 2, rtol=1e-13)
    ro = np.arange(4.0)
    ro.setflags(write=False)
    np.testing.assert_allclose(f(ro), np.exp(ro) * 2, rtol=1e-13)
    # Also through a pickled function and as a shared value.
    g = pickle.loads(pickle.dumps(f))
    np.testing.assert_allclose(g(unaligned), np.exp(np.arange(5.0)) * 2, rtol=1e-13)


def test_functions_returning_generators_pickle_and_copy():
    rng = oxtensor.shared(np.random.default_rng(5))
    nxt, d = pt.random.normal(0, 1, size=(2,), rng=rng, return_next_rng=True)
    f = oxtensor.function([], [nxt, d])
    g = pickle.loads(pickle.dumps(f))
    h = copy.deepcopy(f)
    a, b, c = f(), g(), h()
    assert isinstance(b[0], np.random.Generator)
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[1], c[1])
    np.testing.assert_array_equal(a[0].normal(size=3), b[0].normal(size=3))
