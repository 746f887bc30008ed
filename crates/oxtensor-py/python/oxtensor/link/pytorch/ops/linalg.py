"""Linear algebra (``Op::Linalg``) through ``torch.linalg``, batched over leading dimensions
as the graph's gufunc signatures say. Inputs compute in the output's float dtype. Where
oxtensor raises at run time (a singular matrix, ``cholesky`` of an indefinite one), torch
raises its own ``torch.linalg`` error; with ``on_error="nan"`` Cholesky gives NaNs as ours.
Pivots follow SciPy (0-based), torch's LAPACK ones are 1-based."""

from __future__ import annotations

import torch

from oxtensor.link.pytorch.dispatch import out_dtypes, register, tensor, torch_dtype

la = torch.linalg


def _mT(x):
    return x.transpose(-1, -2)


def _sym(a, lower):
    """The symmetric matrix one triangle of ``a`` stands for."""
    tri = torch.tril(a) if lower else torch.triu(a)
    return tri + _mT(tri) - torch.diag_embed(torch.diagonal(a, dim1=-2, dim2=-1))


def _cholesky(op):
    lower, nan = op["lower"], op.get("nan_on_error", False)

    def go(a):
        c, info = la.cholesky_ex(a, upper=not lower)
        if nan:
            bad = (info != 0)[..., None, None]
            return torch.where(bad, torch.full_like(c, float("nan")), c)
        if bool((info != 0).any()):
            raise ValueError("cholesky: the matrix is not positive definite")
        return c

    return go


def _with_vector(b_ndim, fn):
    """``fn`` on matrix right-hand sides; a vector one (``b_ndim == 1``) gains a column."""

    def go(a, b):
        if b_ndim == 1:
            return fn(a, b[..., None])[..., 0]
        return fn(a, b)

    return go


def _batch(a, b):
    shape = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return a.expand(shape + a.shape[-2:]), b.expand(shape + b.shape[-2:])


def _kron(a, b):
    m, n = a.shape[-2:]
    p, q = b.shape[-2:]
    out = a[..., :, None, :, None] * b[..., None, :, None, :]
    return out.reshape(out.shape[:-4] + (m * p, n * q))


def _vec_solve(big, q, rows, cols):
    # vec stacks columns: vec(X) of an (rows, cols) X is X's transpose flattened.
    vec_q = _mT(q).reshape(q.shape[:-2] + (rows * cols,))
    x = la.solve(big, vec_q[..., None])[..., 0]
    return _mT(x.reshape(x.shape[:-1] + (cols, rows)))


def _sylvester(a, b, q):
    # a X + X b = q  <=>  (I ⊗ a + bᵀ ⊗ I) vec(X) = vec(q).
    m, n = a.shape[-1], b.shape[-1]
    eye_m, eye_n = torch.eye(m, dtype=a.dtype), torch.eye(n, dtype=a.dtype)
    return _vec_solve(_kron(eye_n, a) + _kron(_mT(b), eye_m), q, m, n)


def _discrete_lyapunov(a, q):
    # a X aᵀ − X + q = 0  <=>  (I − a ⊗ a) vec(X) = vec(q).
    m = a.shape[-1]
    return _vec_solve(torch.eye(m * m, dtype=a.dtype) - _kron(a, a), q, m, m)


def _solve(op):
    lower, trans, assume = op["lower"], op["transposed"], op["assume_a"]

    def fn(a, b):
        if assume != "gen":
            a = _sym(a, lower)
        if trans:
            a = _mT(a)
        return la.solve(*_batch(a, b))

    return _with_vector(op["b_ndim"], fn)


def _solve_triangular(op):
    lower, trans, unit = op["lower"], op["trans"], op["unit_diagonal"]

    def fn(a, b):
        a, b = _batch(a, b)
        if trans:
            a, lower_now = _mT(a), not lower
        else:
            lower_now = lower
        return la.solve_triangular(a, b, upper=not lower_now, unitriangular=unit)

    return _with_vector(op["b_ndim"], fn)


def _cho_solve(op):
    lower = op["lower"]
    return _with_vector(op["b_ndim"], lambda c, b: torch.cholesky_solve(*reversed(_batch(c, b)), upper=not lower))


def _lu_solve(op):
    trans = bool(op["trans"])

    def go(lu, piv, b):
        pivots = (piv + 1).to(torch.int32)
        if b.ndim == lu.ndim - 1:
            return la.lu_solve(lu, pivots, b[..., None], adjoint=trans)[..., 0]
        return la.lu_solve(lu, pivots, b, adjoint=trans)

    return go


def _qr(op):
    mode = op["mode"]

    def go(a):
        q, r = la.qr(a, mode=mode)
        return (r,) if mode == "r" else (q, r)

    return go


def _svd(op):
    def go(a):
        if op["compute_uv"]:
            return tuple(la.svd(a, full_matrices=op["full_matrices"]))
        return (la.svdvals(a),)

    return go


def _eig(a):
    w, v = la.eig(a)
    return (w.real, v.real)


def _lu(op):
    def go(a):
        p, lower, upper = la.lu(a)
        return (torch.argmax(p, dim=-1).to(torch.int32) if op["p_indices"] else p, lower, upper)

    return go


def _lu_factor(a):
    lu, piv = la.lu_factor(a)
    return (lu, (piv - 1).to(torch.int32))


def _one(fn):
    return lambda *xs: (fn(*xs),)


_TABLE = {
    "Cholesky": lambda op: _one(_cholesky(op)),
    "Solve": lambda op: _one(_solve(op)),
    "SolveTriangular": lambda op: _one(_solve_triangular(op)),
    "CholeskySolve": lambda op: _one(_cho_solve(op)),
    "LUSolve": lambda op: _one(_lu_solve(op)),
    "MatrixInverse": lambda op: _one(la.inv),
    "MatrixPinv": lambda op: _one(la.pinv),
    "Det": lambda op: _one(la.det),
    "SLogDet": lambda op: lambda a: tuple(la.slogdet(a)),
    "Eigh": lambda op: lambda a: tuple(la.eigh(a, UPLO="L" if op["lower"] else "U")),
    "Eigvalsh": lambda op: _one(lambda a: la.eigvalsh(a, UPLO="L" if op["lower"] else "U")),
    "Eig": lambda op: _eig,
    "SVD": _svd,
    "QR": _qr,
    "LU": _lu,
    "LUFactor": lambda op: _lu_factor,
    "Expm": lambda op: _one(la.matrix_exp),
    "Kron": lambda op: _one(_kron),
    "SolveSylvester": lambda op: _one(_sylvester),
    "SolveContinuousLyapunov": lambda op: _one(lambda a, q: _sylvester(a, _mT(a), q)),
    "SolveDiscreteLyapunov": lambda op: _one(_discrete_lyapunov),
}


@register("Linalg")
def _linalg(op, node, doc):
    name = op["name"]
    if name not in _TABLE:
        raise NotImplementedError(f"no PyTorch translation for op Linalg{{{name}}}")
    fn = _TABLE[name](op)
    dtypes = [torch_dtype(d) for d in out_dtypes(node)]
    work = next((d for d in dtypes if d.is_floating_point), torch.float64)

    def run(*xs):
        # Everything computes in the float dtype, but LUSolve's pivots (input 1) stay integers.
        xs = [tensor(x) if (name == "LUSolve" and i == 1) else tensor(x).to(work) for i, x in enumerate(xs)]
        return tuple(tensor(o).to(d) for o, d in zip(fn(*xs), dtypes))

    return run
