//! Linear-algebra builders: one function per [`LinalgOp`] under its PyTensor name, with
//! PyTensor's defaults (`b_ndim` inferred as `min(b.ndim, 2)`), and the matrix helpers built
//! from existing ops (`matrix_transpose`, `tril`, `triu`, `diagonal`, `diag_embed`, `trace`).
//! Every op acts on the trailing (core) dimensions; leading dimensions are batch dimensions.

use super::{Built, Scalar, arange, dimshuffle, elemwise, shape_i, sum, switch, weak_constant};
use crate::{AssumeA, GraphError, LinalgOp, Op, QrMode, ScalarOp, Var};
use oxtensor_data::DType;
use smallvec::SmallVec;

/// Applies a linear-algebra op, returning all its outputs.
#[track_caller]
pub fn linalg(op: LinalgOp, inputs: &[Var]) -> Result<SmallVec<[Var; 1]>, GraphError> {
    Var::apply(Op::Linalg(op), inputs)
}

/// Applies a single-output linear-algebra op.
#[track_caller]
fn one(op: LinalgOp, inputs: &[Var]) -> Built {
    Ok(linalg(op, inputs)?.remove(0))
}

/// Applies a two-output linear-algebra op.
#[track_caller]
fn two(op: LinalgOp, inputs: &[Var]) -> Result<(Var, Var), GraphError> {
    let mut o = linalg(op, inputs)?.into_iter();
    match (o.next(), o.next()) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(GraphError::Invalid {
            op: "linalg".into(),
            message: "expected two outputs".into(),
        }),
    }
}

/// PyTensor's default core rank of a right-hand side: 1 for a vector, else 2. Checks an
/// explicit value is 1 or 2.
fn b_ndim(b: &Var, given: Option<usize>) -> Result<usize, GraphError> {
    match given {
        None => Ok(b.ndim().clamp(1, 2)),
        Some(n @ (1 | 2)) => Ok(n),
        Some(n) => Err(GraphError::Invalid {
            op: "solve".into(),
            message: format!("b_ndim must be 1 or 2, got {n}"),
        }),
    }
}

/// `scipy.linalg.cholesky(a, lower)`; NaNs (`nan_on_error`, PyTensor's default) or a run-time
/// error for a matrix that is not positive definite.
#[track_caller]
pub fn cholesky(a: &Var, lower: bool, nan_on_error: bool) -> Built {
    one(
        LinalgOp::Cholesky {
            lower,
            nan_on_error,
        },
        std::slice::from_ref(a),
    )
}

/// `scipy.linalg.solve(a, b, assume_a, lower, transposed)`; `b_ndim` as in PyTensor.
#[track_caller]
pub fn solve(
    a: &Var,
    b: &Var,
    assume_a: AssumeA,
    lower: bool,
    transposed: bool,
    b_ndim_: Option<usize>,
) -> Built {
    let op = LinalgOp::Solve {
        assume_a,
        lower,
        transposed,
        b_ndim: b_ndim(b, b_ndim_)?,
    };
    one(op, &[a.clone(), b.clone()])
}

/// `scipy.linalg.solve_triangular(a, b, trans, lower, unit_diagonal)`.
#[track_caller]
pub fn solve_triangular(
    a: &Var,
    b: &Var,
    trans: bool,
    lower: bool,
    unit_diagonal: bool,
    b_ndim_: Option<usize>,
) -> Built {
    let op = LinalgOp::SolveTriangular {
        lower,
        trans,
        unit_diagonal,
        b_ndim: b_ndim(b, b_ndim_)?,
    };
    one(op, &[a.clone(), b.clone()])
}

/// `scipy.linalg.cho_solve((c, lower), b)`.
#[track_caller]
pub fn cho_solve(c: &Var, b: &Var, lower: bool, b_ndim_: Option<usize>) -> Built {
    let op = LinalgOp::ChoSolve {
        lower,
        b_ndim: b_ndim(b, b_ndim_)?,
    };
    one(op, &[c.clone(), b.clone()])
}

/// `scipy.linalg.lu_solve((lu, piv), b, trans)`.
#[track_caller]
pub fn lu_solve(lu: &Var, piv: &Var, b: &Var, trans: bool, b_ndim_: Option<usize>) -> Built {
    let op = LinalgOp::LuSolve {
        trans,
        b_ndim: b_ndim(b, b_ndim_)?,
    };
    one(op, &[lu.clone(), piv.clone(), b.clone()])
}

/// `numpy.linalg.inv`.
#[track_caller]
pub fn inv(a: &Var) -> Built {
    one(LinalgOp::Inv, std::slice::from_ref(a))
}

/// `numpy.linalg.pinv`.
#[track_caller]
pub fn pinv(a: &Var) -> Built {
    one(LinalgOp::Pinv, std::slice::from_ref(a))
}

