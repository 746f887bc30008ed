"""``oxtensor.raise_op`` (``CheckAndRaise``, ``Assert``, ``assert_op``) against PyTensor 3's
``pytensor.raise_op`` on the same graphs: values, exception classes (builtins and user
subclasses, as PyMC's ``ParameterValueError``), messages, printing, gradients and the
constant-true removal, in every mode. PyTensor runs with its Python linker (no C compilation;
the op's semantics are the same)."""

import pickle
import warnings

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt
from oxtensor.raise_op import Assert, CheckAndRaise, ExceptionType, assert_op

pytensor = pytest.importorskip("pytensor")
rpt = pytest.importorskip("pytensor.tensor")
from pytensor import raise_op as ref_raise_op  # noqa: E402

MODES = ["FAST_RUN", "FAST_COMPILE", "interp"]
REF_MODE = pytensor.compile.mode.Mode(linker="py", optimizer="fast_run")


class ParameterValueError(ValueError):
    """A user exception class, as PyMC's ``ParameterValueError``."""


class CustomError(Exception):
    """A user exception class not derived from a builtin error other than ``Exception``."""


def _ops(lib_raise_op):
    """The ops of one library for each case: (name, op)."""
    return [
        ("assert_op", lib_raise_op.assert_op),
        ("Assert", lib_raise_op.Assert("x must be positive")),
        ("ValueError", lib_raise_op.CheckAndRaise(ValueError, "value check failed")),
        ("ParameterValueError", lib_raise_op.CheckAndRaise(ParameterValueError, "sigma > 0")),
        ("CustomError", lib_raise_op.CheckAndRaise(CustomError, "custom failure")),
    ]


def _graph(t, op):
    """``op(x, all(x > 0), x.shape[0] > 1) * 2``, its value, for library ``t``."""
    x = t.vector("x", dtype="float64")
    return x, op(x, t.all(x > 0), x.shape[0] > 1) * 2


CASES = [name for name, _ in _ops(ref_raise_op)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES)
def test_values_and_exceptions_match_pytensor(mode, case):
    ours = dict(_ops(oxtensor.raise_op))[case]
    ref = dict(_ops(ref_raise_op))[case]
    x, y = _graph(pt, ours)
    rx, ry = _graph(rpt, ref)
    f = oxtensor.function([x], y, mode=mode)
    g = pytensor.function([rx], ry, mode=REF_MODE)
    good = np.array([0.5, 1.0, 3.0])
    np.testing.assert_array_equal(f(good), g(good))
    for bad in (np.array([0.5, -1.0, 3.0]), np.array([2.0])):
        with pytest.raises(Exception) as want:
            g(bad)
        with pytest.raises(Exception) as got:
            f(bad)
        assert type(got.value) is type(want.value) is ref.exc_type
        assert str(got.value) == str(want.value) == ref.msg
        assert got.value.args == (ref.msg,)
        # The note names the node, as PyTensor's error notes do.
        assert any("Assert" in n or "CheckAndRaise" in n for n in got.value.__notes__)


def test_op_construction_printing_and_equality_match_pytensor():
    for (name, ours), (_, ref) in zip(_ops(oxtensor.raise_op), _ops(ref_raise_op)):
        assert str(ours) == str(ref), name
        assert (ours.msg, ours.exc_type) == (ref.msg, ref.exc_type)
    long = "a message longer than thirty characters in all"
    assert str(Assert(long)) == str(ref_raise_op.Assert(long))
    assert str(CheckAndRaise(ParameterValueError, long)) == str(ref_raise_op.CheckAndRaise(ParameterValueError, long))
    assert Assert("m") == Assert("m") and hash(Assert("m")) == hash(Assert("m"))
    assert Assert("m") != Assert("n")
    assert CheckAndRaise(ValueError, "m") != CheckAndRaise(TypeError, "m")
    assert ExceptionType() == ExceptionType() and hash(ExceptionType()) == hash(ExceptionType())
    for bad in (int, BaseException, "ValueError", ValueError("x")):
        with pytest.raises((TypeError, ValueError)) as want:
            ref_raise_op.CheckAndRaise(bad)
        with pytest.raises((TypeError, ValueError)) as got:
            CheckAndRaise(bad)
        assert type(got.value) is type(want.value)
        assert str(got.value) == str(want.value)


