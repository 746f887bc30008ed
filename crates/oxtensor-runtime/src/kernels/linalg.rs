//! Kernels of [`Op::Linalg`](oxtensor_graph::Op::Linalg): each [`LinalgOp`] calls its batched
//! kernel in `oxtensor-linalg` (faer underneath) with the op's static parameters, and turns
//! the kernel's errors into [`KernelError`]s (shapes that do not fit are shape errors; a
//! singular or indefinite matrix is a value error naming the argument).

use crate::KernelError;
use oxtensor_data::{
    DType, StridedIndex, Tensor, broadcast_shapes, broadcast_strides, contiguous_strides,
};
use oxtensor_graph::{AssumeA, LinalgOp, QrMode};
use oxtensor_linalg as la;
use smallvec::SmallVec;

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

/// The parameters of a `Solve` node.
fn solve_params(
    assume_a: AssumeA,
    lower: bool,
    transposed: bool,
    b_ndim: usize,
) -> la::SolveParams {
    la::SolveParams {
        assume_a: match assume_a {
            AssumeA::General => la::AssumeA::General,
            AssumeA::Symmetric => la::AssumeA::Symmetric,
            AssumeA::PositiveDefinite => la::AssumeA::PositiveDefinite,
            AssumeA::Tridiagonal => la::AssumeA::Tridiagonal,
            AssumeA::Banded => la::AssumeA::Banded,
        },
        lower,
        transposed,
        b_ndim: Some(b_ndim),
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
        } => la::solve(x, &solve_params(*assume_a, *lower, *transposed, *b_ndim)),
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
    Solve(la::SolveParams, usize, usize),
    Inv(usize),
    Det(usize),
    SLogDet(usize),
}

/// One `float64` or `float32` linear algebra node (`cholesky`, `cho_solve`,
/// `solve_triangular`, `solve`, `inv`, `det`, `slogdet`), with or without batch dimensions,
/// run on the caller's row-major buffers: the kernel the interpreter's [`linalg`] runs for
/// each matrix (`oxtensor_linalg::Workspace`), over the broadcast batch in the same order,
/// with its workspace kept between calls, so a staged loop's host call computes each step
/// without allocating (but a positive definite `solve` above order 16) and gets the interpreter's
/// values bit for bit, and its errors.
pub struct InPlaceLinalg {
    op: InPlace,
    dtype: DType,
    /// Per operand: its number of elements, of elements per matrix, and per batch element
    /// the offset of its matrix (broadcast: repeated where the operand's batch extent is 1).
    inputs: Vec<(usize, usize, Vec<usize>)>,
    /// The number of batch elements (1 without batch dimensions).
    count: usize,
    /// Per output: its number of elements per batch element.
    out_cores: Vec<usize>,
    out_lens: Vec<usize>,
    ws: la::Workspace,
}

