//! Kernels of [`Op::Linalg`](oxtensor_graph::Op::Linalg): each [`LinalgOp`] calls its batched
//! kernel in `oxtensor-linalg` (faer underneath) with the op's static parameters, and turns
//! the kernel's errors into [`KernelError`]s (shapes that do not fit are shape errors; a
//! singular or indefinite matrix is a value error naming the argument).

use crate::KernelError;
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{AssumeA, LinalgOp, QrMode};
use oxtensor_linalg as la;

fn trans(t: bool) -> la::Trans {
    if t { la::Trans::T } else { la::Trans::N }
}

fn kernel_error(e: la::LinalgError) -> KernelError {
    match e {
        la::LinalgError::Shape { .. }
        | la::LinalgError::Broadcast { .. }
        | la::LinalgError::Arity { .. }
        | la::LinalgError::TooLarge { .. } => KernelError::Shape(e.to_string()),
        la::LinalgError::Value { .. } => KernelError::Index(e.to_string()),
        la::LinalgError::DType { .. }
        | la::LinalgError::Param { .. }
        | la::LinalgError::Singular { .. }
        | la::LinalgError::NotPositiveDefinite { .. }
        | la::LinalgError::NoConvergence { .. }
        | la::LinalgError::Unsupported { .. } => KernelError::Value(e.to_string()),
    }
}

/// The parameters of a `Cholesky` node.
fn cholesky_params(lower: bool, nan_on_error: bool) -> la::CholeskyParams {
    la::CholeskyParams {
        lower,
        on_error: if nan_on_error {
            la::OnError::Nan
        } else {
            la::OnError::Raise
        },
    }
}

/// The parameters of a `SolveTriangular` node.
fn triangular_params(
    lower: bool,
    t: bool,
    unit_diagonal: bool,
    b_ndim: usize,
) -> la::SolveTriangularParams {
    la::SolveTriangularParams {
        lower,
        trans: trans(t),
        unit_diagonal,
        b_ndim: Some(b_ndim),
    }
}

/// The parameters of a `ChoSolve` node.
fn cho_solve_params(lower: bool, b_ndim: usize) -> la::ChoSolveParams {
    la::ChoSolveParams {
        lower,
        b_ndim: Some(b_ndim),
    }
}

/// Computes `op` on `inputs` (any strides), one tensor per output.
pub(crate) fn linalg(op: &LinalgOp, inputs: &[&Tensor]) -> Result<Vec<Tensor>, KernelError> {
    let x = inputs;
    match op {
        LinalgOp::Cholesky {
            lower,
            nan_on_error,
        } => la::cholesky(x, &cholesky_params(*lower, *nan_on_error)),
        LinalgOp::Solve {
            assume_a,
            lower,
            transposed,
            b_ndim,
        } => la::solve(
            x,
            &la::SolveParams {
                assume_a: match assume_a {
                    AssumeA::General => la::AssumeA::General,
                    AssumeA::Symmetric => la::AssumeA::Symmetric,
                    AssumeA::PositiveDefinite => la::AssumeA::PositiveDefinite,
                    AssumeA::Tridiagonal => la::AssumeA::Tridiagonal,
                    AssumeA::Banded => la::AssumeA::Banded,
                },
                lower: *lower,
                transposed: *transposed,
                b_ndim: Some(*b_ndim),
            },
        ),
        LinalgOp::SolveTriangular {
            lower,
            trans: t,
            unit_diagonal,
            b_ndim,
        } => la::solve_triangular(x, &triangular_params(*lower, *t, *unit_diagonal, *b_ndim)),
        LinalgOp::ChoSolve { lower, b_ndim } => {
            la::cho_solve(x, &cho_solve_params(*lower, *b_ndim))
        }
        LinalgOp::Inv => la::inv(x),
        LinalgOp::Pinv => la::pinv(x, None),
        LinalgOp::Det => la::det(x),
        LinalgOp::SLogDet => la::slogdet(x),
        LinalgOp::Eigh { lower } => la::eigh(x, *lower),
        LinalgOp::Eigvalsh { lower } => la::eigvalsh(x, *lower),
        LinalgOp::Eig => la::eig(x),
        LinalgOp::Svd {
            full_matrices,
            compute_uv,
        } => la::svd(
            x,
            &la::SvdParams {
                full_matrices: *full_matrices,
                compute_uv: *compute_uv,
            },
        ),
        LinalgOp::Qr { mode } => la::qr(
            x,
            match mode {
                QrMode::Reduced => la::QrMode::Reduced,
                QrMode::Complete => la::QrMode::Complete,
                QrMode::R => la::QrMode::R,
            },
        ),
        LinalgOp::Lu { p_indices } => la::lu(x, *p_indices),
        LinalgOp::LuFactor => la::lu_factor(x),
        LinalgOp::LuSolve { trans: t, b_ndim } => la::lu_solve(
            x,
            &la::LuSolveParams {
                trans: trans(*t),
                b_ndim: Some(*b_ndim),
            },
        ),
        LinalgOp::Expm => la::expm(x),
        LinalgOp::Kron => la::kron(x),
        LinalgOp::SolveSylvester => la::solve_sylvester(x),
        LinalgOp::SolveContinuousLyapunov => la::solve_continuous_lyapunov(x),
        LinalgOp::SolveDiscreteLyapunov => la::solve_discrete_lyapunov(x),
    }
    .map_err(kernel_error)
}

