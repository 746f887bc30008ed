"""Shape, layout, allocation, joins, products and indexing against NumPy."""

import numpy as np
import pytest

import oxtensor.tensor as pt
from conftest import assert_matches, fn, random_array


def test_reshape_flatten_transpose(rng):
    a = random_array(rng, (2, 3, 4), "float64")
    x = pt.tensor3("x")
    outs = fn(
        [x],
        [
            x.reshape((6, 4)),
            x.reshape(4, -1),
            pt.reshape(x, (-1,)),
            x.flatten(),
            pt.flatten(x, 2),
            x.T,
            x.transpose(1, 0, 2),
            pt.transpose(x, (2, 0, 1)),
            x.dimshuffle(2, "x", 0, 1),
            x.reshape(x.shape[::-1]),
            x.reshape((x.shape[0], -1)),
        ],
    )(a)
    expected = [
        a.reshape(6, 4),
        a.reshape(4, -1),
        a.reshape(-1),
        a.reshape(-1),
        a.reshape(2, -1),
        a.T,
        a.transpose(1, 0, 2),
        a.transpose(2, 0, 1),
        a.transpose(2, 0, 1)[:, None],
        a.reshape(a.shape[::-1]),
        a.reshape(2, -1),
    ]
    for o, e in zip(outs, expected):
        assert_matches(o, e)


def test_expand_dims_squeeze_pad(rng):
    a = random_array(rng, (3, 4), "float32")
    x = pt.fmatrix("x")
    e0, e1, e2, pl, pr, sq = fn(
        [x],
        [
            pt.expand_dims(x, 0),
            pt.expand_dims(x, -1),
            pt.expand_dims(x, (0, 2)),
            pt.shape_padleft(x),
            pt.shape_padright(x, 2),
            pt.squeeze(pt.expand_dims(x, 1)),
        ],
    )(a)
    assert_matches(e0, np.expand_dims(a, 0))
    assert_matches(e1, np.expand_dims(a, -1))
    assert_matches(e2, np.expand_dims(a, (0, 2)))
    assert_matches(pl, a[None])
    assert_matches(pr, a[:, :, None, None])
    assert_matches(sq, a)
    r = pt.row("r")
    assert fn([r], r.squeeze())(np.ones((1, 5))).shape == (5,)
    assert pt.dcol("c").broadcastable == (False, True)


def test_shape_and_specify_shape(rng):
    x = pt.dmatrix("x")
    a = random_array(rng, (2, 5), "float64")
    s, s0, n = fn([x], [x.shape, x.shape[0], pt.shape(x)[-1]])(a)
    assert_matches(s, np.array([2, 5]))
    assert int(s0) == 2 and int(n) == 5
    y = pt.specify_shape(x, (None, 5))
    assert y.type.shape == (None, 5)
    assert_matches(fn([x], y * 2)(a), a * 2)
    with pytest.raises(ValueError):
        fn([x], y)(np.zeros((2, 4)))


def test_allocation_functions(rng):
    x = pt.dmatrix("x")
    n = pt.lscalar("n")
    a = random_array(rng, (2, 3), "float64")
    outs = fn(
        [x, n],
        [
            pt.zeros((2, 3)),
            pt.ones((n, 2), dtype="int32"),
            pt.full((2, n), 7.5),
            pt.zeros_like(x),
            pt.ones_like(x, dtype="int8"),
            pt.full_like(x, 3),
            pt.alloc(1.5, n, 3),
            pt.alloc(x[0], 4, 3),
            pt.broadcast_to(x[:1], (3, 3)),
            pt.zeros(x.shape),
        ],
    )(a, 4)
    expected = [
        np.zeros((2, 3)),
        np.ones((4, 2), "int32"),
        np.full((2, 4), 7.5),
        np.zeros_like(a),
        np.ones_like(a, dtype="int8"),
        np.full_like(a, 3),
        np.full((4, 3), 1.5, dtype="float32"),  # a bare 1.5 is a float32 literal, as in PyTensor
        np.broadcast_to(a[0], (4, 3)),
        np.broadcast_to(a[:1], (3, 3)),
        np.zeros((2, 3)),
    ]
    for o, e in zip(outs, expected):
        assert_matches(o, e)
        assert o.flags.writeable and o.flags.c_contiguous


def test_arange_and_eye():
    n = pt.lscalar("n")
    outs = fn(
        [n],
        [
            pt.arange(5),
            pt.arange(2, 11, 3),
            pt.arange(n),
            pt.arange(0.0, 1.0, 0.25),
            pt.arange(10, 0, -3),
            pt.eye(3),
            pt.eye(n, 2, 1, dtype="int32"),
            pt.eye(3, k=-1),
        ],
    )(4)
    expected = [
        np.arange(5),
        np.arange(2, 11, 3),
        np.arange(4),
        np.arange(0.0, 1.0, 0.25),
        np.arange(10, 0, -3),
        np.eye(3),
        np.eye(4, 2, 1, dtype="int32"),
        np.eye(3, k=-1),
    ]
    for o, e in zip(outs, expected):
        assert_matches(o, e)


