"""``pt.einsum`` lowered to matrix products along a greedy path, and ``pt.tensordot``:
values against ``numpy.einsum``/``numpy.tensordot`` on random subscripts (fixed seed), the
path against NumPy's ``greedy`` ``einsum_path``, and gradients against central differences."""

import string

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt
from oxtensor.tensor._linalg_einsum import greedy_path
from test_linalg import MODES, fd_check, run, sym


def random_einsum(rng):
    """Random subscripts (2–4 operands of rank 0–3 over up to 6 indices, some repeated within
    an operand) with their operands."""
    letters = string.ascii_lowercase[: rng.integers(2, 7)]
    sizes = {c: int(rng.integers(1, 5)) for c in letters}
    terms = []
    for _ in range(rng.integers(1, 5)):
        rank = int(rng.integers(0, 4))
        terms.append("".join(rng.choice(list(letters), size=rank)))
    used = sorted(set("".join(terms)))
    out = "".join(c for c in used if rng.random() < 0.4)
    out = "".join(rng.permutation(list(out))) if out else ""
    spec = ",".join(terms) + ("->" + out if rng.random() < 0.8 else "")
    ops = [rng.standard_normal([sizes[c] for c in t]) for t in terms]
    return spec, ops


@pytest.mark.parametrize("mode", MODES)
def test_einsum_matches_numpy_on_random_subscripts(mode):
    rng = np.random.default_rng(14)
    for case in range(60):
        spec, ops = random_einsum(rng)
        xs = [sym(o, f"x{k}") for k, o in enumerate(ops)]
        got = run(xs, [pt.einsum(spec, *xs)], ops, mode)[0]
        want = np.einsum(spec, *ops)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10, err_msg=f"{case}: {spec}")


def test_einsum_with_static_shapes_matches_numpy():
    rng = np.random.default_rng(7)
    cases = [
        ("ij,jk,kl->il", [(2, 50), (50, 3), (3, 40)]),
        ("bij,bjk,bkl->bil", [(4, 3, 5), (4, 5, 6), (4, 6, 2)]),
        ("ijk,jl,kl->i", [(3, 4, 5), (4, 6), (5, 6)]),
        ("ii,ij->j", [(4, 4), (4, 3)]),
        ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ]
    for spec, shapes in cases:
        ops = [rng.standard_normal(s) for s in shapes]
        xs = [pt.tensor(f"x{k}", dtype="float64", shape=s) for k, s in enumerate(shapes)]
        got = run(xs, [pt.einsum(spec, *xs)], ops)[0]
        np.testing.assert_allclose(got, np.einsum(spec, *ops), rtol=1e-10, atol=1e-12)


def test_the_path_is_numpys_greedy_path():
    cases = [
        ("ij,jk,kl->il", [(2, 50), (50, 3), (3, 40)]),
        ("ij,jk,kl->il", [(40, 3), (3, 50), (50, 2)]),
        ("ab,bc,cd,de->ae", [(10, 2), (2, 30), (30, 3), (3, 20)]),
        ("ijk,jl,kl->i", [(3, 4, 5), (4, 6), (5, 6)]),
    ]
    for spec, shapes in cases:
        ins, out = spec.split("->")
        terms = ins.split(",")
        sizes = {c: s for t, sh in zip(terms, shapes) for c, s in zip(t, sh)}
        ours = greedy_path(terms, out, sizes)
        theirs = np.einsum_path(spec, *[np.empty(s) for s in shapes], optimize="greedy")[0][1:]
        assert [tuple(p) for p in ours] == [tuple(p) for p in theirs], spec


def test_einsum_builds_matrix_products_not_broadcast_sums():
    a, b, c = (pt.dmatrix(n) for n in "abc")
    f = oxtensor.function([a, b, c], pt.einsum("ij,jk,kl->il", a, b, c))
    text = oxtensor.printing.debugprint(f, file="str")
    assert text.count("MatMul") + text.count("Dot") >= 2, text


@pytest.mark.parametrize(
    "spec, shapes",
    [
        ("ij,jk->ik", [(3, 4), (4, 2)]),
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
        ("ijk,jl,kl->i", [(2, 3, 2), (3, 2), (2, 2)]),
        ("ii,ij->j", [(3, 3), (3, 2)]),
        ("ij,ij->", [(3, 2), (3, 2)]),
    ],
)
def test_einsum_gradients_match_finite_differences(spec, shapes):
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(s) for s in shapes]
    fd_check(lambda *xs: pt.einsum(spec, *xs), args, rng)


def test_tensordot_values_and_gradients():
    rng = np.random.default_rng(5)
    for axes, sa, sb in [
        (2, (2, 3, 4), (3, 4, 2)),
        (([0, 2], [2, 0]), (2, 3, 4), (4, 3, 2)),
        (0, (2, 3), (2,)),
    ]:
        a, b = rng.standard_normal(sa), rng.standard_normal(sb)
        A, B = sym(a, "a"), sym(b, "b")
        got = run([A, B], [pt.tensordot(A, B, axes=axes)], [a, b])[0]
        np.testing.assert_allclose(got, np.tensordot(a, b, axes=axes), rtol=1e-12, atol=1e-12)
        fd_check(lambda x, y: pt.tensordot(x, y, axes=axes), [a, b], rng)
