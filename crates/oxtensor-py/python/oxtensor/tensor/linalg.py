"""``oxtensor.tensor.linalg`` — PyTensor's ``pt.linalg``: decompositions, solvers, matrix
functions and norms, with PyTensor's signatures.

Every function accepts leading batch dimensions, broadcast between operands as NumPy's
generalised ufuncs do (PyTensor's ``Blockwise``). Integer inputs compute in ``float64``;
``float32`` inputs stay ``float32``. Decompositions and solvers are single graph ops computed
with the Rust ``faer`` library; ``norm``, ``matrix_power``, ``kron``, ``tensorinv`` and
``tensorsolve`` are compositions of other ops (so they are differentiable wherever their
parts are). ``check_finite``, ``overwrite_*`` and LAPACK ``driver`` arguments are accepted
for compatibility and ignored.
"""

from __future__ import annotations

import builtins

import numpy as np

from oxtensor import _core
from oxtensor.tensor import basic as _basic
from oxtensor.tensor import math as _math

__all__ = [
    "cholesky",
    "solve",
    "solve_triangular",
    "cho_solve",
    "lu",
    "lu_factor",
    "lu_solve",
    "inv",
    "matrix_inverse",
    "pinv",
    "det",
    "slogdet",
    "eig",
    "eigh",
    "eigvalsh",
    "svd",
    "qr",
    "norm",
    "matrix_power",
    "matrix_dot",
    "kron",
    "block_diag",
    "lstsq",
    "expm",
    "solve_continuous_lyapunov",
    "solve_discrete_lyapunov",
    "solve_sylvester",
    "tensorinv",
    "tensorsolve",
    "trace",
]


def _one(name, inputs, **params):
    return _core.linalg(name, list(inputs), **params)[0]


def _b_ndim(b_ndim):
    if b_ndim is not None and b_ndim not in (1, 2):
        raise ValueError(f"b_ndim must be 1 or 2, got {b_ndim}")
    return b_ndim


def cholesky(x, lower=True, *, check_finite=True, overwrite_a=False, on_error="nan"):
    """Cholesky factor of a symmetric positive-definite matrix (``scipy.linalg.cholesky``).

    ``on_error="nan"`` (PyTensor's default) returns NaNs for a matrix that is not positive
    definite; ``"raise"`` raises ``ValueError``. The gradient is lower (upper) triangular.
    """
    if on_error not in ("nan", "raise"):
        raise ValueError(f"on_error must be 'nan' or 'raise', got {on_error!r}")
    return _one("cholesky", [x], lower=bool(lower), nan_on_error=on_error == "nan")


_SOLVE_ALIASES = {
    "general": "gen",
    "symmetric": "sym",
    "hermitian": "her",
    "positive definite": "pos",
}


def solve(
    a,
    b,
    *,
    lower=False,
    overwrite_a=False,
    overwrite_b=False,
    check_finite=True,
    assume_a="gen",
    transposed=False,
    b_ndim=None,
):
    """``x`` with ``a @ x = b`` (``scipy.linalg.solve``); ``assume_a`` is ``"gen"``, ``"sym"``,
    ``"her"`` or ``"pos"`` (or SciPy's long names); ``b_ndim`` (1 or 2) tells a batch of
    vectors from a matrix.

    The structured cases read what SciPy's structured solvers read: ``"diagonal"`` divides by
    the diagonal, ``"lower triangular"``/``"upper triangular"`` are ``solve_triangular``,
    ``"tridiagonal"`` reads only the three central diagonals of ``a`` and solves in O(n)
    (LU with partial pivoting, as LAPACK's ``gtsv``), and ``"banded"`` finds the bandwidths
    from the values, as SciPy does, and solves a narrow band in O(n·bandwidth²) (as
    ``gbsv``). Gradients are confined to the entries each case reads."""
    assume_a = _SOLVE_ALIASES.get(assume_a, assume_a)
    b_ndim = _b_ndim(b_ndim)
    if assume_a in ("lower triangular", "upper triangular"):
        return solve_triangular(
            a, b, lower=assume_a == "lower triangular", trans=int(bool(transposed)), b_ndim=b_ndim
        )
    if assume_a == "diagonal":
        b = _basic.as_tensor_variable(b)
        d = _core.matrix_fn("diagonal", _basic.as_tensor_variable(a))
        if b_ndim is None:
            b_ndim = 2 if b.ndim > 1 else 1
        return b / (d if b_ndim == 1 else _basic.expand_dims(d, -1))
    return _one(
        "solve",
        [a, b],
        lower=bool(lower),
        assume_a=str(assume_a),
        transposed=bool(transposed),
        b_ndim=b_ndim,
    )


