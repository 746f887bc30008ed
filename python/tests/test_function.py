"""``oxtensor.function``: calling conventions, options, updates, givens, errors."""

import inspect
import threading

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt
from oxtensor import In, Mode, function, shared
from conftest import assert_matches


def test_single_output_is_an_array_and_lists_give_lists():
    x = pt.dvector("x")
    f = function([x], x.sum())
    out = f([1.0, 2.0])
    assert isinstance(out, np.ndarray) and out.shape == () and float(out) == 3.0
    g = function([x], [x.sum()])
    out = g([1.0, 2.0])
    assert isinstance(out, list) and len(out) == 1
    h = function([x], (x.sum(), x * 2))
    assert isinstance(h([1.0]), list)
    u = function([x], None, on_unused_input="ignore")
    assert u([1.0]) == []


def test_inputs_must_be_a_list():
    x = pt.dvector("x")
    with pytest.raises(TypeError, match="list"):
        function(x, x)
    with pytest.raises(ValueError, match="graph inputs"):
        function([x.sum()], x)


def test_keyword_arguments_and_defaults():
    x, y = pt.dscalars("x", "y")
    w = pt.dscalar("w")
    f = function([x, In(y, value=1), In(w, value=2, name="w_by_name")], (x + y) * w)
    assert float(f(33)) == 68.0
    assert float(f(33, 2)) == 70.0
    assert float(f(33, 0, 1)) == 33.0
    assert float(f(33, w_by_name=1)) == 34.0
    assert float(f(33, w_by_name=1, y=0)) == 33.0
    assert float(f(x=1, y=2, w_by_name=3)) == 9.0
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        f(1, z=3)
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        f(1, x=2)
    g = function([x, y], x + y)
    with pytest.raises(TypeError, match="missing"):
        g(1)
    with pytest.raises(TypeError, match="takes 2 arguments, got 3"):
        g(1, 2, 3)


def test_argument_conversion_follows_pytensor():
    x = pt.fvector("x")
    f = function([x], x * 2)
    assert f([1, 2]).dtype == np.float32  # a list converts when nothing is lost
    assert f(np.array([1, 2], dtype="int8")).dtype == np.float32  # lossless upcast
    with pytest.raises(TypeError, match="float64"):
        f(np.array([1.0, 2.0]))  # float64 array into float32: lossy
    with pytest.raises(TypeError, match="loss of precision"):
        f([0.1])
    g = function([x], x * 2, allow_input_downcast=True)
    assert_matches(g(np.array([0.1])), np.array([0.2], dtype="float32"))
    s = pt.fscalar("s")
    with oxtensor.config.change_flags(floatX="float32"):
        h = function([s], s + 1)
        assert_matches(h(0.1), np.float32(0.1) + np.float32(1))  # Python floats go to floatX
    i = pt.iscalar("i")
    k = function([i], i + 1)
    assert int(k(3)) == 4
    with pytest.raises(TypeError):
        k(3.5)
    with pytest.raises(TypeError):
        k(2**40)
    assert int(k(np.int16(7))) == 8


def test_rank_and_shape_errors_name_the_input_and_its_site():
    line = inspect.currentframe().f_lineno + 1
    x = pt.dmatrix("x")
    f = function([x], x.sum())
    with pytest.raises(TypeError) as e:
        f(np.zeros(3))
    msg = str(e.value)
    assert "'x'" in msg and "expected 2 dimensions, got 1" in msg
    assert f"test_function.py:{line}" in msg
    v = pt.tensor("v", dtype="float64", shape=(3,))
    g = function([v], v * 2)
    with pytest.raises(ValueError, match=r"expected shape \(3\), got \[4\]"):
        g(np.zeros(4))
    l = pt.lvector("l")
    with pytest.raises(TypeError, match="'l'.*expected dtype int64, got float64"):
        function([l], l * 2)(np.zeros(2))


def test_runtime_shape_errors_are_value_errors():
    x, y = pt.dvectors("x", "y")
    line = inspect.currentframe().f_lineno + 1
    z = x + y
    f = function([x, y], z)
    with pytest.raises(ValueError) as e:
        f(np.zeros(3), np.zeros(4))
    assert f"test_function.py:{line}" in str(e.value)