def test_joins_and_split(rng):
    a = random_array(rng, (2, 3), "float64")
    b = random_array(rng, (4, 3), "float64")
    x, y = pt.dmatrices("x", "y")
    c0, j, st, st1, cm = fn(
        [x, y],
        [
            pt.concatenate([x, y]),
            pt.join(1, x.T, y.T),
            pt.stack([x, x * 2]),
            pt.stack([x, x], axis=-1),
            pt.concatenate([x, np.ones((1, 3))], axis=0),
        ],
    )(a, b)
    assert_matches(c0, np.concatenate([a, b]))
    assert_matches(j, np.concatenate([a.T, b.T], axis=1))
    assert_matches(st, np.stack([a, a * 2]))
    assert_matches(st1, np.stack([a, a], axis=-1))
    assert_matches(cm, np.concatenate([a, np.ones((1, 3))]))
    v = pt.dvector("v")
    parts = pt.split(v, [2, 3, 1], 3)
    got = fn([v], parts)(np.arange(6.0))
    for g, e in zip(got, np.split(np.arange(6.0), [2, 5])):
        assert_matches(g, e)
    with pytest.raises(ValueError):
        fn([x, y], pt.concatenate([x, y], axis=1))(a, b)


def test_products(rng):
    a = random_array(rng, (3, 4), "float64")
    b = random_array(rng, (4, 2), "float64")
    v = random_array(rng, (4,), "float64")
    A, B = pt.dmatrices("A", "B")
    u = pt.dvector("u")
    outs = fn([A, B, u], [pt.dot(A, B), A @ B, pt.matmul(A, u), pt.dot(u, u), pt.outer(u, u), A.dot(u), u @ B])(a, b, v)
    expected = [a @ b, a @ b, a @ v, v @ v, np.outer(v, v), a @ v, v @ b]
    for o, e in zip(outs, expected):
        assert_matches(o, e, rtol=1e-10)
    batch = random_array(rng, (5, 3, 4), "float32")
    T = pt.ftensor3("T")
    M = pt.fmatrix("M")
    assert_matches(fn([T, M], T @ M)(batch, b.astype("float32")), batch @ b.astype("float32"), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError):
        fn([A, B], pt.dot(A, B))(a, a)


def test_basic_indexing(rng):
    a = random_array(rng, (5, 4, 3), "float64")
    x = pt.tensor3("x")
    i = pt.lscalar("i")
    cases = [
        (x[1], a[1]),
        (x[-1], a[-1]),
        (x[1:3], a[1:3]),
        (x[::-1], a[::-1]),
        (x[::2, 1:], a[::2, 1:]),
        (x[:, None], a[:, None]),
        (x[..., 0], a[..., 0]),
        (x[None, ..., 1:2], a[None, ..., 1:2]),
        (x[1, :, -1], a[1, :, -1]),
        (x[-4:-1:2, ::-2, 0], a[-4:-1:2, ::-2, 0]),
        (x[10:], a[10:]),
    ]
    outs = fn([x], [c[0] for c in cases])(a)
    for o, (_, e) in zip(outs, cases):
        assert_matches(o, e)
    sym = fn([x, i], [x[i], x[i:], x[:, i], x[i, i - 1]])(a, 2)
    for o, e in zip(sym, [a[2], a[2:], a[:, 2], a[2, 1]]):
        assert_matches(o, e)


def test_advanced_indexing(rng):
    a = random_array(rng, (5, 4), "float64")
    x = pt.dmatrix("x")
    idx = pt.lvector("idx")
    ii = np.array([3, 0, 0, -1])
    o1, o2, o3, o4 = fn([x, idx], [x[idx], x[:, idx[:2]], x[[1, 3]], x[np.array([2])]])(a, ii)
    assert_matches(o1, a[ii])
    assert_matches(o2, a[:, ii[:2]])
    assert_matches(o3, a[[1, 3]])
    assert_matches(o4, a[np.array([2])])
    with pytest.raises(IndexError):
        fn([x, idx], x[idx])(a, np.array([7]))
    with pytest.raises(IndexError):
        x[np.array([True, False, True, False, True])]
    with pytest.raises(IndexError):
        x[1, 2, 3]
    t = fn([x, idx], pt.take(x, idx, axis=1))(a, np.array([3, 1]))
    assert_matches(t, np.take(a, [3, 1], axis=1))
    tf = fn([x, idx], pt.take(x, idx))(a, np.array([3, 11]))
    assert_matches(tf, np.take(a, [3, 11]))


def test_set_and_inc_subtensor(rng):
    a = random_array(rng, (5, 3), "float64")
    x = pt.dmatrix("x")
    y = pt.dvector("y")
    idx = pt.lvector("idx")
    outs = fn(
        [x, y, idx],
        [
            pt.set_subtensor(x[1:3], 0),
            pt.inc_subtensor(x[:, 0], 10),
            x[0].set(y),
            x[::2].inc(y),
            pt.inc_subtensor(x[idx], y),
            pt.set_subtensor(x[idx, :], -1.0),
            pt.set_subtensor(x[1:2, None], 5.0),
        ],
    )(a, np.array([1.0, 2.0, 3.0]), np.array([0, 0, 4]))
    e = [a.copy() for _ in range(7)]
    e[0][1:3] = 0
    e[1][:, 0] += 10
    e[2][0] = [1.0, 2.0, 3.0]
    e[3][::2] += [1.0, 2.0, 3.0]
    np.add.at(e[4], [0, 0, 4], [1.0, 2.0, 3.0])
    e[5][[0, 0, 4]] = -1.0
    e[6][1:2, None] = 5.0
    for o, ex in zip(outs, e):
        assert_matches(o, ex)
    with pytest.raises(ValueError, match="result of indexing"):
        pt.set_subtensor(x, 1.0)
    with pytest.raises(TypeError, match="item assignment"):
        x[0] = 1.0


def test_integer_dtypes_roundtrip(rng):
    for dt in ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]:
        a = random_array(rng, (3, 2), dt)
        x = pt.tensor("x", dtype=dt, shape=(None, None))
        out = fn([x], [x, x.T, x[::-1]])(a)
        assert_matches(out[0], a)
        assert_matches(out[1], a.T)
        assert_matches(out[2], a[::-1])
