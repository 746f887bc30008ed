"""Seeded random graphs for the engines' differential suites (``test_jax_differential.py``,
``test_pytorch_differential.py``): elementwise chains with broadcasting, then maybe a
reduction, run in the default mode and in another engine's mode, which must agree.

Every value stays bounded by construction (``exp`` only of a ``tanh``, division only by
``1 + b²``, logarithms only of ``1 + |a|``), so the engines' few-ulp differences in each
elementary function cannot be amplified beyond the suites' tolerance: ``rtol=1e-9`` with
``atol=1e-9`` for float64 and ``rtol=atol=1e-4`` for float32 (chains of up to ten ops, whose
cancellations in ``a - b`` turn relative error into absolute error of the operands' size).
"""

import numpy as np

import oxtensor
import oxtensor.tensor as pt

UNARY = [
    lambda a: pt.tanh(a),
    lambda a: pt.sin(a),
    lambda a: pt.cos(a),
    lambda a: pt.abs(a),
    lambda a: pt.sqr(a),
    lambda a: pt.exp(pt.tanh(a)),
    lambda a: pt.log1p(pt.abs(a)),
    lambda a: pt.sqrt(pt.abs(a)),
    lambda a: pt.sigmoid(a),
    lambda a: pt.softplus(a),
    lambda a: -a,
]
BINARY = [
    lambda a, b: a + b,
    lambda a, b: a - b,
    lambda a, b: a * b,
    lambda a, b: a / (1 + b * b),
    lambda a, b: pt.maximum(a, b),
    lambda a, b: pt.minimum(a, b),
    lambda a, b: pt.switch(a > b, a, b * 0.5),
]

#: Shapes of the three inputs: a matrix and two operands that broadcast against it.
SHAPES = [((4, 5), (5,), (4, 1)), ((3, 2), (1, 2), (3, 2)), ((6,), (6,), ())]


def random_graph(rng, inputs):
    """A chain of 3-10 random ops over ``inputs``, then maybe a reduction."""
    pool = list(inputs)
    for _ in range(rng.integers(3, 11)):
        if rng.random() < 0.4:
            out = UNARY[rng.integers(len(UNARY))](pool[rng.integers(len(pool))])
        else:
            i, j = rng.integers(len(pool), size=2)
            out = BINARY[rng.integers(len(BINARY))](pool[i], pool[j])
        pool.append(out)
    # Use the last value and one earlier value, so the graph has two outputs that share work.
    outs = [pool[-1], pool[len(inputs) + rng.integers(len(pool) - len(inputs))]]
    kind = rng.integers(4)
    if kind == 1:
        outs[0] = outs[0].sum(axis=-1) if outs[0].ndim else outs[0]
    elif kind == 2:
        outs[0] = outs[0].max()
    elif kind == 3:
        outs[0] = pt.mean(outs[0], axis=0) if outs[0].ndim else outs[0]
    return outs



TOLERANCE = {"float64": 1e-9, "float32": 1e-4}


def build(seed, dtype):
    """Graph ``seed`` in ``dtype``: its inputs, outputs and input values."""
    rng = np.random.default_rng(1000 + seed)
    shapes = SHAPES[seed % len(SHAPES)]
    # A dimension broadcasts only where its static extent is 1 (PyTensor's rule).
    inputs = [
        pt.tensor(f"x{k}", dtype=dtype, shape=tuple(1 if d == 1 else None for d in s))
        for k, s in enumerate(shapes)
    ]
    outputs = random_graph(rng, inputs)
    values = [(rng.random(s) * 6 - 3).astype(dtype) for s in shapes]
    return inputs, outputs, values


def compare(want, got, dtype):
    """Same shapes, dtypes, and values within ``TOLERANCE``."""
    tol = TOLERANCE[dtype]
    for w, g in zip(want, got, strict=True):
        w, g = np.asarray(w), np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def run_and_compare(seed, dtype, mode):
    """Graph ``seed`` in ``dtype`` run in the default mode and in ``mode``, compared."""
    inputs, outputs, values = build(seed, dtype)
    want = oxtensor.function(inputs, outputs, on_unused_input="ignore")(*values)
    got = oxtensor.function(inputs, outputs, mode=mode, on_unused_input="ignore")(*values)
    compare(want, got, dtype)