def _trans(trans):
    if trans in (0, "N", "n"):
        return False
    if trans in (1, 2, "T", "t", "C", "c"):
        return True
    raise ValueError(f"trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")


def solve_triangular(
    a, b, *, trans=0, lower=False, unit_diagonal=False, check_finite=True, b_ndim=None
):
    """``x`` with ``a @ x = b`` for triangular ``a`` (``scipy.linalg.solve_triangular``)."""
    return _one(
        "solve_triangular",
        [a, b],
        lower=bool(lower),
        transposed=_trans(trans),
        unit_diagonal=bool(unit_diagonal),
        b_ndim=_b_ndim(b_ndim),
    )


def cho_solve(c_and_lower, b, *, check_finite=True, b_ndim=None):
    """``x`` with ``(c @ c.T) @ x = b`` from ``(c, lower)`` (``scipy.linalg.cho_solve``)."""
    c, lower = c_and_lower
    return _one("cho_solve", [c, b], lower=bool(lower), b_ndim=_b_ndim(b_ndim))


def lu(a, permute_l=False, check_finite=True, p_indices=False, overwrite_a=False):
    """``(p, l, u)`` with ``a = p @ l @ u`` (``scipy.linalg.lu``); with ``p_indices``, ``p`` is
    a vector of row indices; with ``permute_l``, ``(p @ l, u)``."""
    p, l, u = _core.linalg("lu", [a], p_indices=bool(p_indices) and not permute_l)
    if permute_l:
        return _math.matmul(p, l), u
    return p, l, u


def lu_factor(a, *, check_finite=True, overwrite_a=False):
    """``(lu, piv)``: packed LU factors and pivots (``scipy.linalg.lu_factor``)."""
    lu_, piv = _core.linalg("lu_factor", [a])
    return lu_, piv


def lu_solve(LU_and_pivots, b, trans=False, b_ndim=None, check_finite=True, overwrite_b=False):
    """``x`` with ``a @ x = b`` from ``lu_factor(a)`` (``scipy.linalg.lu_solve``)."""
    lu_, piv = LU_and_pivots
    return _one(
        "lu_solve", [lu_, piv, b], transposed=_trans(trans), b_ndim=_b_ndim(b_ndim)
    )


def inv(x):
    """Matrix inverse (``numpy.linalg.inv``); a singular matrix raises ``ValueError``."""
    return _one("inv", [x])


matrix_inverse = inv


def pinv(x, hermitian=False):
    """Moore–Penrose pseudo-inverse (``numpy.linalg.pinv``)."""
    return _one("pinv", [x])


def det(x):
    """Determinant (``numpy.linalg.det``)."""
    return _one("det", [x])


def slogdet(x):
    """``(sign, logabsdet)`` of the determinant (``numpy.linalg.slogdet``)."""
    sign, logabsdet = _core.linalg("slogdet", [x])
    return sign, logabsdet


def eig(x):
    """``(w, v)`` for a matrix with real eigenvalues (oxtensor has no complex dtype: a
    matrix with complex eigenvalues raises at run time)."""
    w, v = _core.linalg("eig", [x])
    return w, v


def _lower(lower, UPLO):
    if UPLO is not None:
        return UPLO in ("L", "l")
    return bool(lower)


