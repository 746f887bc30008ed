"""``pt.einsum``'s ``optimize`` and contraction order, as PyTensor 3 defines them: only
``optimize=None`` is accepted (anything else raises ``NotImplementedError``, as in PyTensor),
and the order is chosen when the graph is built, NumPy's ``optimal`` path when every operand's
shape is static, right to left otherwise (re-planned when compiled once the shapes are static,
as PyTensor's rewrite does). The Rust builder's searches (``_core.einsum_path``) are checked
against ``numpy.einsum_path`` on random subscripts and against the path PyTensor's ``Einsum``
op records."""

import string
import warnings

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt
from oxtensor import _core
from test_linalg import run


@pytest.mark.parametrize("optimize", ["greedy", "optimal", True, False, ["einsum_path", (0, 1)]])
def test_optimize_other_than_none_raises_as_in_pytensor(optimize):
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    with pytest.raises(NotImplementedError, match=r"optimize=.* is not supported; as in PyTensor"):
        pt.einsum("ij,jk->ik", a, b, optimize=optimize)
    ptt = pytest.importorskip("pytensor.tensor")
    with pytest.raises(NotImplementedError):
        ptt.einsum("ij,jk->ik", ptt.dmatrix("a"), ptt.dmatrix("b"), optimize=optimize)


def test_optimize_none_is_the_default():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    got = run([a, b], [pt.einsum("ij,jk->ik", a, b, optimize=None)], [x, y])[0]
    np.testing.assert_allclose(got, x @ y, rtol=1e-12)


def random_terms(rng):
    """Random letters-only subscripts of 3-5 operands (ranks 0-3 over up to 7 letters, some
    repeated within an operand) with an extent per letter."""
    letters = string.ascii_lowercase[: rng.integers(2, 8)]
    sizes = {c: int(rng.integers(1, 9)) for c in letters}
    terms = ["".join(rng.choice(list(letters), size=rng.integers(0, 4))) for _ in range(rng.integers(3, 6))]
    used = sorted(set("".join(terms)))
    out = "".join(c for c in used if rng.random() < 0.3)
    return terms, out, {c: sizes[c] for c in used}


def pairwise(path, n):
    """NumPy's path with every step of more than two terms split pairwise from the right
    (what PyTensor, and the Rust builder, contract)."""
    out, length = [], n
    for step in path:
        p = sorted(step)
        if len(p) < 2:
            continue
        out.append((p[-1], p[-2]) if len(p) > 2 else tuple(step))
        length -= 1
        for q in reversed(p[:-2]):
            out.append((length - 1, q))
            length -= 1
    return out


@pytest.mark.parametrize("strategy", ["greedy", "optimal"])
def test_paths_are_numpys_einsum_path(strategy):
    rng = np.random.default_rng(2024)
    for case in range(120):
        terms, out, sizes = random_terms(rng)
        spec = ",".join(terms) + "->" + out
        arrays = [np.empty([sizes[c] for c in t]) for t in terms]
        theirs = np.einsum_path(spec, *arrays, optimize=strategy)[0][1:]
        ours = _core.einsum_path(strategy, terms, out, sizes)
        assert ours == pairwise(theirs, len(terms)), f"{case}: {spec} {sizes}"