/// The system an [`InPlaceLinalg`] solves or factors, with its extents.
enum InPlace {
    Cholesky(la::CholeskyParams, usize),
    ChoSolve(la::ChoSolveParams, usize, usize),
    SolveTriangular(la::SolveTriangularParams, usize, usize),
}

/// One `float64` linear algebra node without batch dimensions (`cholesky`, `cho_solve`,
/// `solve_triangular`) run on the caller's row-major buffers: the kernel the interpreter's
/// [`linalg`] runs for each matrix (`oxtensor_linalg::Workspace`), with its workspace kept
/// between calls, so a staged loop's host call computes each step allocating nothing and
/// getting the interpreter's values bit for bit.
pub struct InPlaceLinalg {
    op: InPlace,
    ws: la::Workspace,
}

impl InPlaceLinalg {
    /// The node `op` on operands of dtypes and extents `params` (C order), or `None` when it
    /// is another op, an operand is not `float64`, has batch dimensions or extents the op
    /// does not take (the interpreter's kernel then runs it, or reports the error).
    pub fn new(op: &LinalgOp, params: &[(DType, &[usize])]) -> Option<InPlaceLinalg> {
        if params.iter().any(|(d, _)| *d != DType::F64) {
            return None;
        }
        let shapes: Vec<&[usize]> = params.iter().map(|(_, s)| *s).collect();
        // A square `a` and a `b` of `b_ndim` dimensions and `a`'s rows: the extents of `x`.
        let system = |b_ndim: usize| match shapes[..] {
            [&[m, m2], b] if m == m2 && b.len() == b_ndim && b.first() == Some(&m) => {
                Some((m, b.get(1).copied().unwrap_or(1)))
            }
            _ => None,
        };
        let op = match *op {
            LinalgOp::Cholesky {
                lower,
                nan_on_error,
            } => match shapes[..] {
                [&[n, n2]] if n == n2 => InPlace::Cholesky(cholesky_params(lower, nan_on_error), n),
                _ => return None,
            },
            LinalgOp::ChoSolve { lower, b_ndim } => {
                let (m, k) = system(b_ndim)?;
                InPlace::ChoSolve(cho_solve_params(lower, b_ndim), m, k)
            }
            LinalgOp::SolveTriangular {
                lower,
                trans: t,
                unit_diagonal,
                b_ndim,
            } => {
                let (m, k) = system(b_ndim)?;
                let p = triangular_params(lower, t, unit_diagonal, b_ndim);
                InPlace::SolveTriangular(p, m, k)
            }
            _ => return None,
        };
        Some(InPlaceLinalg {
            op,
            ws: la::Workspace::new(),
        })
    }

    /// The number of elements of the output.
    pub fn out_len(&self) -> usize {
        match self.op {
            InPlace::Cholesky(_, n) => n * n,
            InPlace::ChoSolve(_, m, k) | InPlace::SolveTriangular(_, m, k) => m * k,
        }
    }

    /// Computes the node from `inputs` (each operand's elements in C order) into `out`
    /// ([`Self::out_len`] elements, C order); errors as the interpreter's kernel does.
    pub fn run(&mut self, inputs: &[&[f64]], out: &mut [f64]) -> Result<(), KernelError> {
        let done = match (&self.op, inputs) {
            (InPlace::Cholesky(p, n), [a]) => self.ws.cholesky(a, out, *n, p),
            (InPlace::ChoSolve(p, m, k), [c, b]) => self.ws.cho_solve(c, b, out, (*m, *k), p),
            (InPlace::SolveTriangular(p, m, k), [a, b]) => {
                self.ws.solve_triangular(a, b, out, (*m, *k), p)
            }
            _ => {
                return Err(KernelError::Value(format!(
                    "linear algebra in place: {} operands for this op",
                    inputs.len()
                )));
            }
        };
        done.map_err(kernel_error)
    }
}
