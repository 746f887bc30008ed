"""The per-call path of a compiled function: reused output arrays and the checks it keeps.

A function remembers the small arrays it returned and refills one on a later call once the caller
has let go of it (``crates/oxtensor-py/src/recycle.rs``). These tests pin down that an array the
caller can still reach — directly, through a view, a memoryview, a weak reference, or another
output of the same call — is never overwritten, that reuse really happens when it is safe, and
that the fast path still refuses bad arguments with messages naming the input.
"""

import gc
import threading
import warnings
import weakref

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt
from oxtensor import function


def sumsq():
    x = pt.dvector("x")
    return function([x], pt.sum(x**2)), x


def test_a_released_result_is_refilled_with_the_new_values():
    f, _ = sumsq()
    a = f(np.array([1.0, 2.0]))
    assert a == 5.0
    address = a.ctypes.data
    del a
    b = f(np.array([3.0]))
    # The released array came back, holding the new value; a fresh, writable 0-d float64 array.
    assert b.ctypes.data == address
    assert b == 9.0 and b.shape == () and b.dtype == np.float64 and b.flags.writeable
    b[()] = 1.0  # the caller owns it
    assert f(np.array([2.0])) == 4.0


def test_results_the_caller_holds_are_never_overwritten():
    f, _ = sumsq()
    held = [f(np.array([float(i)])) for i in range(6)]
    assert [float(h) for h in held] == [float(i * i) for i in range(6)]
    for _ in range(5):
        f(np.array([7.0]))
    assert [float(h) for h in held] == [float(i * i) for i in range(6)]
    assert len({h.ctypes.data for h in held}) == len(held)


def test_the_loop_idiom_alternates_between_two_arrays():
    f, _ = sumsq()
    y = f(np.array([1.0]))
    addresses = set()
    for i in range(2, 8):
        prev = y
        y = f(np.array([float(i)]))
        assert y == i * i and prev == (i - 1) ** 2
        addresses.add(y.ctypes.data)
        del prev
    assert len(addresses) == 2


@pytest.mark.parametrize("keep", ["view", "memoryview", "weakref", "copy"])
def test_an_array_reachable_otherwise_is_not_reused(keep):
    x = pt.dvector("x")
    f = function([x], x * 2)
    a = f(np.array([1.0, 2.0, 3.0]))
    if keep == "view":
        other = a[1:]
    elif keep == "memoryview":
        other = memoryview(a)
    elif keep == "weakref":
        other = weakref.ref(a)
    else:
        other = a.copy()
    address = a.ctypes.data
    del a
    gc.collect()
    for v in (10.0, 20.0, 30.0):
        r = f(np.array([v, v, v]))
        assert np.array_equal(r, [2 * v] * 3)
        if keep in ("view", "memoryview", "weakref"):
            assert r.ctypes.data != address
        del r
    if keep == "view":
        assert np.array_equal(other, [4.0, 6.0])
    elif keep == "memoryview":
        assert list(other.cast("B").cast("d")) == [2.0, 4.0, 6.0]
    elif keep == "weakref":
        assert np.array_equal(other(), [2.0, 4.0, 6.0])
    else:
        assert np.array_equal(other, [2.0, 4.0, 6.0])


