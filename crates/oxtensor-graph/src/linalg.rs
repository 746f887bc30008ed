//! The linear-algebra op family, [`Op::Linalg`]: PyTensor's `pt.linalg` decompositions,
//! solvers and matrix functions, each with a NumPy generalised-ufunc *core signature*
//! (cholesky `(m,m)->(m,m)`, solve `(m,m),(m,n)->(m,n)`, det `(m,m)->()`, …).
//!
//! Dimensions in front of the core ones are batch dimensions and broadcast between the
//! operands with NumPy's rules (PyTensor's `Blockwise`): a batch extent of 1 stretches, so
//! the static batch shape of the output is the broadcast of the inputs'. Float32 inputs
//! compute in float32; anything else (float64, integers, booleans, a mix) in float64, as
//! PyTensor upcasts integer inputs of linear algebra. Integer outputs (pivots) are int32.
//!
//! The kernels live in `oxtensor-linalg` (called from `oxtensor-runtime`); the pullbacks in
//! `oxtensor-grad`; the builders in [`crate::build::linalg`].

use crate::{GraphError, Op, StaticShape, TensorType, Var};
use oxtensor_data::DType;
use smallvec::SmallVec;
use std::fmt;

/// What [`LinalgOp::Solve`] may assume about its matrix (SciPy's `assume_a`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AssumeA {
    /// A general square matrix (LU with partial pivoting).
    General,
    /// Symmetric: only the `lower` (or upper) triangle is read.
    Symmetric,
    /// Symmetric positive definite (Cholesky): only one triangle is read.
    PositiveDefinite,
    /// Tridiagonal: only the three central diagonals are read; an O(m) solve.
    Tridiagonal,
    /// Banded: the bandwidths are found from the values (as SciPy does) and a narrow band is
    /// solved in O(m·bandwidth²); every entry is read.
    Banded,
}

/// Which factors [`LinalgOp::Qr`] returns (NumPy's `mode`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum QrMode {
    /// `Q (m,k)`, `R (k,n)` with `k = min(m, n)`.
    Reduced,
    /// `Q (m,m)`, `R (m,n)`.
    Complete,
    /// `R (k,n)` only.
    R,
}

