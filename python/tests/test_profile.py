"""``function(..., profile=True)``: per-call and per-node times on every backend."""

import io

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE", "interp"])
def test_profile_counts_calls_and_times_nodes(mode):
    x = pt.dmatrix("x")
    w = pt.dvector("w")
    loss = pt.log1p(pt.exp(pt.dot(x, w))).sum()
    f = oxtensor.function([x, w], loss, mode=mode, name="loss", profile=True)
    xv = np.full((200, 50), 0.01)
    wv = np.full(50, 0.5)
    for _ in range(4):
        f(xv, wv)
    with pytest.raises(ValueError):
        f(xv, np.ones(3))
    p = f.profile
    assert p.fct_callcount == 4
    assert p.fct_call_time > 0
    assert p.compile_time > 0
    nodes = p.apply_time
    assert any(op == "MatMul" and t > 0 for _, op, t in nodes)
    assert sum(t for _, _, t in nodes) <= p.fct_call_time
    out = io.StringIO()
    p.summary(file=out)
    text = out.getvalue()
    assert "Function profile 'loss'" in text
    assert "4 calls" in text
    assert "MatMul(x, w)" in text


def test_unprofiled_function_has_no_profile():
    x = pt.dvector("x")
    assert oxtensor.function([x], x * 2).profile is None