def _generalized(a, b, lower):
    """``(c, L)`` for the generalised problem ``a v = w b v``: ``L`` the Cholesky factor of
    ``b`` and ``c = L⁻¹ a L⁻ᵀ`` (symmetric, with ``a`` read from its ``lower`` or upper
    triangle), so that ``c u = w u`` and ``v = L⁻ᵀ u`` (normalised as SciPy: ``vᵀ b v = I``)."""
    a = _basic.as_tensor_variable(a)
    tri = "tril" if lower else "triu"
    strict = _core.matrix_fn(tri, a, -1 if lower else 1)
    a_sym = _core.matrix_fn(tri, a, 0) + _core.matrix_fn("matrix_transpose", strict)
    factor = cholesky(b, lower=lower, on_error="raise")
    low = factor if lower else _core.matrix_fn("matrix_transpose", factor)
    half = solve_triangular(low, a_sym, lower=True)
    c = solve_triangular(low, _core.matrix_fn("matrix_transpose", half), lower=True)
    return c, low


def eigh(a, b=None, lower=True, UPLO=None, driver="evr"):
    """``(w, v)``: ascending eigenvalues and orthonormal eigenvectors of a symmetric matrix,
    reading the ``lower`` (or upper) triangle (``scipy.linalg.eigh``). With ``b`` (symmetric
    positive definite), the generalised problem ``a v = w b v`` through the Cholesky factor
    of ``b``; the eigenvectors are ``b``-orthonormal, as SciPy's."""
    lower = _lower(lower, UPLO)
    if b is None:
        w, v = _core.linalg("eigh", [a], lower=lower)
        return w, v
    c, low = _generalized(a, b, lower)
    w, u = _core.linalg("eigh", [c], lower=True)
    return w, solve_triangular(low, u, lower=True, trans=1)


def eigvalsh(a, b=None, lower=True):
    """Ascending eigenvalues of a symmetric matrix (``scipy.linalg.eigvalsh``), or of the
    generalised problem ``a v = w b v``."""
    if b is None:
        return _one("eigvalsh", [a], lower=bool(lower))
    c, _ = _generalized(a, b, bool(lower))
    return _one("eigvalsh", [c], lower=True)


def svd(a, full_matrices=True, compute_uv=True):
    """``(u, s, vh)`` (or ``s`` without ``compute_uv``), like ``numpy.linalg.svd``."""
    outs = _core.linalg(
        "svd", [a], full_matrices=bool(full_matrices), compute_uv=bool(compute_uv)
    )
    return tuple(outs) if compute_uv else outs[0]


def qr(A, mode="full", overwrite_a=False, pivoting=False, lwork=None):
    """QR decomposition, SciPy's modes: ``"full"`` / ``"complete"`` (``q`` square),
    ``"economic"`` / ``"reduced"``, ``"r"`` (``r`` only)."""
    if pivoting:
        raise NotImplementedError("qr: pivoting is not supported")
    if mode == "raw":
        raise NotImplementedError("qr: mode='raw' is not supported")
    outs = _core.linalg("qr", [A], mode=str(mode))
    return outs[0] if mode == "r" else tuple(outs)


def expm(A):
    """Matrix exponential (``scipy.linalg.expm``)."""
    return _one("expm", [A])


def solve_sylvester(A, B, Q):
    """``X`` with ``A X + X B = Q`` (``scipy.linalg.solve_sylvester``)."""
    return _one("solve_sylvester", [A, B, Q])


def solve_continuous_lyapunov(A, Q):
    """``X`` with ``A X + X A^T = Q`` (``scipy.linalg.solve_continuous_lyapunov``)."""
    return _one("solve_continuous_lyapunov", [A, Q])


def solve_discrete_lyapunov(A, Q, method="bilinear"):
    """``X`` with ``A X A^T - X + Q = 0`` (``scipy.linalg.solve_discrete_lyapunov``)."""
    return _one("solve_discrete_lyapunov", [A, Q])


def trace(x):
    """Sum of the diagonal of the last two dimensions."""
    return _core.matrix_fn("trace", x)


def matrix_dot(*args):
    """The product of several matrices, left to right."""
    out = args[0]
    for a in args[1:]:
        out = _math.matmul(out, a)
    return out


