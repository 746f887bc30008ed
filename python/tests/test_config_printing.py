"""``oxtensor.config`` and ``debugprint``."""

import io
import os
import subprocess
import sys

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt
from oxtensor import config, function


def test_floatx_default_and_change_flags():
    assert config.floatX == "float64"
    assert pt.vector().dtype == "float64"
    with config.change_flags(floatX="float32"):
        assert config.floatX == "float32"
        assert pt.vector().dtype == "float32"
        assert pt.matrix().dtype == "float32"
        assert pt.zeros((2,)).dtype == "float32"
        assert pt.constant(0.1).dtype == "float32"
        assert pt.dvector().dtype == "float64"
        assert (pt.fvector() * 0.1).dtype == "float32"
        assert pt.arange(0.0, 1.0, 0.5).dtype == "float32"
        assert pt.vector().astype("floatX").dtype == "float32"
    assert config.floatX == "float64"

    @config.change_flags(floatX="float32")
    def inner():
        return pt.scalar().dtype

    assert inner() == "float32" and config.floatX == "float64"


def test_config_rejects_bad_values():
    with pytest.raises(ValueError):
        config.floatX = "float16"
    with pytest.raises(AttributeError):
        config.change_flags(no_such_flag=1)
    with pytest.raises(AttributeError):
        config.no_such_flag  # noqa: B018


def test_flags_from_the_environment():
    code = "import oxtensor, oxtensor.tensor as pt; print(oxtensor.config.floatX, pt.vector().dtype, oxtensor.config.mode)"
    env = dict(os.environ, OXTENSOR_FLAGS="floatX=float32,mode=FAST_COMPILE")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["float32", "float32", "FAST_COMPILE"]


def test_debugprint_format():
    x = pt.dvector("x")
    y = pt.exp(x) + x
    text = oxtensor.dprint(y, file="str")
    lines = text.splitlines()
    assert lines[0].startswith("Add [id A]")
    assert lines[1].startswith(" ├─ Exp [id B]")
    assert lines[2] == " │  └─ x [id C]"
    assert lines[3] == " └─ x [id C]"
    typed = oxtensor.printing.debugprint(y, print_type=True, file="str")
    assert "<Vector(float64, shape=(?,))>" in typed
    shallow = oxtensor.dprint(y, depth=1, file="str")
    assert shallow.splitlines() == [lines[0]]


def test_debugprint_prints_to_stdout_and_returns_the_file(capsys):
    x = pt.dvector("x")
    ret = oxtensor.dprint(x.sum())
    assert ret is sys.stdout
    assert "Sum" in capsys.readouterr().out
    buf = io.StringIO()
    assert oxtensor.dprint([x, x * 2], file=buf) is buf
    assert "x [id A]" in buf.getvalue() and "Mul" in buf.getvalue()


def test_debugprint_of_functions():
    x = pt.dvector("x")
    s = oxtensor.shared(np.zeros(2), name="s")
    f = function([x], (x**2).sum(), updates=[(s, s + x)])
    text = oxtensor.dprint(f, file="str")
    assert "x" in text and "s" in text
    assert f.dprint(file="str") == text
    mixed = oxtensor.dprint([f, x], file="str")
    assert mixed.startswith(text)
    with pytest.raises(TypeError):
        oxtensor.dprint(3, file="str")
