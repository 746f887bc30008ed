//! Kernels of [`Op::Linalg`](oxtensor_graph::Op::Linalg): each [`LinalgOp`] calls its batched
//! kernel in `oxtensor-linalg` (faer underneath) with the op's static parameters, and turns
//! the kernel's errors into [`KernelError`]s (shapes that do not fit are shape errors; a
//! singular or indefinite matrix is a value error naming the argument).

use crate::KernelError;
use oxtensor_data::Tensor;
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

/// Computes `op` on `inputs` (any strides), one tensor per output.
pub(crate) fn linalg(op: &LinalgOp, inputs: &[&Tensor]) -> Result<Vec<Tensor>, KernelError> {
    let x = inputs;
    match op {
        LinalgOp::Cholesky {
            lower,
            nan_on_error,
        } => la::cholesky(
            x,
            &la::CholeskyParams {
                lower: *lower,
                on_error: if *nan_on_error {
                    la::OnError::Nan
                } else {
                    la::OnError::Raise
                },
            },
        ),
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
        } => la::solve_triangular(
            x,
            &la::SolveTriangularParams {
                lower: *lower,
                trans: trans(*t),
                unit_diagonal: *unit_diagonal,
                b_ndim: Some(*b_ndim),
            },
        ),
        LinalgOp::ChoSolve { lower, b_ndim } => la::cho_solve(
            x,
            &la::ChoSolveParams {
                lower: *lower,
                b_ndim: Some(*b_ndim),
            },
        ),
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