def matrix_power(M, n):
    """``M`` to the integer power ``n`` by repeated squaring (``numpy.linalg.matrix_power``);
    a negative ``n`` inverts first."""
    n = int(n)
    M = _basic.as_tensor_variable(M)
    if n < 0:
        M, n = inv(M), -n
    if n == 0:
        eye = _basic.eye(M.shape[-1], dtype=M.dtype)
        return eye + _basic.zeros_like(M)
    result = None
    base = M
    while n:
        if n & 1:
            result = base if result is None else _math.matmul(result, base)
        n >>= 1
        if n:
            base = _math.matmul(base, base)
    return result


def kron(a, b):
    """Kronecker product (``numpy.kron``), as broadcasting products and a reshape."""
    a, b = _basic.as_tensor_variable(a), _basic.as_tensor_variable(b)
    nd = builtins.max(a.ndim, b.ndim)
    if a.ndim < nd:
        a = _basic.shape_padleft(a, nd - a.ndim)
    if b.ndim < nd:
        b = _basic.shape_padleft(b, nd - b.ndim)
    # a[i, j, …] b[k, l, …] at index (i, k, j, l, …): interleave the axes.
    a_pat, b_pat = [], []
    for d in range(nd):
        a_pat += [d, "x"]
        b_pat += ["x", d]
    prod = a.dimshuffle(*a_pat) * b.dimshuffle(*b_pat)
    return _basic.reshape(prod, [a.shape[d] * b.shape[d] for d in range(nd)], ndim=nd)


def block_diag(*matrices):
    """The block-diagonal matrix of 2-d ``matrices`` (``scipy.linalg.block_diag``), built
    from joins of the blocks and zeros."""
    ms = [_basic.as_tensor_variable(m) for m in matrices]
    if not ms:
        raise ValueError("block_diag needs at least one matrix")
    if any(m.ndim != 2 for m in ms):
        raise ValueError("block_diag: every block must be a matrix (2-d)")
    dtype = np.result_type(*[np.dtype(m.dtype) for m in ms]).name
    rows = []
    for i, m in enumerate(ms):
        parts = [
            _basic.cast(m, dtype) if i == j else _basic.zeros((m.shape[0], o.shape[1]), dtype=dtype)
            for j, o in enumerate(ms)
        ]
        rows.append(_basic.concatenate(parts, axis=1))
    return _basic.concatenate(rows, axis=0)


def lstsq(a, b, rcond=None):
    """``(x, residuals, rank, s)`` like ``numpy.linalg.lstsq``, from ``pinv`` and ``svd``:
    ``x = pinv(a) @ b``; ``residuals`` are the squared residual norms per column (NumPy
    returns an empty array when ``a`` is rank-deficient or not tall; here they are always
    computed); ``rank`` counts singular values above ``rcond · max(s)`` (NumPy's default
    ``rcond`` is ``eps · max(m, n)``)."""
    a, b = _basic.as_tensor_variable(a), _basic.as_tensor_variable(b)
    x = _math.matmul(pinv(a), b)
    r = b - _math.matmul(a, x)
    residuals = _math.sum(r * r, axis=0)
    s = svd(a, compute_uv=False)
    if rcond is None:
        eps = np.finfo("float32" if s.dtype == "float32" else "float64").eps
        cutoff = _math.max(s) * eps * _math.maximum(a.shape[0], a.shape[1])
    else:
        cutoff = _math.max(s) * rcond
    rank = _math.sum(_math.gt(s, cutoff), axis=None)
    return x, residuals, _basic.cast(rank, "int32"), s