/// `numpy.linalg.det`.
#[track_caller]
pub fn det(a: &Var) -> Built {
    one(LinalgOp::Det, std::slice::from_ref(a))
}

/// `numpy.linalg.slogdet`: `(sign, logabsdet)`.
#[track_caller]
pub fn slogdet(a: &Var) -> Result<(Var, Var), GraphError> {
    two(LinalgOp::SLogDet, std::slice::from_ref(a))
}

/// `scipy.linalg.eigh(a, lower)`: `(w, v)`.
#[track_caller]
pub fn eigh(a: &Var, lower: bool) -> Result<(Var, Var), GraphError> {
    two(LinalgOp::Eigh { lower }, std::slice::from_ref(a))
}

/// `scipy.linalg.eigvalsh(a, lower)`.
#[track_caller]
pub fn eigvalsh(a: &Var, lower: bool) -> Built {
    one(LinalgOp::Eigvalsh { lower }, std::slice::from_ref(a))
}

/// `numpy.linalg.eig` for real eigenvalues: `(w, v)`.
#[track_caller]
pub fn eig(a: &Var) -> Result<(Var, Var), GraphError> {
    two(LinalgOp::Eig, std::slice::from_ref(a))
}

/// `numpy.linalg.svd(a, full_matrices, compute_uv)`: `[u, s, vh]`, or `[s]`.
#[track_caller]
pub fn svd(
    a: &Var,
    full_matrices: bool,
    compute_uv: bool,
) -> Result<SmallVec<[Var; 1]>, GraphError> {
    let op = LinalgOp::Svd {
        full_matrices,
        compute_uv,
    };
    linalg(op, std::slice::from_ref(a))
}

/// `numpy.linalg.qr(a, mode)`: `[q, r]`, or `[r]`.
#[track_caller]
pub fn qr(a: &Var, mode: QrMode) -> Result<SmallVec<[Var; 1]>, GraphError> {
    linalg(LinalgOp::Qr { mode }, std::slice::from_ref(a))
}

/// `scipy.linalg.lu(a, p_indices)`: `[p, l, u]`.
#[track_caller]
pub fn lu(a: &Var, p_indices: bool) -> Result<SmallVec<[Var; 1]>, GraphError> {
    linalg(LinalgOp::Lu { p_indices }, std::slice::from_ref(a))
}

/// `scipy.linalg.lu_factor(a)`: `(lu, piv)`.
#[track_caller]
pub fn lu_factor(a: &Var) -> Result<(Var, Var), GraphError> {
    two(LinalgOp::LuFactor, std::slice::from_ref(a))
}

/// `scipy.linalg.expm`.
#[track_caller]
pub fn expm(a: &Var) -> Built {
    one(LinalgOp::Expm, std::slice::from_ref(a))
}

/// Kronecker product of the trailing matrices.
#[track_caller]
pub fn kron(a: &Var, b: &Var) -> Built {
    one(LinalgOp::Kron, &[a.clone(), b.clone()])
}

/// `scipy.linalg.solve_sylvester(a, b, q)`.
#[track_caller]
pub fn solve_sylvester(a: &Var, b: &Var, q: &Var) -> Built {
    one(LinalgOp::SolveSylvester, &[a.clone(), b.clone(), q.clone()])
}

/// `scipy.linalg.solve_continuous_lyapunov(a, q)`.
#[track_caller]
pub fn solve_continuous_lyapunov(a: &Var, q: &Var) -> Built {
    one(LinalgOp::SolveContinuousLyapunov, &[a.clone(), q.clone()])
}

/// `scipy.linalg.solve_discrete_lyapunov(a, q)`.
#[track_caller]
pub fn solve_discrete_lyapunov(a: &Var, q: &Var) -> Built {
    one(LinalgOp::SolveDiscreteLyapunov, &[a.clone(), q.clone()])
}

fn need_matrix(what: &str, x: &Var) -> Result<(), GraphError> {
    if x.ndim() < 2 {
        return Err(GraphError::Invalid {
            op: what.into(),
            message: format!(
                "{} has {} dimensions, expected at least 2",
                x.describe(),
                x.ndim()
            ),
        });
    }
    Ok(())
}

/// `x` with its last two dimensions swapped (`x.mT`).
#[track_caller]
pub fn matrix_transpose(x: &Var) -> Built {
    need_matrix("matrix_transpose", x)?;
    let n = x.ndim();
    let mut order: Vec<Option<usize>> = (0..n).map(Some).collect();
    order.swap(n - 2, n - 1);
    dimshuffle(x, &order)
}