def test_graph_errors_are_raised_at_build_time():
    line = inspect.currentframe().f_lineno + 1
    m = pt.dmatrix("m")
    v = pt.dvector("v")
    with pytest.raises(TypeError) as e:
        pt.and_(m, 1.5)
    assert "float" in str(e.value)
    with pytest.raises(ValueError) as e:
        pt.dot(pt.tensor("a", shape=(2, 3)), pt.tensor("b", shape=(4, 2)))
    with pytest.raises(IndexError, match="too many indices"):
        v[1, 2]
    with pytest.raises(ValueError) as e:
        function([v], m.sum() + v.sum())
    assert "'m'" in str(e.value) and f"test_function.py:{line}" in str(e.value)


def test_on_unused_input():
    x, y = pt.dvectors("x", "y")
    with pytest.raises(ValueError, match="not used"):
        function([x, y], x.sum())
    f = function([x, y], x.sum(), on_unused_input="ignore")
    assert float(f([1.0], [2.0])) == 1.0
    with pytest.raises(ValueError, match="on_unused_input"):
        function([x], x, on_unused_input="maybe")


def test_modes():
    x = pt.dvector("x")
    for mode in [None, "FAST_RUN", "FAST_COMPILE", Mode(), Mode(linker="py", optimizer="fast_compile"),
                 oxtensor.get_mode("FAST_RUN").excluding("fusion")]:
        assert float(function([x], x.sum(), mode=mode)([1.0, 2.0])) == 3.0
    with pytest.raises(ValueError):
        function([x], x, mode="NO_SUCH_MODE")


def test_native_code_for_a_lower_cpu_agrees_with_numpy():
    # "native:TARGET" compiles the C for another -march (what AVX2-only CPUs run).
    x, y = pt.dvector("x"), pt.dvector("y")
    out = pt.exp(-(x**2)) * pt.sin(y) + pt.log1p(abs(x * y))
    rng = np.random.default_rng(20261125)
    xv, yv = rng.normal(0, 3, 5000), rng.normal(0, 3, 5000)
    want = np.exp(-(xv**2)) * np.sin(yv) + np.log1p(np.abs(xv * yv))
    for target in ("x86-64-v2", "x86-64-v3"):
        f = function([x, y], out, mode=Mode(linker=f"native:{target}"))
        np.testing.assert_allclose(f(xv, yv), want, rtol=1e-14, atol=1e-15)
    with pytest.raises(ValueError, match="-march name"):
        function([x], x, mode=Mode(linker="native:x86-64 -O0"))


def test_trust_input_is_settable_and_still_safe():
    x = pt.dvector("x")
    f = function([x], x * 2, trust_input=True)
    assert f.trust_input is True
    assert_matches(f(np.array([1.0, 2.0])), np.array([2.0, 4.0]))
    # Trusted arguments are not converted, but one the kernels were not compiled for is still
    # refused, naming the input, instead of being read as float64.
    with pytest.raises(TypeError, match=r"bad input value for 'x' .*got int32 of shape \[2\]"):
        f(np.array([1, 2], dtype="int32"))
    with pytest.raises(TypeError, match="bad input value for 'x'"):
        f(np.ones((2, 2)))
    f.trust_input = False
    assert f.trust_input is False
    assert_matches(f(np.array([1, 2], dtype="int32")), np.array([2.0, 4.0]))


def test_shared_variables():
    s = shared(np.array([1.0, 2.0]), name="s")
    assert isinstance(s, pt.TensorSharedVariable) and s.name == "s" and s.dtype == "float64"
    v = s.get_value()
    v[0] = 100.0  # a copy: the stored value does not change
    assert_matches(s.get_value(), np.array([1.0, 2.0]))
    b = s.get_value(borrow=True)
    assert not b.flags.writeable
    s.set_value([3, 4])  # ints into a float variable: lossless
    assert_matches(s.get_value(), np.array([3.0, 4.0]))
    s.set_value(np.zeros(5))  # another length is fine
    with pytest.raises(TypeError):
        s.set_value(np.zeros((2, 2)))
    i = shared(np.int32(3))
    with pytest.raises(TypeError):
        i.set_value(2.5)
    arr = np.ones(3)
    t = shared(arr)
    arr[0] = 9.0  # shared() copies
    assert_matches(t.get_value(), np.ones(3))
    assert shared(0).dtype == "int64" and shared(0.0).dtype == "float64"
    assert shared(np.float32(1)).dtype == "float32"