def _vector_norm(x, ord, axis, keepdims):
    ax = _math.abs(x)
    if ord is None or ord == 2:
        return _math.sqrt(_math.sum(x * x, axis=axis, keepdims=keepdims))
    if ord in (float("inf"), "inf"):
        return _math.max(ax, axis=axis, keepdims=keepdims)
    if ord in (float("-inf"), "-inf"):
        return _math.min(ax, axis=axis, keepdims=keepdims)
    if ord == 0:
        return _math.sum(_math.neq(x, 0), axis=axis, keepdims=keepdims).astype(
            "float64" if x.dtype != "float32" else "float32"
        )
    if ord == 1:
        return _math.sum(ax, axis=axis, keepdims=keepdims)
    p = float(ord)
    return _math.sum(ax**p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def _matrix_norm(x, ord, axis, keepdims):
    r, c = axis
    if ord in (None, "fro", "f"):
        return _math.sqrt(_math.sum(x * x, axis=(r, c), keepdims=keepdims))
    ax = _math.abs(x)
    if ord in (1, -1):
        col_sums = _math.sum(ax, axis=r, keepdims=True)
        red = _math.max if ord == 1 else _math.min
        return red(col_sums, axis=(r, c), keepdims=keepdims)
    if ord in (float("inf"), "inf", float("-inf"), "-inf"):
        row_sums = _math.sum(ax, axis=c, keepdims=True)
        red = _math.max if ord in (float("inf"), "inf") else _math.min
        return red(row_sums, axis=(r, c), keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        nd = x.ndim
        rest = [d for d in range(nd) if d not in (r, c)]
        s = svd(_basic.transpose(x, rest + [r, c]), compute_uv=False)
        out = {"nuc": _math.sum, 2: _math.max, -2: _math.min}[ord](s, axis=-1)
        if keepdims:
            for d in sorted((r, c)):
                out = _basic.expand_dims(out, d)
        return out
    raise ValueError(f"norm: invalid ord {ord!r} for a matrix norm")


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm (``numpy.linalg.norm``), built from reductions (and ``svd`` for
    the spectral and nuclear norms)."""
    x = _basic.as_tensor_variable(x)
    if x.dtype not in ("float32", "float64"):
        x = _basic.cast(x, "float64")
    if isinstance(ord, str) and ord not in ("fro", "f", "nuc", "inf", "-inf"):
        raise ValueError(f"norm: invalid ord {ord!r}")
    if axis is None:
        if ord is None:
            return _math.sqrt(_math.sum(x * x, keepdims=keepdims))
        if x.ndim == 1:
            axis = (0,)
        elif x.ndim == 2:
            axis = (0, 1)
        else:
            raise ValueError("norm: give axis for an ord other than None on a tensor of rank > 2")
    if isinstance(axis, int):
        axis = (axis,)
    axis = tuple(a % x.ndim for a in axis)
    if len(axis) == 1:
        if ord in ("fro", "f", "nuc"):
            raise ValueError(f"norm: ord {ord!r} needs a matrix (two axes)")
        return _vector_norm(x, ord, axis[0], keepdims)
    if len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    raise ValueError("norm: axis must name one or two axes")


def _prod(xs):
    out = None
    for v in xs:
        out = v if out is None else out * v
    return out


def tensorinv(a, ind=2):
    """The inverse of ``a`` seen as a linear map from its trailing to its leading ``ind``
    axes (``numpy.linalg.tensorinv``), via reshapes and ``inv``."""
    a = _basic.as_tensor_variable(a)
    lead = [a.shape[d] for d in range(ind)]
    trail = [a.shape[d] for d in range(ind, a.ndim)]
    m = _basic.reshape(a, [_prod(lead), _prod(trail)], ndim=2)
    return _basic.reshape(inv(m), trail + lead, ndim=a.ndim)


def tensorsolve(a, b, axes=None):
    """``x`` with ``tensordot(a, x, x.ndim) = b`` (``numpy.linalg.tensorsolve``), via
    reshapes and ``solve``."""
    a, b = _basic.as_tensor_variable(a), _basic.as_tensor_variable(b)
    if axes is not None:
        axes = [ax % a.ndim for ax in axes]
        rest = [d for d in range(a.ndim) if d not in axes]
        a = _basic.transpose(a, rest + axes)
    nb = b.ndim
    lead = [a.shape[d] for d in range(nb)]
    trail = [a.shape[d] for d in range(nb, a.ndim)]
    m = _basic.reshape(a, [_prod(lead), _prod(trail)], ndim=2)
    x = solve(m, _basic.flatten(b, 1), b_ndim=1)
    return _basic.reshape(x, trail, ndim=len(trail))