/// One linear-algebra operation with its static parameters. See the module docs for the
/// batching and dtype rules; each variant documents its inputs, outputs and core signature.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LinalgOp {
    /// `scipy.linalg.cholesky`, `(m,m)->(m,m)`: the lower factor `L` with `a = L Lᵀ` (reading
    /// the lower triangle), or with `lower = false` the upper `U` with `a = Uᵀ U`. A matrix
    /// that is not positive definite gives NaNs (`nan_on_error`, PyTensor's default) or an error.
    Cholesky {
        /// Return (and read) the lower triangle.
        lower: bool,
        /// NaNs instead of an error for a non-positive-definite matrix.
        nan_on_error: bool,
    },
    /// `scipy.linalg.solve`, inputs `a, b`: `(m,m),(m)->(m)` (`b_ndim = 1`) or
    /// `(m,m),(m,n)->(m,n)` (`b_ndim = 2`). A singular `a` is a run-time error.
    Solve {
        /// The structure of `a`.
        assume_a: AssumeA,
        /// For symmetric `a`, read the lower triangle.
        lower: bool,
        /// Solve `aᵀ x = b`.
        transposed: bool,
        /// Core rank of `b` (1 or 2).
        b_ndim: usize,
    },
    /// `scipy.linalg.solve_triangular`, inputs `a, b`, signatures as [`LinalgOp::Solve`].
    SolveTriangular {
        /// `a` is lower triangular (else upper); the other triangle is not read.
        lower: bool,
        /// Solve `aᵀ x = b` (SciPy's `trans` 1 or 2: equal for real matrices).
        trans: bool,
        /// The diagonal of `a` is taken to be ones (and not read).
        unit_diagonal: bool,
        /// Core rank of `b` (1 or 2).
        b_ndim: usize,
    },
    /// `scipy.linalg.cho_solve((c, lower), b)`, inputs `c, b`: `x` with `(c cᵀ) x = b`
    /// (or `(cᵀ c) x = b` for an upper factor). Signatures as [`LinalgOp::Solve`].
    ChoSolve {
        /// `c` is a lower factor.
        lower: bool,
        /// Core rank of `b` (1 or 2).
        b_ndim: usize,
    },
    /// `numpy.linalg.inv`, `(m,m)->(m,m)`; a singular matrix is a run-time error.
    Inv,
    /// `numpy.linalg.pinv`, `(m,n)->(n,m)`, with NumPy's default cutoff.
    Pinv,
    /// `numpy.linalg.det`, `(m,m)->()`.
    Det,
    /// `numpy.linalg.slogdet`, `(m,m)->(),()`: outputs `sign`, `logabsdet`.
    SLogDet,
    /// `scipy.linalg.eigh`, `(m,m)->(m),(m,m)`: ascending eigenvalues `w` and orthonormal
    /// eigenvectors `v` (columns) of a symmetric matrix, reading one triangle.
    Eigh {
        /// Read the lower triangle.
        lower: bool,
    },
    /// `scipy.linalg.eigvalsh`, `(m,m)->(m)`.
    Eigvalsh {
        /// Read the lower triangle.
        lower: bool,
    },
    /// `numpy.linalg.eig` for matrices with real eigenvalues, `(m,m)->(m),(m,m)` (oxtensor has
    /// no complex dtype: complex eigenvalues are a run-time error).
    Eig,
    /// `numpy.linalg.svd`, `(m,n)->(m,m|k),(k),(n|k,n)` with `k = min(m, n)`: outputs
    /// `u, s, vh`, or only `s` without `compute_uv`.
    Svd {
        /// Square `u` and `vh` rather than thin ones.
        full_matrices: bool,
        /// Return `u` and `vh` as well as `s`.
        compute_uv: bool,
    },
    /// `numpy.linalg.qr`, `(m,n)->…` by [`QrMode`].
    Qr {
        /// Which factors.
        mode: QrMode,
    },
    /// `scipy.linalg.lu`, `(m,n)->(m,m),(m,k),(k,n)`: outputs `p, l, u` (`p` an int32 vector
    /// `(m)` of row indices with `p_indices`).
    Lu {
        /// Return `p` as indices rather than a permutation matrix.
        p_indices: bool,
    },
    /// `scipy.linalg.lu_factor`, `(m,m)->(m,m),(m)`: the packed factors and int32 pivots.
    LuFactor,
    /// `scipy.linalg.lu_solve((lu, piv), b)`, inputs `lu, piv, b`: `(m,m),(m),(m[,n])->(m[,n])`.
    LuSolve {
        /// Solve `aᵀ x = b`.
        trans: bool,
        /// Core rank of `b` (1 or 2).
        b_ndim: usize,
    },
    /// `scipy.linalg.expm`, `(m,m)->(m,m)`.
    Expm,
    /// Kronecker product of the trailing matrices, `(m,n),(p,q)->(mp,nq)`.
    Kron,
    /// `scipy.linalg.solve_sylvester`, inputs `a, b, q`: `X` with `a X + X b = q`,
    /// `(m,m),(n,n),(m,n)->(m,n)`.
    SolveSylvester,
    /// `scipy.linalg.solve_continuous_lyapunov`, inputs `a, q`: `X` with `a X + X aᵀ = q`,
    /// `(m,m),(m,m)->(m,m)`.
    SolveContinuousLyapunov,
    /// `scipy.linalg.solve_discrete_lyapunov`, inputs `a, q`: `X` with `a X aᵀ − X + q = 0`,
    /// `(m,m),(m,m)->(m,m)`.
    SolveDiscreteLyapunov,
}