impl InPlaceLinalg {
    /// The node `op` on operands of dtypes and extents `params` (C order), or `None` when it
    /// is another op, the operands are not all `float64` or all `float32`, or of extents the
    /// op does not take (batch dimensions that do not broadcast, matrices of other orders):
    /// the interpreter's kernel then runs it, or reports the error.
    pub fn new(op: &LinalgOp, params: &[(DType, &[usize])]) -> Option<InPlaceLinalg> {
        let dtype = params.first()?.0;
        if !matches!(dtype, DType::F64 | DType::F32) || params.iter().any(|(d, _)| *d != dtype) {
            return None;
        }
        // The dimensions of each operand's matrix (or vector); the rest are batch dimensions.
        let core_ndims: &[usize] = match *op {
            LinalgOp::Cholesky { .. } | LinalgOp::Inv | LinalgOp::Det | LinalgOp::SLogDet => &[2],
            LinalgOp::ChoSolve { b_ndim, .. }
            | LinalgOp::SolveTriangular { b_ndim, .. }
            | LinalgOp::Solve { b_ndim, .. } => &[2, b_ndim],
            _ => return None,
        };
        if params.len() != core_ndims.len() {
            return None;
        }
        let mut batches: Vec<&[usize]> = Vec::with_capacity(params.len());
        let mut shapes: Vec<&[usize]> = Vec::with_capacity(params.len());
        for ((_, s), &core) in params.iter().zip(core_ndims) {
            let (batch, core) = s.split_at(s.len().checked_sub(core)?);
            batches.push(batch);
            shapes.push(core);
        }
        let mut batch: Vec<usize> = Vec::new();
        for b in &batches {
            batch = broadcast_shapes(&batch, b).ok()?.to_vec();
        }
        let count: usize = batch.iter().product();
        let inputs = batches
            .iter()
            .zip(&shapes)
            .map(|(b, core)| {
                let n: usize = core.iter().product();
                let own: Vec<isize> = contiguous_strides(b)
                    .iter()
                    .map(|&s| s * n as isize)
                    .collect();
                let strides = broadcast_strides(b, &own, &batch)?;
                let offsets: Vec<usize> = StridedIndex::new(&batch, &strides, 0).collect();
                Some((b.iter().product::<usize>() * n, n, offsets))
            })
            .collect::<Option<Vec<_>>>()?;
        // A square `a` alone: its order.
        let square = || match shapes[..] {
            [&[n, n2]] if n == n2 => Some(n),
            _ => None,
        };
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
            } => InPlace::Cholesky(cholesky_params(lower, nan_on_error), square()?),
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
            LinalgOp::Solve {
                assume_a,
                lower,
                transposed,
                b_ndim,
            } => {
                let (m, k) = system(b_ndim)?;
                InPlace::Solve(solve_params(assume_a, lower, transposed, b_ndim), m, k)
            }
            LinalgOp::Inv => InPlace::Inv(square()?),
            LinalgOp::Det => InPlace::Det(square()?),
            LinalgOp::SLogDet => InPlace::SLogDet(square()?),
            _ => return None,
        };
        let out_cores = match op {
            InPlace::Cholesky(_, n) | InPlace::Inv(n) => vec![n * n],
            InPlace::ChoSolve(_, m, k)
            | InPlace::SolveTriangular(_, m, k)
            | InPlace::Solve(_, m, k) => vec![m * k],
            InPlace::Det(_) => vec![1],
            InPlace::SLogDet(_) => vec![1, 1],
        };
        let out_lens = out_cores.iter().map(|&n| n * count).collect();
        Some(InPlaceLinalg {
            op,
            dtype,
            inputs,
            count,
            out_cores,
            out_lens,
            ws: la::Workspace::new(),
        })
    }

    /// The number of elements of each output.
    pub fn out_lens(&self) -> &[usize] {
        &self.out_lens
    }

    /// The dtype of the operands and outputs (`float64` or `float32`).
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Computes the node from `inputs` (each operand's elements in C order) into `outs`
    /// ([`Self::out_lens`] elements each, C order), in the element type of [`Self::dtype`];
    /// errors as the interpreter's kernel does.
    pub fn run<T: la::Real>(
        &mut self,
        inputs: &[&[T]],
        outs: &mut [&mut [T]],
    ) -> Result<(), KernelError> {
        if T::DTYPE != self.dtype {
            return Err(KernelError::Value(format!(
                "linear algebra in place: {} operands for a {} node",
                T::DTYPE,
                self.dtype
            )));
        }
        let fits = inputs.len() == self.inputs.len()
            && outs.len() == self.out_lens.len()
            && inputs.iter().zip(&self.inputs).all(|(x, i)| x.len() == i.0)
            && outs.iter().zip(&self.out_lens).all(|(o, &n)| o.len() == n);
        if !fits {
            return Err(KernelError::Value(format!(
                "linear algebra in place: {} operands and {} outputs of other extents than \
                 laid out",
                inputs.len(),
                outs.len()
            )));
        }
        for e in 0..self.count {
            let args: SmallVec<[&[T]; 2]> = inputs
                .iter()
                .zip(&self.inputs)
                .map(|(x, (_, n, offsets))| &x[offsets[e]..offsets[e] + n])
                .collect();
            let mut parts: SmallVec<[&mut [T]; 2]> = outs
                .iter_mut()
                .zip(&self.out_cores)
                .map(|(o, &n)| &mut o[e * n..(e + 1) * n])
                .collect();
            one(&self.op, &mut self.ws, &args, &mut parts).map_err(kernel_error)?;
        }
        Ok(())
    }
}

/// `op` on one matrix (or system) `inputs` into `outs`, in the workspace `ws`.
fn one<T: la::Real>(
    op: &InPlace,
    ws: &mut la::Workspace,
    inputs: &[&[T]],
    outs: &mut [&mut [T]],
) -> Result<(), la::LinalgError> {
    match (op, inputs, outs) {
        (InPlace::Cholesky(p, n), [a], [out]) => ws.cholesky(a, out, *n, p),
        (InPlace::ChoSolve(p, m, k), [c, b], [x]) => ws.cho_solve(c, b, x, (*m, *k), p),
        (InPlace::SolveTriangular(p, m, k), [a, b], [x]) => {
            ws.solve_triangular(a, b, x, (*m, *k), p)
        }
        (InPlace::Solve(p, m, k), [a, b], [x]) => ws.solve(a, b, x, (*m, *k), p),
        (InPlace::Inv(n), [a], [x]) => ws.inv(a, x, *n),
        (InPlace::Det(n), [a], [[det]]) => ws.det(a, *n).map(|d| *det = d),
        (InPlace::SLogDet(n), [a], [[sign], [logabs]]) => {
            ws.slogdet(a, *n).map(|(s, l)| (*sign, *logabs) = (s, l))
        }
        (_, inputs, outs) => Err(la::LinalgError::Arity {
            op: "linear algebra in place",
            expected: "the operands and outputs of its op".into(),
            got: inputs.len() + outs.len(),
        }),
    }
}
