"""NumPy arrays in without a copy, outputs out as arrays owning the Rust buffers."""

import numpy as np
import pytest

import oxtensor.tensor as pt
from oxtensor import _core, function, shared
from conftest import assert_matches


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.arange(12.0),
        lambda: np.arange(12.0).reshape(3, 4).T,
        lambda: np.arange(24.0).reshape(4, 6)[::2, ::-3],
        lambda: np.broadcast_to(np.arange(3.0), (4, 3)),
        lambda: np.arange(10, dtype="int32")[1:],
        lambda: np.zeros((2, 3), dtype="float32", order="F"),
    ],
)
def test_plain_arrays_are_read_in_place(make):
    a = make()
    addr, borrowed = _core._wrapped_address(a)
    assert borrowed
    assert addr == a.ctypes.data


def test_layouts_that_need_a_copy():
    swapped = np.arange(4.0).astype(">f8")
    assert _core._wrapped_address(swapped) == (0, False)
    raw = np.zeros(9, dtype="u1")[1:].view("<f8")  # unaligned
    assert not raw.flags.aligned
    assert _core._wrapped_address(raw) == (0, False)
    b = np.array([0, 2, 1], dtype="u1").view(np.bool_)  # a bool byte that is not 0/1
    addr, borrowed = _core._wrapped_address(b)
    assert not borrowed  # bools are normalised into a copy
    v = pt.tensor("v", dtype="bool", shape=(None,))
    g = function([v], pt.cast(v, "int8"))
    assert_matches(g(b), np.array([0, 1, 1], dtype="int8"))
    # Other layouts still work through a conversion:
    y = pt.dvector("y")
    h = function([y], y * 1.0)
    assert_matches(h(swapped), np.arange(4.0))
    assert_matches(h(raw), np.zeros(1))
    assert_matches(h(np.arange(4.0, dtype=np.float16).astype(np.float16)), np.arange(4.0))


def test_outputs_own_rust_buffers():
    x = pt.dvector("x")
    f = function([x], [x * 2, (x * 3).reshape((2, -1))])
    a = np.arange(6.0)
    o1, o2 = f(a)
    for o in (o1, o2):
        assert o.flags.writeable
        assert not np.shares_memory(o, a)
        assert type(o.base).__name__ == "PyCapsule"  # the base owns the Rust tensor
        assert o.ctypes.data % 64 == 0  # oxtensor's aligned allocation: no copy was made
    o1[0] = 42.0  # writing is safe: nothing else sees this buffer
    again = f(a)[0]
    assert again[0] == 0.0


def test_outputs_never_alias_inputs_or_each_other():
    x = pt.dvector("x")
    f = function([x], [x, x, x.T, x[::-1]])
    a = np.arange(4.0)
    outs = f(a)
    for o in outs:
        assert not np.shares_memory(o, a)
        assert o.flags.writeable
    for i in range(len(outs)):
        for j in range(i + 1, len(outs)):
            assert not np.shares_memory(outs[i], outs[j])
    assert_matches(outs[3], a[::-1])


def test_outputs_do_not_alias_shared_values_or_constants():
    s = shared(np.arange(3.0))
    f = function([], [s, pt.constant(np.ones(2))])
    out, c = f()
    out[0] = 99.0
    c[0] = 99.0
    assert_matches(s.get_value(), np.arange(3.0))
    assert_matches(f()[1], np.ones(2))


def test_empty_arrays():
    x = pt.dmatrix("x")
    f = function([x], [x * 2, x.sum(axis=1), x.T])
    o, s, t = f(np.zeros((0, 3)))
    assert o.shape == (0, 3) and s.shape == (0,) and t.shape == (3, 0)
    assert_matches(_core._roundtrip(np.zeros((2, 0))), np.zeros((2, 0)))


def test_roundtrip_all_dtypes():
    dtypes = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float32", "float64", "complex64", "complex128"]
    for dt in dtypes:
        a = np.arange(6).reshape(2, 3).astype(dt)
        if a.dtype.kind == "c":
            a = a - 0.5j * a
        r = _core._roundtrip(a.T)
        assert_matches(r, a.T)
        assert not np.shares_memory(r, a)
    with pytest.raises(TypeError):
        _core._roundtrip(np.zeros(2, dtype=np.float16))