impl LinalgOp {
    /// The PyTensor-style name used in printing and error messages.
    pub fn name(&self) -> &'static str {
        match self {
            LinalgOp::Cholesky { .. } => "Cholesky",
            LinalgOp::Solve { .. } => "Solve",
            LinalgOp::SolveTriangular { .. } => "SolveTriangular",
            LinalgOp::ChoSolve { .. } => "CholeskySolve",
            LinalgOp::Inv => "MatrixInverse",
            LinalgOp::Pinv => "MatrixPinv",
            LinalgOp::Det => "Det",
            LinalgOp::SLogDet => "SLogDet",
            LinalgOp::Eigh { .. } => "Eigh",
            LinalgOp::Eigvalsh { .. } => "Eigvalsh",
            LinalgOp::Eig => "Eig",
            LinalgOp::Svd { .. } => "SVD",
            LinalgOp::Qr { .. } => "QR",
            LinalgOp::Lu { .. } => "LU",
            LinalgOp::LuFactor => "LUFactor",
            LinalgOp::LuSolve { .. } => "LUSolve",
            LinalgOp::Expm => "Expm",
            LinalgOp::Kron => "Kron",
            LinalgOp::SolveSylvester => "SolveSylvester",
            LinalgOp::SolveContinuousLyapunov => "SolveContinuousLyapunov",
            LinalgOp::SolveDiscreteLyapunov => "SolveDiscreteLyapunov",
        }
    }

    /// The core rank of each input (the dimensions the operation acts on).
    pub fn input_core_ndims(&self) -> SmallVec<[usize; 3]> {
        match self {
            LinalgOp::Solve { b_ndim, .. }
            | LinalgOp::SolveTriangular { b_ndim, .. }
            | LinalgOp::ChoSolve { b_ndim, .. } => SmallVec::from_slice(&[2, *b_ndim]),
            LinalgOp::LuSolve { b_ndim, .. } => SmallVec::from_slice(&[2, 1, *b_ndim]),
            LinalgOp::Kron
            | LinalgOp::SolveContinuousLyapunov
            | LinalgOp::SolveDiscreteLyapunov => SmallVec::from_slice(&[2, 2]),
            LinalgOp::SolveSylvester => SmallVec::from_slice(&[2, 2, 2]),
            LinalgOp::Cholesky { .. }
            | LinalgOp::Inv
            | LinalgOp::Pinv
            | LinalgOp::Det
            | LinalgOp::SLogDet
            | LinalgOp::Eigh { .. }
            | LinalgOp::Eigvalsh { .. }
            | LinalgOp::Eig
            | LinalgOp::Svd { .. }
            | LinalgOp::Qr { .. }
            | LinalgOp::Lu { .. }
            | LinalgOp::LuFactor
            | LinalgOp::Expm => SmallVec::from_slice(&[2]),
        }
    }

    /// How many outputs the operation produces.
    pub fn n_outputs(&self) -> usize {
        match self {
            LinalgOp::SLogDet | LinalgOp::Eigh { .. } | LinalgOp::Eig | LinalgOp::LuFactor => 2,
            LinalgOp::Svd { compute_uv, .. } => {
                if *compute_uv {
                    3
                } else {
                    1
                }
            }
            LinalgOp::Qr { mode } => {
                if *mode == QrMode::R {
                    1
                } else {
                    2
                }
            }
            LinalgOp::Lu { .. } => 3,
            LinalgOp::Cholesky { .. }
            | LinalgOp::Solve { .. }
            | LinalgOp::SolveTriangular { .. }
            | LinalgOp::ChoSolve { .. }
            | LinalgOp::Inv
            | LinalgOp::Pinv
            | LinalgOp::Det
            | LinalgOp::Eigvalsh { .. }
            | LinalgOp::LuSolve { .. }
            | LinalgOp::Expm
            | LinalgOp::Kron
            | LinalgOp::SolveSylvester
            | LinalgOp::SolveContinuousLyapunov
            | LinalgOp::SolveDiscreteLyapunov => 1,
        }
    }
}

impl fmt::Display for LinalgOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name();
        match self {
            LinalgOp::Cholesky {
                lower,
                nan_on_error,
            } => {
                let on_error = if *nan_on_error { "nan" } else { "raise" };
                write!(f, "{name}{{lower={lower}, on_error={on_error}}}")
            }
            LinalgOp::Solve {
                assume_a,
                lower,
                transposed,
                b_ndim,
            } => write!(
                f,
                "{name}{{assume_a={assume_a:?}, lower={lower}, transposed={transposed}, b_ndim={b_ndim}}}"
            ),
            LinalgOp::SolveTriangular {
                lower,
                trans,
                unit_diagonal,
                b_ndim,
            } => write!(
                f,
                "{name}{{lower={lower}, trans={trans}, unit_diagonal={unit_diagonal}, b_ndim={b_ndim}}}"
            ),
            LinalgOp::ChoSolve { lower, b_ndim } => {
                write!(f, "{name}{{lower={lower}, b_ndim={b_ndim}}}")
            }
            LinalgOp::Eigh { lower } | LinalgOp::Eigvalsh { lower } => {
                write!(f, "{name}{{lower={lower}}}")
            }
            LinalgOp::Svd {
                full_matrices,
                compute_uv,
            } => write!(
                f,
                "{name}{{full_matrices={full_matrices}, compute_uv={compute_uv}}}"
            ),
            LinalgOp::Qr { mode } => write!(f, "{name}{{mode={mode:?}}}"),
            LinalgOp::Lu { p_indices } => write!(f, "{name}{{p_indices={p_indices}}}"),
            LinalgOp::LuSolve { trans, b_ndim } => {
                write!(f, "{name}{{trans={trans}, b_ndim={b_ndim}}}")
            }
            LinalgOp::Inv
            | LinalgOp::Pinv
            | LinalgOp::Det
            | LinalgOp::SLogDet
            | LinalgOp::Eig
            | LinalgOp::LuFactor
            | LinalgOp::Expm
            | LinalgOp::Kron
            | LinalgOp::SolveSylvester
            | LinalgOp::SolveContinuousLyapunov
            | LinalgOp::SolveDiscreteLyapunov => write!(f, "{name}"),
        }
    }
}