/// The boolean `(rows, cols)` mask of `j - i <= k` (`upper = false`) or `j - i >= k`
/// (`eq`: `j - i == k`).
fn band(rows: &Var, cols: &Var, k: i64, cmp: ScalarOp) -> Built {
    let (zero, one_) = (Var::int_constant(0), Var::int_constant(1));
    let i = arange(&zero, rows, &one_, DType::I64)?;
    let j = arange(&zero, cols, &one_, DType::I64)?;
    let diff = elemwise(
        ScalarOp::Sub,
        &[
            dimshuffle(&j, &[None, Some(0)])?,
            dimshuffle(&i, &[Some(0), None])?,
        ],
    )?;
    elemwise(cmp, &[diff, Var::int_constant(k)])
}

/// [`band`] over the last two dimensions of `x`.
fn band_mask(x: &Var, k: i64, cmp: ScalarOp) -> Built {
    let n = x.ndim();
    band(&shape_i(x, n - 2)?, &shape_i(x, n - 1)?, k, cmp)
}

/// Zeroes `x` outside the mask (keeping NaNs inside it).
fn masked(x: &Var, mask: &Var) -> Built {
    let zero = weak_constant(Scalar::Int(0), x.dtype());
    switch(mask, x, &zero)
}

/// `np.tril(x, k)` on the last two dimensions.
#[track_caller]
pub fn tril(x: &Var, k: i64) -> Built {
    need_matrix("tril", x)?;
    masked(x, &band_mask(x, k, ScalarOp::Le)?)
}

/// `np.triu(x, k)` on the last two dimensions.
#[track_caller]
pub fn triu(x: &Var, k: i64) -> Built {
    need_matrix("triu", x)?;
    masked(x, &band_mask(x, k, ScalarOp::Ge)?)
}

/// `x` with the diagonal of its last two dimensions set to zero.
#[track_caller]
pub fn zero_diagonal(x: &Var) -> Built {
    need_matrix("zero_diagonal", x)?;
    masked(x, &band_mask(x, 0, ScalarOp::Neq)?)
}

/// The `k`-th diagonal of the last two dimensions, as the last dimension
/// (`np.diagonal(x, k, -2, -1)`): gathered from the flattened matrix at `i·(c+1) + k` (or
/// `(i−k)·c + i` below the main diagonal), so any extents work, also symbolic ones.
#[track_caller]
pub fn diagonal_k(x: &Var, k: i64) -> Built {
    need_matrix("diagonal", x)?;
    let n = x.ndim();
    let (r, c) = (shape_i(x, n - 2)?, shape_i(x, n - 1)?);
    let int = |v: i64| Var::int_constant(v);
    let zero = int(0);
    // Length: clip(min(r - max(-k, 0), c - max(k, 0)), 0).
    let rows = elemwise(ScalarOp::Sub, &[r.clone(), int((-k).max(0))])?;
    let cols = elemwise(ScalarOp::Sub, &[c.clone(), int(k.max(0))])?;
    let len = elemwise(ScalarOp::Minimum, &[rows, cols])?;
    let len = elemwise(ScalarOp::Maximum, &[len, zero.clone()])?;
    let i = arange(&zero, &len, &int(1), DType::I64)?;
    let stride = elemwise(ScalarOp::Add, &[c.clone(), int(1)])?;
    let start = if k >= 0 {
        int(k)
    } else {
        elemwise(ScalarOp::Mul, &[int(-k), c.clone()])?
    };
    let idx = elemwise(
        ScalarOp::Add,
        &[elemwise(ScalarOp::Mul, &[i, stride])?, start],
    )?;
    let mut dims: Vec<Var> = (0..n - 2)
        .map(|d| shape_i(x, d))
        .collect::<Result<_, _>>()?;
    dims.push(elemwise(ScalarOp::Mul, &[r, c])?);
    let flat = super::reshape_sym(x, &dims)?;
    super::take(&flat, &idx, -1)
}

/// The main diagonal of the last two dimensions ([`diagonal_k`] with `k = 0`).
#[track_caller]
pub fn diagonal(x: &Var) -> Built {
    diagonal_k(x, 0)
}

/// The vector `v` (last dimension) as the diagonal of a square matrix (batched `np.diag`).
#[track_caller]
pub fn diag_embed(v: &Var) -> Built {
    if v.ndim() == 0 {
        return Err(GraphError::Invalid {
            op: "diag".into(),
            message: format!("{} is a scalar; expected a vector", v.describe()),
        });
    }
    let n = v.ndim();
    let mut order: Vec<Option<usize>> = (0..n).map(Some).collect();
    order.push(None);
    let col = dimshuffle(v, &order)?;
    let m = shape_i(v, n - 1)?;
    masked(&col, &band(&m, &m, 0, ScalarOp::Eq)?)
}

/// `np.trace` of the last two dimensions (sum of the diagonal).
#[track_caller]
pub fn trace(x: &Var) -> Built {
    sum(&diagonal(x)?, Some(&[-1]), false)
}
