"""TensorVariable: operators, weak Python scalars, identity, naming, types, eval, sites."""

import operator

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt
from conftest import assert_matches, fn, random_array


@pytest.mark.parametrize(
    "op",
    [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.floordiv, operator.mod],
)
def test_operators_and_reflected_forms(op, rng):
    a = np.abs(random_array(rng, (4,), "float64")) + 0.5
    x = pt.dvector("x")
    f = fn([x], [op(x, 2.0), op(3, x), op(x, x), op(np.float64(1.5), x), op(x, np.arange(1.0, 5.0))])
    got = f(a)
    exp = [op(a, 2.0), op(3, a), op(a, a), op(np.float64(1.5), a), op(a, np.arange(1.0, 5.0))]
    for g, e in zip(got, exp):
        assert_matches(g, e)


def test_numpy_array_on_the_left_defers_to_the_variable():
    x = pt.dvector("x")
    a = np.array([1.0, 2.0])
    y = a + x
    assert isinstance(y, pt.TensorVariable)
    assert_matches(fn([x], [a * x, a - x, a @ x])(np.array([3.0, 4.0]))[1], a - np.array([3.0, 4.0]))


def test_unary_operators():
    x = pt.ivector("x")
    a = np.array([-2, 0, 3], dtype="int32")
    n, ab, inv, pos = fn([x], [-x, abs(x), ~x, +x])(a)
    assert_matches(n, -a)
    assert_matches(ab, np.abs(a))
    assert_matches(inv, ~a)
    assert_matches(pos, a)


def test_weak_python_scalars_keep_tensor_dtype():
    f32 = pt.fvector("f")
    i8 = pt.bvector("b")
    u8 = pt.tensor("u", dtype="uint8", shape=(None,))
    assert (f32 * 1.5).dtype == "float32"
    assert (f32 + 1).dtype == "float32"
    assert (1.5 * f32).dtype == "float32"
    assert (i8 + 1).dtype == "int8"
    assert (i8 * 2.5).dtype == "float64"
    # Integers that do not fit promote (as in PyTensor) instead of wrapping.
    assert (i8 + 300).dtype == "int16"
    assert (u8 - (-1)).dtype == "int16"
    out = fn([i8], i8 + 300)(np.array([1, -5], dtype="int8"))
    assert_matches(out, np.array([301, 295], dtype="int16"))
    # NumPy scalars and arrays are strongly typed.
    assert (f32 * np.float64(2)).dtype == "float64"
    assert (f32 + np.ones(2)).dtype == "float64"
    assert (pt.bvector() < 3).dtype == "bool"


def test_comparisons_build_graphs_and_equality_is_identity():
    x = pt.dvector("x")
    y = pt.dvector("y")
    lt = x < y
    assert isinstance(lt, pt.TensorVariable) and lt.dtype == "bool"
    outs = fn([x, y], [x < y, x <= y, x > y, x >= y, 2 < x])(np.array([1.0, 2.0]), np.array([2.0, 2.0]))
    a, b = np.array([1.0, 2.0]), np.array([2.0, 2.0])
    for o, e in zip(outs, [a < b, a <= b, a > b, a >= b, 2 < a]):
        assert_matches(o, e)
    assert (x == y) is False
    assert (x == x) is True
    assert (x != y) is True
    assert len({x, y, x}) == 2
    assert hash(x) == hash(x)
    # Hash-consing: the same expression built twice is the same variable.
    assert pt.exp(x) == pt.exp(x)
    d = {x: 1}
    assert d[x] == 1


def test_bool_len_iter_follow_pytensor():
    x = pt.dvector("x")
    assert bool(x) is True
    with pytest.raises(TypeError, match="boolean"):
        bool(x < 1)
    with pytest.raises(TypeError, match="boolean"):
        (x < 1) < 2 < 3  # noqa: B015  (chained comparison)
    with pytest.raises(TypeError, match="len"):
        len(x)
    with pytest.raises(TypeError, match="iteration"):
        iter(x)
    with pytest.raises(TypeError, match="iteration"):
        sum(x)  # builtins.sum
    v = pt.tensor("v", dtype="float64", shape=(3,))
    items = list(v)
    assert len(items) == 3
    assert_matches(fn([v], items)(np.array([1.0, 2.0, 3.0]))[2], np.array(3.0))


