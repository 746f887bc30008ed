"""Linear algebra (``Op::Linalg``) through ``jnp.linalg``, ``jax.lax.linalg`` and
``jax.scipy.linalg``, batched over leading dimensions as the graph's gufunc signatures say.
Inputs compute in the output's float dtype. Where oxtensor raises at run time (a singular
matrix, ``cholesky`` of an indefinite one without ``on_error="nan"``) JAX cannot: it gives
NaNs or infinities instead."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np

from oxtensor.link.jax.dispatch import out_dtypes, register


def _mT(x):
    return jnp.swapaxes(x, -1, -2)


def _sym(a, lower):
    """The symmetric matrix one triangle of ``a`` stands for."""
    tri = jnp.tril(a) if lower else jnp.triu(a)
    return tri + _mT(tri) - jnp.eye(a.shape[-1], dtype=a.dtype) * a


def _cholesky(a, lower):
    # lax reads the lower triangle; an upper factor of a is the transposed lower one of aᵀ.
    if lower:
        return jax.lax.linalg.cholesky(a, symmetrize_input=False)
    return _mT(jax.lax.linalg.cholesky(_mT(a), symmetrize_input=False))


def _with_vector(b_ndim, fn):
    """``fn`` on matrix right-hand sides; a vector one (``b_ndim == 1``) gains a column."""

    def go(a, b):
        if b_ndim == 1:
            return fn(a, b[..., None])[..., 0]
        return fn(a, b)

    return go


def _batch(a, b, core_a=2, core_b=2):
    shape = jnp.broadcast_shapes(a.shape[:-core_a], b.shape[:-core_b])
    return (
        jnp.broadcast_to(a, shape + a.shape[-core_a:]),
        jnp.broadcast_to(b, shape + b.shape[-core_b:]),
    )


def _kron(a, b):
    m, n = a.shape[-2:]
    p, q = b.shape[-2:]
    out = a[..., :, None, :, None] * b[..., None, :, None, :]
    return out.reshape(out.shape[:-4] + (m * p, n * q))


def _sylvester(a, b, q):
    # a X + X b = q  <=>  (I ⊗ a + bᵀ ⊗ I) vec(X) = vec(q), vec stacking columns.
    m, n = a.shape[-1], b.shape[-1]
    big = _kron(jnp.eye(n, dtype=a.dtype), a) + _kron(_mT(b), jnp.eye(m, dtype=a.dtype))
    vec_q = _mT(q).reshape(q.shape[:-2] + (m * n,))
    x = jnp.linalg.solve(big, vec_q[..., None])[..., 0]
    return _mT(x.reshape(x.shape[:-1] + (n, m)))


def _discrete_lyapunov(a, q):
    # a X aᵀ − X + q = 0  <=>  (I − a ⊗ a) vec(X) = vec(q).
    m = a.shape[-1]
    big = jnp.eye(m * m, dtype=a.dtype) - _kron(a, a)
    vec_q = _mT(q).reshape(q.shape[:-2] + (m * m,))
    x = jnp.linalg.solve(big, vec_q[..., None])[..., 0]
    return _mT(x.reshape(x.shape[:-1] + (m, m)))


def _lu_indices(p):
    # scipy: a = p @ l @ u, row i of p has its one at column perm[i]: (p l)[i] = l[perm[i]].
    return jnp.argmax(p, axis=-1).astype(np.int32)


def _solve(op):
    lower, trans = op["lower"], op["transposed"]
    assume = op["assume_a"]

    def fn(a, b):
        if assume != "gen":
            a = _sym(a, lower)
        if trans:
            a = _mT(a)
        a, b = _batch(a, b)
        return jnp.linalg.solve(a, b)

    return _with_vector(op["b_ndim"], fn)


def _solve_triangular(op):
    def fn(a, b):
        a, b = _batch(a, b)
        return jax.lax.linalg.triangular_solve(
            a, b, left_side=True, lower=op["lower"], transpose_a=op["trans"], unit_diagonal=op["unit_diagonal"]
        )

    return _with_vector(op["b_ndim"], fn)


def _cho_solve(op):
    lower = op["lower"]

    def fn(c, b):
        c, b = _batch(c, b)
        return jsl.cho_solve((c, lower), b)

    return _with_vector(op["b_ndim"], fn)


def _lu_solve(op):
    trans = 1 if op["trans"] else 0

    def go(lu, piv, b):
        return jsl.lu_solve((lu, piv.astype(np.int32)), b, trans=trans)

    return go


def _qr(op):
    mode = op["mode"]

    def go(a):
        if mode == "r":
            return (jnp.linalg.qr(a, mode="r"),)
        return tuple(jnp.linalg.qr(a, mode=mode))

    return go


def _svd(op):
    def go(a):
        if op["compute_uv"]:
            u, s, vh = jnp.linalg.svd(a, full_matrices=op["full_matrices"])
            return (u, s, vh)
        return (jnp.linalg.svd(a, compute_uv=False),)

    return go


def _eig(a):
    w, v = jnp.linalg.eig(a)
    return (w.real, v.real)


def _lu(op):
    def go(a):
        p, l, u = jsl.lu(a)
        return (_lu_indices(p) if op["p_indices"] else p, l, u)

    return go


def _lu_factor(a):
    lu, piv = jsl.lu_factor(a)
    return (lu, piv.astype(np.int32))


def _one(fn):
    return lambda *xs: (fn(*xs),)


_TABLE = {
    "Cholesky": lambda op: _one(lambda a: _cholesky(a, op["lower"])),
    "Solve": lambda op: _one(_solve(op)),
    "SolveTriangular": lambda op: _one(_solve_triangular(op)),
    "CholeskySolve": lambda op: _one(_cho_solve(op)),
    "LUSolve": lambda op: _one(_lu_solve(op)),
    "MatrixInverse": lambda op: _one(jnp.linalg.inv),
    "MatrixPinv": lambda op: _one(jnp.linalg.pinv),
    "Det": lambda op: _one(jnp.linalg.det),
    "SLogDet": lambda op: lambda a: tuple(jnp.linalg.slogdet(a)),
    "Eigh": lambda op: lambda a: tuple(jnp.linalg.eigh(a, UPLO="L" if op["lower"] else "U")),
    "Eigvalsh": lambda op: _one(lambda a: jnp.linalg.eigvalsh(a, UPLO="L" if op["lower"] else "U")),
    "Eig": lambda op: _eig,
    "SVD": _svd,
    "QR": _qr,
    "LU": _lu,
    "LUFactor": lambda op: _lu_factor,
    "Expm": lambda op: _one(jsl.expm),
    "Kron": lambda op: _one(_kron),
    "SolveSylvester": lambda op: _one(_sylvester),
    "SolveContinuousLyapunov": lambda op: _one(lambda a, q: _sylvester(a, _mT(a), q)),
    "SolveDiscreteLyapunov": lambda op: _one(_discrete_lyapunov),
}


@register("Linalg")
def _linalg(op, node, doc):
    name = op["name"]
    if name not in _TABLE:
        raise NotImplementedError(f"no JAX translation for op Linalg{{{name}}}")
    fn = _TABLE[name](op)
    dtypes = out_dtypes(node)
    work = next((d for d in dtypes if np.issubdtype(d, np.floating)), np.dtype(np.float64))

    def run(*xs):
        # Everything computes in the float dtype, but LUSolve's pivots (input 1) stay integers.
        xs = [jnp.asarray(x) if (name == "LUSolve" and i == 1) else jnp.asarray(x).astype(work)
              for i, x in enumerate(xs)]
        return tuple(jnp.asarray(o).astype(d) for o, d in zip(fn(*xs), dtypes))

    return run