def test_dprint_shows_the_message():
    x = pt.vector("x")
    text = oxtensor.dprint(assert_op(x, pt.all(x > 0)), file="str")
    rx = rpt.vector("x")
    ref = pytensor.dprint(ref_raise_op.assert_op(rx, rpt.all(rx > 0)), file="str")
    first = text.splitlines()[0]
    assert first.startswith("Assert{msg='PyTensor Assert failed!'}"), text
    assert ref.splitlines()[0].startswith("Assert{msg='PyTensor Assert failed!'}")
    y = CheckAndRaise(ParameterValueError, "sigma > 0")(x, pt.all(x > 0))
    assert oxtensor.dprint(y, file="str").startswith("CheckAndRaise{raises=ParameterValueError, msg='sigma > 0'}")


def test_array_conditions_are_type_errors_as_in_pytensor():
    x = pt.vector("x")
    rx = rpt.vector("x")
    with pytest.raises(TypeError):
        ref_raise_op.assert_op(rx, rx > 0)
    with pytest.raises(TypeError, match="scalar condition"):
        assert_op(x, x > 0)
    # Reduced with all(), an array condition holds only when every element does.
    f = oxtensor.function([x], assert_op(x, pt.all(x > 0)))
    g = pytensor.function([rx], ref_raise_op.assert_op(rx, rpt.all(rx > 0)), mode=REF_MODE)
    np.testing.assert_array_equal(f([1.0, 2.0]), g([1.0, 2.0]))
    for lib in (f, g):
        with pytest.raises(AssertionError):
            lib([1.0, 0.0])


@pytest.mark.parametrize("mode", MODES)
def test_python_and_numpy_conditions_of_any_dtype(mode):
    x = pt.vector("x")
    rx = rpt.vector("x")
    c = pt.scalar("c", dtype="int32")
    rc = rpt.scalar("c", dtype="int32")
    conds = [True, 1, 2.5, np.bool_(True), np.float64(np.nan)]
    f = oxtensor.function([x, c], assert_op(x, c, *conds), mode=mode)
    g = pytensor.function([rx, rc], ref_raise_op.assert_op(rx, rc, *conds), mode=REF_MODE)
    for cv in (1, -3):
        np.testing.assert_array_equal(f([1.0], cv), g([1.0], cv))
    for lib in (f, g):
        with pytest.raises(AssertionError):
            lib([1.0], 0)
    # A constant false condition raises when the function runs, not when it is built.
    for cond in (False, 0, 0.0):
        f = oxtensor.function([x], assert_op(x, cond), mode=mode)
        g = pytensor.function([rx], ref_raise_op.assert_op(rx, cond), mode=REF_MODE)
        for lib in (f, g):
            with pytest.raises(AssertionError):
                lib([1.0])


@pytest.mark.parametrize("mode", MODES)
def test_constant_true_checks_are_removed(mode):
    x = pt.vector("x")
    c = pt.scalar("c", dtype="bool")
    f = oxtensor.function([x], pt.exp(assert_op(x, True, 1.0)), mode=mode)
    assert "Assert{" not in oxtensor.dprint(f, file="str")
    f = oxtensor.function([x, c], pt.exp(assert_op(x, True, c)), mode=mode)
    text = oxtensor.dprint(f, file="str")
    assert text.count("Assert{") == 1 and text.count("├─") == 1, text
    rx = rpt.vector("x")
    g = pytensor.function([rx], rpt.exp(ref_raise_op.assert_op(rx, True, 1.0)), mode=REF_MODE)
    assert not any(isinstance(n.op, ref_raise_op.CheckAndRaise) for n in g.maker.fgraph.toposort())