type Dim = Option<usize>;

/// Two static extents that must be equal: the known one, or an error naming both inputs.
fn same(op: &Op, what: &str, a: (Dim, &Var), b: (Dim, &Var)) -> Result<Dim, GraphError> {
    match (a.0, b.0) {
        (Some(x), Some(y)) if x != y => Err(GraphError::shape(
            op,
            format!(
                "{what}: {} has extent {x} where {} has {y}",
                a.1.describe(),
                b.1.describe()
            ),
        )),
        (x, y) => Ok(x.or(y)),
    }
}

/// The broadcast of the inputs' static batch shapes (NumPy rules, right-aligned).
fn batch_shape(op: &Op, inputs: &[Var], cores: &[usize]) -> Result<StaticShape, GraphError> {
    let nb = inputs
        .iter()
        .zip(cores)
        .map(|(v, c)| v.ndim() - c)
        .max()
        .unwrap_or(0);
    let mut out: StaticShape = (0..nb).map(|_| Some(1)).collect();
    let mut from: Vec<Option<&Var>> = vec![None; nb];
    for (v, c) in inputs.iter().zip(cores) {
        let b = &v.ty().shape[..v.ndim() - c];
        let lead = nb - b.len();
        for (d, &e) in b.iter().enumerate() {
            let slot = &mut out[lead + d];
            match (*slot, e) {
                (_, Some(1)) => {}
                (Some(1), e) => {
                    *slot = e;
                    from[lead + d] = Some(v);
                }
                (Some(x), Some(y)) if x != y => {
                    let other = from[lead + d].map_or(String::new(), |o| o.describe());
                    return Err(GraphError::shape(
                        op,
                        format!(
                            "the batch dimensions of {} and {other} do not broadcast ({x} vs {y})",
                            v.describe()
                        ),
                    ));
                }
                (None, Some(y)) => {
                    *slot = Some(y);
                    from[lead + d] = Some(v);
                }
                _ => {}
            }
        }
    }
    Ok(out)
}

/// The core dimensions of input `i`.
fn core(v: &Var, n: usize) -> &[Dim] {
    &v.ty().shape[v.ndim() - n..]
}

/// The extent `m` of a square core matrix, checking squareness where known.
fn square(op: &Op, v: &Var) -> Result<Dim, GraphError> {
    let c = core(v, 2);
    match (c[0], c[1]) {
        (Some(r), Some(s)) if r != s => Err(GraphError::shape(
            op,
            format!(
                "{} must be a square matrix (or a batch of them); its last two extents are {r} and {s}",
                v.describe()
            ),
        )),
        (r, s) => Ok(r.or(s)),
    }
}

fn prod(a: Dim, b: Dim) -> Dim {
    Some(a? * b?)
}

fn min(a: Dim, b: Dim) -> Dim {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (Some(0), None) | (None, Some(0)) => Some(0),
        _ => None,
    }
}