def test_the_default_path_is_pytensors():
    """PyTensor records its path on the ``Einsum`` op: NumPy's optimal one for static shapes
    (split pairwise when NumPy contracts everything in one step), right to left otherwise."""
    ptt = pytest.importorskip("pytensor.tensor")
    rng = np.random.default_rng(5)
    checked = 0
    for case in range(20):
        terms, out, sizes = random_terms(rng)
        spec = ",".join(terms) + "->" + out
        arrays = [np.empty([sizes[c] for c in t]) for t in terms]
        numpy_path = np.einsum_path(spec, *arrays, optimize="optimal")[0][1:]
        if len(numpy_path) > 1 and any(len(s) > 2 for s in numpy_path):
            continue  # PyTensor cannot contract a partial path with a step of three terms
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            static = [ptt.tensor(f"x{k}", shape=a.shape) for k, a in enumerate(arrays)]
            theirs = ptt.einsum(spec, *static).owner.op.path
            unknown = [ptt.tensor(f"x{k}", shape=(None,) * a.ndim) for k, a in enumerate(arrays)]
            theirs_unknown = ptt.einsum(spec, *unknown).owner.op.path
        # PyTensor records each pair in descending order (NumPy's contraction list's).
        ours_path = [tuple(sorted(s)) for s in _core.einsum_path("optimal", terms, out, sizes)]
        assert [tuple(sorted(s)) for s in theirs] == ours_path, spec
        assert [tuple(s) for s in theirs_unknown] == _core.einsum_path("right_to_left", terms, out, sizes)
        # The builder's default follows the same choice: values agree along either order.
        ours = [pt.tensor(f"x{k}", dtype="float64", shape=a.shape) for k, a in enumerate(arrays)]
        vals = [rng.standard_normal(a.shape) for a in arrays]
        got = run(ours, [pt.einsum(spec, *ours)], vals)[0]
        np.testing.assert_allclose(got, np.einsum(spec, *vals), rtol=1e-10, atol=1e-10)
        checked += 1
    assert checked >= 12


def products(outputs, is_product):
    """The input shapes of each matrix product the graph of ``outputs`` computes, inputs
    before users (a post-order walk of ``owner``)."""
    seen, order = set(), []

    def visit(v):
        node = v.owner
        if node is None or hash(node.outputs[0]) in seen:
            return
        seen.add(hash(node.outputs[0]))
        for i in node.inputs:
            visit(i)
        if is_product(node.op):
            order.append([tuple(i.type.shape) for i in node.inputs])

    for o in outputs:
        visit(o)
    return order


def test_an_einsum_is_replanned_once_static_shapes_are_known():
    """PyTensor's ``optimize_einsum_inner_graph``: an einsum built on operands of unknown
    shape is one node that contracts right to left (``a (b c)``); rebuilt on static-shaped
    operands (``clone_replace``), compiling plans NumPy's optimal order, ``(a b) c``, and
    inlines it. PyTensor, on the same graph, computes the same first product."""
    spec, shapes = "ij,jk,kl->il", [(2, 6), (6, 6), (6, 6)]
    rng = np.random.default_rng(11)
    vals = [rng.standard_normal(s) for s in shapes]
    unknown = [pt.tensor(f"u{k}", dtype="float64", shape=(None, None)) for k in range(3)]
    e = pt.einsum(spec, *unknown)
    assert e.owner.op.startswith("Einsum{" + spec)
    fixed = [pt.tensor(f"s{k}", dtype="float64", shape=s) for k, s in enumerate(shapes)]
    replaced = oxtensor.clone_replace(e, dict(zip(unknown, fixed)))
    f = oxtensor.function(fixed, replaced)
    first = products(f._graph_outputs, lambda op: op == "MatMul")[0]
    assert first == [(2, 6), (6, 6)], oxtensor.dprint(f, file="str")
    assert "Einsum" not in oxtensor.dprint(f, file="str")
    np.testing.assert_allclose(f(*vals), np.einsum(spec, *vals), rtol=1e-12)
    np.testing.assert_allclose(run(unknown, [e], vals)[0], np.einsum(spec, *vals), rtol=1e-12)

    pytensor = pytest.importorskip("pytensor")
    ptt = pytest.importorskip("pytensor.tensor")
    from pytensor.compile.mode import Mode
    from pytensor.graph.replace import clone_replace

    theirs_unknown = [ptt.tensor(f"u{k}", dtype="float64", shape=(None, None)) for k in range(3)]
    theirs_fixed = [ptt.tensor(f"s{k}", dtype="float64", shape=s) for k, s in enumerate(shapes)]
    theirs = clone_replace(ptt.einsum(spec, *theirs_unknown), dict(zip(theirs_unknown, theirs_fixed)))
    g = pytensor.function(theirs_fixed, theirs, mode=Mode(linker="py", optimizer="fast_run"))
    nodes = g.maker.fgraph.toposort()
    assert not any(type(n.op).__name__ == "Einsum" for n in nodes)
    dots = [[i.type.shape for i in n.inputs] for n in nodes if type(n.op).__name__ == "Dot"]
    assert dots[0] == first