def test_a_changed_array_is_not_refilled():
    x = pt.dvector("x")
    f = function([x], x + 1)
    a = f(np.zeros(4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy may deprecate setting these attributes
        a.shape = (2, 2)
    del a
    b = f(np.zeros(4))
    assert b.shape == (4,) and np.array_equal(b, np.ones(4))
    b.flags.writeable = False
    del b
    c = f(np.zeros(4))
    assert c.flags.writeable and np.array_equal(c, np.ones(4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c.dtype = np.int64
    del c
    d = f(np.zeros(4))
    assert d.dtype == np.float64 and np.array_equal(d, np.ones(4))


def test_outputs_of_one_call_never_share_an_array():
    x = pt.dvector("x")
    s = pt.sum(x)
    f = function([x], [s, s, x, x * 1.0])
    for v in (1.0, 2.0, 3.0):
        outs = f(np.array([v, v]))
        assert len({id(o) for o in outs}) == 4
        assert len({o.ctypes.data for o in outs}) == 4
        assert [float(np.sum(o)) for o in outs] == [2 * v, 2 * v, 2 * v, 2 * v]
        del outs


def test_outputs_of_another_shape_or_a_view_of_an_input_are_fresh_and_correct():
    x = pt.dvector("x")
    f = function([x], x[::-1])
    for n in (3, 3, 5, 1, 5):
        xv = np.arange(float(n))
        r = f(xv)
        assert np.array_equal(r, xv[::-1])
        # Never the caller's memory, never a view the caller can write through into the input.
        r[...] = -1
        assert np.array_equal(xv, np.arange(float(n)))
        del r


def test_large_outputs_are_remembered_until_free():
    """A released large output stays with the function (to be lent to the next call) until
    ``free()``, which lets it go."""
    x = pt.dvector("x")
    f = function([x], x * 2)
    a = f(np.ones(10_000))
    w = weakref.ref(a)
    del a
    gc.collect()
    assert w() is not None
    f.free()
    gc.collect()
    # Nothing else held it: it is gone.
    assert w() is None
    np.testing.assert_array_equal(f(np.ones(3)), np.full(3, 2.0))


@pytest.mark.parametrize("trust", [False, True])
def test_bad_arguments_are_still_refused_naming_the_input(trust):
    x = pt.dvector("x")
    f = function([x], pt.sum(x**2), trust_input=trust)
    assert f(np.ones(3)) == 3.0
    with pytest.raises(TypeError, match="'x'"):
        f(np.ones((2, 2)))
    with pytest.raises(TypeError, match="takes 1 arguments, got 2"):
        f(np.ones(3), np.ones(3))
    with pytest.raises(TypeError, match="missing"):
        f()
    if trust:
        with pytest.raises(TypeError, match=r"bad input value for 'x' .*got int32"):
            f(np.ones(3, dtype="int32"))
    else:
        assert f(np.ones(3, dtype="int32")) == 3.0
        with pytest.raises(TypeError, match="'x'"):
            f(np.ones(3, dtype="complex128"))
    # After the errors, the fast path still gives right answers.
    assert f(np.arange(3.0)) == 5.0


def test_a_fixed_shape_input_names_itself_on_the_fast_path():
    v = pt.tensor("v", dtype="float64", shape=(3,))
    f = function([v], pt.sum(v))
    assert f(np.ones(3)) == 3.0
    with pytest.raises(ValueError, match=r"'v'.*expected shape \(3\), got \[4\]"):
        f(np.zeros(4))


def test_call_stages_hook_runs_each_stage():
    f, _ = sumsq()
    x = np.ones(4)
    for stage in range(5):
        assert f._call_stages(stage, x) is None
    with pytest.raises(TypeError, match="'x'"):
        f._call_stages(2, np.ones((2, 2)))
    assert f(x) == 4.0


def test_many_calls_in_a_loop_match_numpy(rng):
    x = pt.dvector("x")
    f = function([x], [pt.sum(x**2), x * 3.0])
    ref = []
    got = []
    for _ in range(200):
        xv = rng.standard_normal(rng.integers(1, 6))
        s, y = f(xv)
        ref.append((np.sum(xv**2), xv * 3.0))
        got.append((s, y))
    for (s, y), (rs, ry) in zip(got, ref):
        np.testing.assert_allclose(s, rs, rtol=1e-12)
        np.testing.assert_allclose(y, ry, rtol=1e-12)


def test_functions_on_several_threads_get_their_own_arrays():
    f, _ = sumsq()
    errors = []

    def work(k):
        for i in range(300):
            v = float(k * 1000 + i)
            r = f(np.array([v]))
            if r != v * v:
                errors.append((k, i, float(r)))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_interpreter_mode_uses_the_same_path():
    x = pt.dvector("x")
    f = function([x], pt.sum(x**2), mode="FAST_COMPILE")
    a = f(np.array([2.0]))
    address = a.ctypes.data
    del a
    b = f(np.array([3.0]))
    assert b == 9.0 and b.ctypes.data == address
    assert oxtensor.function([x], pt.sum(x))(np.ones(2)) == 2.0


def test_an_array_passed_back_as_an_argument_is_not_written_into():
    x = pt.dvector("x")
    f = function([x], x * 2)
    a = f(np.ones(3))
    for _ in range(4):
        b = f(a)
        assert np.array_equal(a, [2.0, 2.0, 2.0]) and np.array_equal(b, [4.0, 4.0, 4.0])
        del b
    # Released, then passed back in: the argument keeps it alive, so it is not refilled.
    c = f(f(np.ones(3)))
    assert np.array_equal(c, [4.0, 4.0, 4.0])


def test_a_failing_call_leaves_held_results_alone_and_later_calls_right():
    x, y = pt.dvectors("x", "y")
    f = function([x, y], [x * 2, x + y])
    held = f(np.ones(2), np.ones(2))
    for _ in range(3):
        with pytest.raises(ValueError):
            f(np.full(2, 5.0), np.ones(3))
    assert np.array_equal(held[0], [2.0, 2.0]) and np.array_equal(held[1], [2.0, 2.0])
    del held
    for v in (1.0, 2.0, 3.0):
        a, b = f(np.full(2, v), np.ones(2))
        assert np.array_equal(a, [2 * v] * 2) and np.array_equal(b, [v + 1] * 2)
        del a, b


def test_profiled_functions_reuse_arrays_too():
    x = pt.dvector("x")
    f = function([x], pt.sum(x**2), profile=True)
    a = f(np.ones(2))
    address = a.ctypes.data
    del a
    b = f(np.full(2, 2.0))
    assert b == 8.0 and b.ctypes.data == address
    assert f.profile is not None


def test_an_output_that_is_also_an_update_never_aliases_the_shared_variable():
    x = pt.dvector("x")
    s = oxtensor.shared(np.zeros(3), name="s")
    y = x * 2
    f = function([x], y, updates=[(s, y)])
    for v in (1.0, 2.0, 3.0, 4.0):
        r = f(np.full(3, v))
        assert np.array_equal(r, [2 * v] * 3)
        assert np.array_equal(s.get_value(), [2 * v] * 3)
        r[...] = -1.0  # writing the result must not change the shared variable
        assert np.array_equal(s.get_value(), [2 * v] * 3)
        del r
    s.set_value(np.zeros(3))
    r = f(np.ones(3))
    assert np.array_equal(s.get_value(), [2.0] * 3)


def test_outputs_the_executor_never_writes_are_still_refilled():
    # The output is the input: no kernel computes it, so loans stop and a copy refills the array.
    x = pt.dvector("x")
    f = function([x], x)
    a = f(np.ones(3))
    address = a.ctypes.data
    del a
    for v in range(10):
        xv = np.full(3, float(v))
        r = f(xv)
        assert np.array_equal(r, xv) and r.ctypes.data == address
        assert not np.shares_memory(r, xv)
        del r


@pytest.mark.parametrize("mode", ["FAST_RUN", "interp"])
def test_a_released_large_output_is_computed_in_place_and_free_forgets_it(mode):
    """Large outputs are never refilled by copying, but their released arrays are lent to the
    kernel, which writes the next result straight into them (no fresh pages to fault in)."""
    x = pt.dvector("x")
    f = function([x], pt.exp(-(x**2)) * 2.0, mode=mode)
    n = 1 << 20  # 8 MiB of float64, far above the copy-reuse limit
    v = np.linspace(-3, 3, n)
    a = f(v)
    address = a.ctypes.data
    np.testing.assert_allclose(a, np.exp(-(v**2)) * 2.0, rtol=1e-15)
    del a
    w = v[::-1].copy()
    b = f(w)
    lent = b.ctypes.data == address
    np.testing.assert_allclose(b, np.exp(-(w**2)) * 2.0, rtol=1e-15)
    if mode == "FAST_RUN":
        assert lent, "the released 8 MiB array was not reused"
    held = b
    c = f(v)
    # An array the caller still holds is never written.
    np.testing.assert_allclose(held, np.exp(-(w**2)) * 2.0, rtol=1e-15)
    assert c.ctypes.data != held.ctypes.data
    del b, held, c
    f.free()
    np.testing.assert_allclose(f(v), np.exp(-(v**2)) * 2.0, rtol=1e-15)


NUMBERS = [0.5, -3.25, 7, -(2**53), 2**53, 2**53 + 1, 2**63 - 1, 2**64, True, np.float64(1.5),
           np.float32(0.1), np.int64(3), 1e308, float("nan")]


@pytest.mark.parametrize("dtype", ["float64", "int64", "float32", "int32", "bool"])
@pytest.mark.parametrize("value", NUMBERS, ids=repr)
def test_python_numbers_convert_as_their_arrays_do(dtype, value):
    # Python floats and ints for float64/int64 inputs skip the conversion through Python
    # (`python_number_to_tensor`); every number must still give what the general conversion
    # (`_convert.coerce`, then the array path) gives: the same values and dtype, or the same
    # error.
    from oxtensor import _convert

    a = pt.scalar("a", dtype=dtype)
    f = function([a], [a, a + 1])

    def outcome(call):
        try:
            return [(r.dtype, r.tolist()) for r in call()]
        except Exception as e:  # noqa: BLE001 - the error itself is what is compared
            return (type(e), str(e))

    def general():
        return f(_convert.coerce(value, dtype, None))

    got, expected = outcome(lambda: f(value)), outcome(general)
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and got[0] is expected[0]
        assert expected[1] in got[1]
    else:
        assert got == expected or (
            # NaN compares unequal to itself: compare the dtypes and the NaN-ness instead.
            [d for d, _ in got] == [d for d, _ in expected]
            and all(np.isnan(v) for _, v in got) and all(np.isnan(v) for _, v in expected)
        )


# The argument cache (crates/oxtensor-py/src/arg_cache.rs): the tensor wrapping an array is used
# again when the same array comes back unchanged. Every way of changing the array must be seen.


def test_the_same_array_changed_in_place_gives_new_values():
    f, _ = sumsq()
    a = np.array([1.0, 2.0, 3.0])
    assert f(a) == 14.0
    a[:] = [2.0, 0.0, 1.0]
    assert f(a) == 5.0
    a += 1.0
    assert f(a) == 9.0 + 1.0 + 4.0


def test_the_same_array_reshaped_or_reinterpreted_in_place_is_wrapped_anew():
    x = pt.dmatrix("x")
    f = function([x], pt.sum(x, axis=1))
    a = np.arange(6.0).reshape(2, 3)
    assert np.array_equal(f(a), [3.0, 12.0])
    a.shape = (3, 2)  # the same object, new extents and strides
    assert np.array_equal(f(a), [1.0, 5.0, 9.0])
    a.shape = (6,)
    with pytest.raises(TypeError, match="'x'"):
        f(a)
    g, _ = sumsq()
    b = np.array([1.5, -2.0])
    assert g(b) == 1.5**2 + 4.0
    b.dtype = np.float32  # the same memory, read as four float32 numbers
    assert g(b) == pytest.approx(float(np.sum(b.astype(np.float64) ** 2)))


def test_the_same_array_with_a_new_buffer_is_read_from_the_new_one():
    f, _ = sumsq()
    a = np.array([1.0, 2.0])
    assert f(a) == 5.0
    a.resize(4, refcheck=False)  # a new buffer for the same object
    a[:] = [1.0, 1.0, 1.0, 3.0]
    assert f(a) == 12.0


def test_trusted_calls_see_changes_of_the_same_array_too():
    f, _ = sumsq()
    f.trust_input = True
    a = np.array([1.0, 2.0])
    for i in range(5):
        a[0] = float(i)
        assert f(a) == i * i + 4.0
    assert f(a[::-1]) == 16.0 + 4.0  # a view is another object


def test_small_arguments_are_kept_until_free_and_large_ones_never():
    f, _ = sumsq()
    small = np.ones(8)
    w = weakref.ref(small)
    assert f(small) == 8.0
    del small
    gc.collect()
    assert w() is not None  # the function remembers its last argument, as PyTensor does
    f.free()
    gc.collect()
    assert w() is None
    large = np.ones(1 << 14)
    w = weakref.ref(large)
    assert f(large) == float(1 << 14)
    del large
    gc.collect()
    assert w() is None