@pytest.mark.parametrize("mode", MODES)
def test_gradient_passes_to_the_value_only(mode):
    x = pt.vector("x")
    s = pt.scalar("s")
    y = CheckAndRaise(ParameterValueError, "s > 0")(x, s > 0)
    cost = (y**2).sum()
    rx, rs = rpt.vector("x"), rpt.scalar("s")
    ry = ref_raise_op.CheckAndRaise(ParameterValueError, "s > 0")(rx, rs > 0)
    rcost = (ry**2).sum()
    f = oxtensor.function([x, s], oxtensor.grad(cost, x), mode=mode)
    g = pytensor.function([rx, rs], pytensor.grad(rcost, rx), mode=REF_MODE)
    np.testing.assert_array_equal(f([1.0, -2.0], 1.0), g([1.0, -2.0], 1.0))
    # The gradient graph holds the check too: it reads the checked value.
    with pytest.raises(ParameterValueError):
        f([1.0], -1.0)
    with pytest.raises(ValueError):
        pytensor.grad(rcost, rs)
    with pytest.raises(ValueError):
        oxtensor.grad(cost, s)


def test_verify_grad_through_a_check():
    rng = np.random.default_rng(3)
    from oxtensor.gradient import verify_grad

    def fn(v):
        return CheckAndRaise(ValueError, "m")(pt.sin(v) * v, pt.all(pt.isfinite(v)))

    verify_grad(fn, [rng.standard_normal(5)], rng=rng)


def test_failures_inside_a_loop_raise_the_class():
    x = pt.vector("x")
    check = CheckAndRaise(ParameterValueError, "step must stay positive")
    out = oxtensor.scan(lambda prev: check(prev - 1.0, pt.all(prev > 0)), outputs_info=[x], n_steps=4)
    out = out[0] if isinstance(out, tuple) else out
    f = oxtensor.function([x], out)
    np.testing.assert_array_equal(f([10.0])[-1], [6.0])
    with pytest.raises(ParameterValueError, match="step must stay positive"):
        f([2.0])


def test_output_does_not_alias_the_input():
    x = pt.vector("x")
    f = oxtensor.function([x], assert_op(x, pt.all(x > 0)))
    xv = np.array([1.0, 2.0])
    out = f(xv)
    np.testing.assert_array_equal(out, xv)
    out[0] = 5.0
    assert xv[0] == 1.0


def test_pickled_function_raises_the_same_class():
    x = pt.vector("x")
    f = oxtensor.function([x], CheckAndRaise(ParameterValueError, "sigma > 0")(x, pt.all(x > 0)))
    h = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(h([1.0]), [1.0])
    with pytest.raises(ParameterValueError, match="sigma > 0"):
        h([-1.0])


def test_jax_skips_traced_checks_with_a_warning_as_pytensor_does():
    pytest.importorskip("jax")
    x = pt.vector("x")
    f = oxtensor.function([x], assert_op(x, pt.all(x > 0)) * 2, mode="JAX")
    with pytest.warns(UserWarning, match="Skipping"):
        np.testing.assert_array_equal(f(np.array([1.0, -2.0])), [2.0, -4.0])
    rx = rpt.vector("x")
    with pytest.warns(UserWarning, match="Skipping"):
        g = pytensor.function([rx], ref_raise_op.assert_op(rx, rpt.all(rx > 0)) * 2, mode="JAX")
    np.testing.assert_array_equal(g(np.array([1.0, -2.0])), [2.0, -4.0])
    # A condition known while tracing is checked.
    f = oxtensor.function([x], CheckAndRaise(ParameterValueError, "never")(x, 0) * 2, mode="JAX")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ParameterValueError, match="never"):
            f(np.array([1.0]))