/// The core shapes (and whether int32) of the outputs of `l` for these inputs.
fn core_outputs(l: &LinalgOp, op: &Op, x: &[Var]) -> Result<Vec<(Vec<Dim>, bool)>, GraphError> {
    let float = |s: Vec<Dim>| (s, false);
    let rhs = |a: &Var, b: &Var, nb: usize| -> Result<Vec<Dim>, GraphError> {
        let m = square(op, a)?;
        let bc = core(b, nb);
        let rows = same(op, "the rows of the right-hand side", (m, a), (bc[0], b))?;
        let mut s = vec![rows];
        s.extend_from_slice(&bc[1..]);
        Ok(s)
    };
    Ok(match l {
        LinalgOp::Cholesky { .. } | LinalgOp::Inv | LinalgOp::Expm => {
            let m = square(op, &x[0])?;
            vec![float(vec![m, m])]
        }
        LinalgOp::Solve { b_ndim, .. }
        | LinalgOp::SolveTriangular { b_ndim, .. }
        | LinalgOp::ChoSolve { b_ndim, .. } => vec![float(rhs(&x[0], &x[1], *b_ndim)?)],
        LinalgOp::LuSolve { b_ndim, .. } => {
            let m = square(op, &x[0])?;
            same(op, "the pivots", (m, &x[0]), (core(&x[1], 1)[0], &x[1]))?;
            vec![float(rhs(&x[0], &x[2], *b_ndim)?)]
        }
        LinalgOp::Pinv => {
            let c = core(&x[0], 2);
            vec![float(vec![c[1], c[0]])]
        }
        LinalgOp::Det => {
            square(op, &x[0])?;
            vec![float(vec![])]
        }
        LinalgOp::SLogDet => {
            square(op, &x[0])?;
            vec![float(vec![]), float(vec![])]
        }
        LinalgOp::Eigh { .. } | LinalgOp::Eig => {
            let m = square(op, &x[0])?;
            vec![float(vec![m]), float(vec![m, m])]
        }
        LinalgOp::Eigvalsh { .. } => {
            let m = square(op, &x[0])?;
            vec![float(vec![m])]
        }
        LinalgOp::Svd {
            full_matrices,
            compute_uv,
        } => {
            let c = core(&x[0], 2);
            let (m, n) = (c[0], c[1]);
            let k = min(m, n);
            if !compute_uv {
                vec![float(vec![k])]
            } else if *full_matrices {
                vec![float(vec![m, m]), float(vec![k]), float(vec![n, n])]
            } else {
                vec![float(vec![m, k]), float(vec![k]), float(vec![k, n])]
            }
        }
        LinalgOp::Qr { mode } => {
            let c = core(&x[0], 2);
            let (m, n) = (c[0], c[1]);
            let k = min(m, n);
            match mode {
                QrMode::Reduced => vec![float(vec![m, k]), float(vec![k, n])],
                QrMode::Complete => vec![float(vec![m, m]), float(vec![m, n])],
                QrMode::R => vec![float(vec![k, n])],
            }
        }
        LinalgOp::Lu { p_indices } => {
            let c = core(&x[0], 2);
            let (m, n) = (c[0], c[1]);
            let k = min(m, n);
            let p = if *p_indices {
                (vec![m], true)
            } else {
                float(vec![m, m])
            };
            vec![p, float(vec![m, k]), float(vec![k, n])]
        }
        LinalgOp::LuFactor => {
            let m = square(op, &x[0])?;
            vec![float(vec![m, m]), (vec![m], true)]
        }
        LinalgOp::Kron => {
            let (a, b) = (core(&x[0], 2), core(&x[1], 2));
            vec![float(vec![prod(a[0], b[0]), prod(a[1], b[1])])]
        }
        LinalgOp::SolveSylvester => {
            let m = square(op, &x[0])?;
            let n = square(op, &x[1])?;
            let q = core(&x[2], 2);
            let m = same(op, "the rows of q", (m, &x[0]), (q[0], &x[2]))?;
            let n = same(op, "the columns of q", (n, &x[1]), (q[1], &x[2]))?;
            vec![float(vec![m, n])]
        }
        LinalgOp::SolveContinuousLyapunov | LinalgOp::SolveDiscreteLyapunov => {
            let m = square(op, &x[0])?;
            let q = square(op, &x[1])?;
            let m = same(op, "the extent of q", (m, &x[0]), (q, &x[1]))?;
            vec![float(vec![m, m])]
        }
    })
}

/// Output types of `l` applied to `inputs`: checks arity, dtypes (numbers; integers and
/// booleans upcast to float64), core ranks and extents, and broadcasts the batch dimensions.
pub(crate) fn infer(l: &LinalgOp, inputs: &[Var]) -> Result<SmallVec<[TensorType; 1]>, GraphError> {
    let op = Op::Linalg(l.clone());
    let cores = l.input_core_ndims();
    if inputs.len() != cores.len() {
        return Err(GraphError::Arity {
            op: op.to_string(),
            expected: cores.len().to_string(),
            got: inputs.len(),
        });
    }
    let is_pivots = |i: usize| matches!(l, LinalgOp::LuSolve { .. }) && i == 1;
    for (i, (v, &c)) in inputs.iter().zip(&cores).enumerate() {
        if v.ndim() < c {
            let what = if c == 1 { "a vector" } else { "a matrix" };
            return Err(GraphError::rank(
                &op,
                v,
                format!("at least {c} ({what}, with optional leading batch dimensions)"),
            ));
        }
        if is_pivots(i) && !v.dtype().is_int() {
            return Err(GraphError::dtype(&op, v, "an integer type (pivot indices)"));
        }
    }
    let all_f32 = inputs
        .iter()
        .enumerate()
        .all(|(i, v)| is_pivots(i) || v.dtype() == DType::F32);
    let dtype = if all_f32 { DType::F32 } else { DType::F64 };
    let batch = batch_shape(&op, inputs, &cores)?;
    Ok(core_outputs(l, &op, inputs)?
        .into_iter()
        .map(|(c, int)| TensorType {
            dtype: if int { DType::I32 } else { dtype },
            shape: batch.iter().copied().chain(c).collect(),
        })
        .collect())
}
