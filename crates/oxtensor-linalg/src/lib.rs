//! Dense linear-algebra kernels for oxtensor: the numeric side of PyTensor's `pt.linalg`,
//! computed with the pure-Rust `faer` crate.
//!
//! Every operation is a function `fn(&[&Tensor], params) -> Result<Vec<Tensor>, LinalgError>`
//! with a *core signature* (cholesky `(m,m)->(m,m)`, solve `(m,m),(m,n)->(m,n)`, det
//! `(m,m)->()`, …). Dimensions in front of the core ones are batch dimensions and broadcast
//! between the operands as in NumPy's generalised ufuncs (PyTensor's `Blockwise`); one
//! driver (the `batch` module) walks the broadcast batch, in parallel with rayon when it is
//! large. faer itself runs sequentially inside each batch element.
//!
//! Inputs that are all `float32` compute in `float32`; anything else (`float64`, integers,
//! booleans, or a mix) computes in `float64`, as `numpy.linalg` does. Integer outputs
//! (pivots, ranks, `p_indices`) are `int32`. The Sylvester/Lyapunov solvers compute in `f64`
//! internally and round to `float32` for `float32` inputs.
//!
//! Differences from SciPy/NumPy, all forced by batching or by oxtensor's dtypes:
//! - oxtensor has no complex dtype: [`eig`] returns real eigenpairs and reports a matrix with
//!   complex eigenvalues as [`LinalgError::Unsupported`];
//! - [`qr`] has no `'raw'` mode; [`lstsq`]'s residuals have a shape fixed by the input shapes;
//! - [`kron`] and [`norm`] work on the trailing one or two axes (leading axes are batch axes);
//!   callers move other axes there first;
//! - [`solve`]'s `assume_a` covers general, symmetric, positive definite, tridiagonal and
//!   banded matrices (no diagonal variant: callers divide).
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

/// Calls the generic `imp::<T>` for the float dtype an op computes in.
macro_rules! by_dtype {
    ($dt:expr, $f:ident ( $($arg:expr),* )) => {
        match $dt {
            oxtensor_data::DType::F32 => $f::<f32>($($arg),*),
            _ => $f::<f64>($($arg),*),
        }
    };
}

mod banded;
mod batch;
mod bidiag_dc;
mod bidiag_svals;
mod construct;
mod decomp;
mod dqds;
mod error;
mod matfn;
mod qr_factor;
mod real;
mod reduce;
mod schur;
mod secular;
mod small;
mod solve;
mod svd_dc;
mod sylvester;
mod tridiag;
mod tridiag_eigvals;
mod util;
mod workspace;

pub use construct::{block_diag, kron};
pub use decomp::{
    CholeskyParams, OnError, QrMode, SvdParams, cholesky, eig, eigh, eigvalsh, lu, lu_factor, qr,
    svd,
};
pub use error::LinalgError;
pub use matfn::{expm, matrix_power};
pub use real::Real;
pub use reduce::{NormOrd, det, norm, slogdet};
pub use solve::{
    AssumeA, ChoSolveParams, LstsqParams, LuSolveParams, SolveParams, SolveTriangularParams, Trans,
    cho_solve, inv, lstsq, lu_solve, pinv, solve, solve_triangular,
};
pub use sylvester::{solve_continuous_lyapunov, solve_discrete_lyapunov, solve_sylvester};
pub use workspace::Workspace;