def test_updates_are_applied_after_the_call():
    state = shared(0)
    inc = pt.iscalar("inc")
    acc = function([inc], state, updates=[(state, state + inc)])
    assert int(acc(1)) == 0  # outputs see the old value
    assert int(acc(300)) == 1
    assert int(state.get_value()) == 301
    dec = function([inc], state, updates={state: state - inc})
    dec(1)
    assert int(state.get_value()) == 300
    a, b = shared(1.0), shared(2.0)
    swap = function([], [], updates=[(a, b), (b, a)])
    swap()
    assert float(a.get_value()) == 2.0 and float(b.get_value()) == 1.0
    c = shared(np.float32(0))
    f = function([], [], updates=[(c, 1.5)])  # a number becomes a constant of c's dtype
    f()
    assert_matches(c.get_value(), np.array(1.5, dtype="float32"))


def test_failing_call_changes_nothing():
    s = shared(np.array([1.0, 2.0, 3.0]), name="s")
    t = shared(np.array(10.0), name="t")
    x = pt.dvector("x")
    f = function([x], (s * x).sum(), updates=[(t, t + 1), (s, s + x)])
    assert float(f(np.ones(3))) == 6.0
    with pytest.raises(ValueError):
        f(np.ones(4))  # fails while computing: neither update happens
    assert_matches(s.get_value(), np.array([2.0, 3.0, 4.0]))
    assert float(t.get_value()) == 11.0
    with pytest.raises(TypeError):
        f(np.ones((2, 2)))
    assert float(t.get_value()) == 11.0


def test_update_errors():
    s = shared(np.zeros(2))
    x = pt.dvector("x")
    with pytest.raises(TypeError):
        function([x], [], updates=[(x, x + 1)])
    with pytest.raises(TypeError):
        function([x], [], updates=[(s, x.sum())])  # rank 0 into rank 1
    with pytest.raises(TypeError):
        function([x], [], updates=[(s, pt.cast(x, "float32"))])


def test_update_never_aliases_the_callers_array():
    s = shared(np.zeros(3))
    x = pt.dvector("x")
    f = function([x], [], updates=[(s, x)])
    a = np.ones(3)
    f(a)
    a[:] = 5.0
    assert_matches(s.get_value(), np.ones(3))
    g = function([x], [], updates=[(s, x[::-1])])
    g(a)
    a[:] = 7.0
    assert_matches(s.get_value(), np.full(3, 5.0))


def test_givens():
    state = shared(0)
    inc = pt.iscalar("inc")
    fn_of_state = state * 2 + inc
    foo = pt.scalar(dtype=state.dtype)
    skip_shared = function([inc, foo], fn_of_state, givens=[(state, foo)])
    assert int(skip_shared(1, 3)) == 7
    assert int(state.get_value()) == 0
    x = pt.dvector("x")
    y = pt.dvector("y")
    f = function([y], (x * 2).sum(), givens={x: y[::-1]})
    assert float(f([1.0, 2.0])) == 6.0
    with pytest.raises(ValueError):
        function([y], x.sum(), givens=[(x, pt.dmatrix("m"))])


def test_concurrent_calls():
    x = pt.dvector("x")
    f = function([x], (x**2).sum())
    results = []

    def work(k):
        a = np.full(100, float(k))
        for _ in range(200):
            results.append(float(f(a)) == 100.0 * k * k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(results) and len(results) == 800


def test_function_repr_name_and_dprint(capsys):
    x = pt.dvector("x")
    f = function([x], x.sum(), name="total")
    assert f.name == "total" and "total" in repr(f)
    f.dprint()
    assert "Sum" in capsys.readouterr().out


def test_a_consumed_shared_variable_updates_in_place_but_never_under_a_reader():
    w0 = np.linspace(-1.0, 1.0, 100_000)
    w = shared(w0.copy(), name="w")
    g = pt.dvector("g")
    lr = 0.25
    for mode in ["FAST_RUN", "interp"]:
        w.set_value(w0.copy())
        step = function([g], [], updates=[(w, w - lr * g)], mode=mode)
        grad = np.cos(w0)
        step(grad)
        held = w.get_value(borrow=True)  # a reader: the next step must not write under it
        step(grad)
        assert_matches(held, w0 - lr * grad)
        assert_matches(w.get_value(), w0 - 2 * lr * grad)
        del held
        for _ in range(3):
            step(grad)
        np.testing.assert_allclose(w.get_value(), w0 - 5 * lr * grad, rtol=1e-14, atol=1e-15)