def test_names_repr_and_types():
    x = pt.dmatrix("x")
    assert x.name == "x"
    assert repr(x) == "x" and str(x) == "x"
    s = pt.sum(x)
    assert s.name is None
    assert repr(s).startswith("Sum{")
    assert repr(s).endswith(".0")
    s.name = "total"
    assert repr(s) == "total"
    assert x.dtype == "float64" and x.ndim == 2
    assert x.type == pt.TensorType("float64", shape=(None, None))
    assert str(x.type) == "Matrix(float64, shape=(?, ?))"
    assert repr(x.type) == "TensorType(float64, shape=(None, None))"
    assert x.broadcastable == (False, False)
    y = x.type("y")
    assert y.name == "y" and y.type == x.type
    u = pt.tensor(dtype="int32", shape=(None, 1, 3))
    assert u.type.shape == (None, 1, 3) and u.broadcastable == (False, True, False)
    assert str(pt.dvector().type) == "Vector(float64, shape=(?,))"
    c = pt.constant(np.arange(3))
    assert isinstance(c, pt.TensorConstant)
    assert_matches(c.data, np.arange(3))
    assert pt.as_tensor_variable(x) is x


def test_constructor_dtypes():
    expected = {"b": "int8", "w": "int16", "i": "int32", "l": "int64", "f": "float32", "d": "float64"}
    for p, dt in expected.items():
        for kind, ndim in [("scalar", 0), ("vector", 1), ("matrix", 2), ("tensor3", 3), ("tensor4", 4)]:
            v = getattr(pt, p + kind)("v")
            assert v.dtype == dt and v.ndim == ndim and v.name == "v"
    assert pt.scalar().dtype == oxtensor.config.floatX
    assert [v.name for v in pt.dscalars("a", "b")] == ["a", "b"]
    assert len(pt.fmatrices(3)) == 3
    assert pt.tensor("float32", shape=(None,)).dtype == "float32"  # PyTensor's old argument order


def test_literal_dtypes_follow_pytensor():
    assert pt.constant(3).dtype == "int8"
    assert pt.constant(300).dtype == "int16"
    assert pt.constant(2**40).dtype == "int64"
    assert pt.constant(1.5).dtype == "float32"
    assert pt.constant(0.1).dtype == "float64"
    assert pt.constant(True).dtype == "bool"
    assert pt.constant([1.0, 2.0]).dtype == "float64"
    assert pt.as_tensor_variable(np.int32(4)).dtype == "int32"
    assert pt.constant(2.0, dtype="float32").dtype == "float32"
    assert pt.as_tensor_variable([1, 2], ndim=2).ndim == 2


def test_eval():
    x = pt.dvector("x")
    y = pt.dscalar("y")
    assert_matches((x * 2).eval({x: [1.0, 2.0]}), np.array([2.0, 4.0]))
    assert_matches((x + y).eval({x: np.array([1.0]), y: 2.0}), np.array([3.0]))
    assert_matches((x + y).eval({"x": np.array([1.0]), "y": 2.0}), np.array([3.0]))
    assert_matches(pt.arange(3).eval(), np.arange(3))


def test_creation_site_is_the_users_line():
    import inspect

    line = inspect.currentframe().f_lineno + 1
    x = pt.dvector("x")
    y = pt.exp(x)
    assert x._site.endswith(f"test_variable.py:{line}")
    assert y._site.endswith(f"test_variable.py:{line + 1}")
    z = x.sum()  # a method implemented in Rust
    assert z._site.endswith(f"test_variable.py:{line + 4}")


def test_methods_match_numpy(rng):
    a = random_array(rng, (3, 4), "float64")
    x = pt.dmatrix("x")
    outs = fn(
        [x],
        [x.sum(axis=1), x.mean(), x.max(axis=0), x.min(), x.prod(axis=-1), x.std(), x.var(axis=0), x.argmax(axis=1),
         x.argmin(), x.flatten(), x.T, x.astype("float32"), x.squeeze(), x.dot(x.T), x.any(), x.all(axis=1)],
    )(a)
    exp = [a.sum(axis=1), a.mean(), a.max(axis=0), a.min(), a.prod(axis=-1), a.std(), a.var(axis=0),
           a.argmax(axis=1), a.argmin(), a.flatten(), a.T, a.astype("float32"), a.squeeze(), a @ a.T,
           a.any(), a.all(axis=1)]
    for o, e in zip(outs, exp):
        assert_matches(o, np.asarray(e), rtol=1e-6)
