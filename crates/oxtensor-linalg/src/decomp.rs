//! Factorisations: Cholesky, LU, QR, SVD and eigendecompositions.

use crate::batch::{ArgSpec, Batched, OutSpec, check_arity, float_dtype, rows};
use crate::bidiag_svals;
use crate::qr_factor;
use crate::small;
use crate::svd_dc;
use crate::tridiag_eigvals;
use crate::util::{Lu, symmetric_from, write_rows};
use crate::{LinalgError, Real};
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::cholesky::llt;
use faer::linalg::svd::{self as faer_svd, ComputeSvdVectors};
use faer::{ColMut, Mat, MatMut, Par, Side};
use oxtensor_data::Tensor;

const A: [ArgSpec; 1] = [ArgSpec::matrix("a")];

/// What `cholesky` does with a matrix that is not positive definite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnError {
    /// Return an error (PyTensor's `on_error="raise"`).
    #[default]
    Raise,
    /// Return a matrix of NaNs for that batch element (`on_error="nan"`).
    Nan,
}

/// Parameters of [`cholesky`].
#[derive(Clone, Copy, Debug)]
pub struct CholeskyParams {
    /// Return the lower factor `L` (`a = L Lᵀ`, reading the lower triangle); else the upper
    /// factor `U` (`a = Uᵀ U`, reading the upper triangle).
    pub lower: bool,
    /// Behaviour on a non-positive-definite matrix.
    pub on_error: OnError,
}

impl Default for CholeskyParams {
    fn default() -> Self {
        CholeskyParams {
            lower: true,
            on_error: OnError::Raise,
        }
    }
}

/// Cholesky factor, `(m,m)->(m,m)`, like `scipy.linalg.cholesky`.
pub fn cholesky(inputs: &[&Tensor], p: &CholeskyParams) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("cholesky", inputs, 1)?;
    by_dtype!(float_dtype(inputs, &A), cholesky_imp(inputs, p))
}

fn cholesky_imp<T: Real>(
    inputs: &[&Tensor],
    p: &CholeskyParams,
) -> Result<Vec<Tensor>, LinalgError> {
    let b = Batched::<T>::new("cholesky", inputs, &A)?;
    let n = b.square(0, "a")?;
    let scratch = cholesky_scratch::<T>(n);
    let t = b.run_into(&[n, n], scratch, |c, out, stack| {
        cholesky_one(c[0].data, out, n, p, stack)
    })?;
    Ok(vec![t])
}

/// The workspace [`cholesky_one`] needs for order `n`.
pub(crate) fn cholesky_scratch<T: Real>(n: usize) -> StackReq {
    llt::factor::cholesky_in_place_scratch::<T>(n, Par::Seq, Default::default())
}

/// The Cholesky factor of one row-major `n × n` matrix `a` into `out` (row-major, the other
/// triangle zeroed), as [`cholesky`] computes each batch element: the kernel the batched op
/// and [`crate::Workspace::cholesky`] share.
pub(crate) fn cholesky_one<T: Real>(
    a: &[T],
    out: &mut [T],
    n: usize,
    p: &CholeskyParams,
    stack: &mut MemStack,
) -> Result<(), LinalgError> {
    let not_pd = |out: &mut [T]| match p.on_error {
        OnError::Nan => {
            out.fill(T::nan());
            Ok(())
        }
        OnError::Raise => Err(LinalgError::NotPositiveDefinite {
            op: "cholesky",
            arg: "a",
        }),
    };
    if n <= small::SMALL {
        if !small::cholesky(a, out, n, p.lower) {
            return not_pd(out);
        }
        return Ok(());
    }
    // Factor a row-major copy of `a`, made in its output slice, in place. Seen as
    // column-major (faer's fast layout), the buffer holds aᵀ, whose lower triangle is a's
    // upper one: an upper factor is computed directly (L' in that lower triangle, and
    // L'ᵀ = U in a's upper one). For a lower factor a's lower triangle is mirrored into
    // the upper one first, and the factor, left transposed, is transposed back after.
    out.copy_from_slice(a);
    if p.lower {
        for i in 0..n {
            for j in i + 1..n {
                out[i * n + j] = out[j * n + i];
            }
        }
    }
    let view = MatMut::from_column_major_slice_mut(out, n, n);
    let factored = llt::factor::cholesky_in_place(
        view,
        Default::default(),
        Par::Seq,
        stack,
        Default::default(),
    );
    if factored.is_err() {
        return not_pd(out);
    }
    for i in 0..n {
        for j in i + 1..n {
            if p.lower {
                out[j * n + i] = out[i * n + j];
                out[i * n + j] = T::lit(0.0);
            } else {
                out[j * n + i] = T::lit(0.0);
            }
        }
    }
    Ok(())
}

/// LU decomposition `a = P L U`, `(m,n)->(m,m),(m,k),(k,n)` with `k = min(m, n)`, like
/// `scipy.linalg.lu(a, permute_l=False, p_indices)`: outputs `[P, L, U]`. With `p_indices`,
/// `P` is instead an int32 vector `(m)` of row indices with `a = (L U)[P]`.
pub fn lu(inputs: &[&Tensor], p_indices: bool) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("lu", inputs, 1)?;
    by_dtype!(float_dtype(inputs, &A), lu_imp(inputs, p_indices))
}

fn lu_imp<T: Real>(inputs: &[&Tensor], p_indices: bool) -> Result<Vec<Tensor>, LinalgError> {
    let b = Batched::<T>::new("lu", inputs, &A)?;
    let (m, n) = matrix_dims(&b, 0, "a")?;
    let k = m.min(n);
    let outs = [
        if p_indices {
            OutSpec::int32(&[m])
        } else {
            OutSpec::float(&[m, m])
        },
        OutSpec::float(&[m, k]),
        OutSpec::float(&[k, n]),
    ];
    b.run_into_kinds(&outs, StackReq::empty(), |c, o, _| {
        let f = Lu::new(c[0].mat());
        // `P` (or its indices) goes straight into the zeroed first output.
        for (i, &r) in f.fwd.iter().enumerate() {
            if p_indices {
                o[0][r] = T::lit(i as f64);
            } else {
                o[0][r * m + i] = T::lit(1.0);
            }
        }
        write_rows(f.l.as_ref(), o[1]);
        write_rows(f.u.as_ref(), o[2]);
        Ok(())
    })
}

/// Packed LU factorisation, `(m,n)->(m,n),(k)`, like `scipy.linalg.lu_factor`: outputs
/// `[LU, piv]`, where `LU` holds `U` and the strict lower part of `L`, and `piv` (int32) the
/// 0-based row interchanges (row `i` was swapped with row `piv[i]`).
pub fn lu_factor(inputs: &[&Tensor]) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("lu_factor", inputs, 1)?;
    by_dtype!(float_dtype(inputs, &A), lu_factor_imp(inputs))
}

fn lu_factor_imp<T: Real>(inputs: &[&Tensor]) -> Result<Vec<Tensor>, LinalgError> {
    let b = Batched::<T>::new("lu_factor", inputs, &A)?;
    let (m, n) = matrix_dims(&b, 0, "a")?;
    let k = m.min(n);
    let outs = [OutSpec::float(&[m, n]), OutSpec::int32(&[k])];
    b.run_into_kinds(&outs, StackReq::empty(), |c, o, _| {
        let f = Lu::new(c[0].mat());
        for (i, row) in o[0].chunks_exact_mut(n.max(1)).take(m).enumerate() {
            for (j, x) in row.iter_mut().enumerate() {
                *x = if i > j { f.l[(i, j)] } else { f.u[(i, j)] };
            }
        }
        for (x, p) in o[1].iter_mut().zip(f.lapack_pivots()) {
            *x = T::lit(p as f64);
        }
        Ok(())
    })
}

/// Which factors [`qr`] returns (NumPy's `mode`; `'raw'` is not provided).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QrMode {
    /// `Q` (m,k) and `R` (k,n).
    #[default]
    Reduced,
    /// `Q` (m,m) and `R` (m,n).
    Complete,
    /// Only `R` (k,n).
    R,
}

/// QR decomposition by Householder reflections, like `numpy.linalg.qr`. The factors are
/// unique only up to the signs of `R`'s rows (and `Q`'s columns); they may differ from
/// LAPACK's in those signs.
pub fn qr(inputs: &[&Tensor], mode: QrMode) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("qr", inputs, 1)?;
    by_dtype!(float_dtype(inputs, &A), qr_imp(inputs, mode))
}

fn qr_imp<T: Real>(inputs: &[&Tensor], mode: QrMode) -> Result<Vec<Tensor>, LinalgError> {
    let b = Batched::<T>::new("qr", inputs, &A)?;
    let (m, n) = matrix_dims(&b, 0, "a")?;
    let k = m.min(n);
    let r_rows = if mode == QrMode::Complete { m } else { k };
    let (q_shape, r_shape) = (
        [m, if mode == QrMode::Complete { m } else { k }],
        [r_rows, n],
    );
    let outs: Vec<&[usize]> = match mode {
        QrMode::R => vec![&r_shape],
        _ => vec![&q_shape, &r_shape],
    };
    b.run_into_many(&outs, StackReq::empty(), |c, o, _| {
        // `R` is the last output, `Q` (unless mode is `r`) the one before it.
        if let Some((r, q)) = o.split_last_mut() {
            qr_factor::qr_into(c[0].mat(), q.first_mut().map(|q| &mut **q), r);
        }
        Ok(())
    })
}

/// Parameters of [`svd`].
#[derive(Clone, Copy, Debug)]
pub struct SvdParams {
    /// `U` (m,m) and `Vh` (n,n) when true; (m,k) and (k,n) when false.
    pub full_matrices: bool,
    /// Return `[U, s, Vh]` when true, only `[s]` when false.
    pub compute_uv: bool,
}

impl Default for SvdParams {
    fn default() -> Self {
        SvdParams {
            full_matrices: true,
            compute_uv: true,
        }
    }
}

/// Singular value decomposition `a = U diag(s) Vh`, like `numpy.linalg.svd`; `s` descending.
/// Singular vectors are unique only up to sign (and rotation within repeated values).
pub fn svd(inputs: &[&Tensor], p: &SvdParams) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("svd", inputs, 1)?;
    by_dtype!(float_dtype(inputs, &A), svd_imp(inputs, p))
}

fn svd_imp<T: Real>(inputs: &[&Tensor], p: &SvdParams) -> Result<Vec<Tensor>, LinalgError> {
    let b = Batched::<T>::new("svd", inputs, &A)?;
    let (m, n) = matrix_dims(&b, 0, "a")?;
    let k = m.min(n);
    let no_conv = |_| LinalgError::NoConvergence { op: "svd" };
    if !p.compute_uv {
        let t = b.run_into(&[k], StackReq::empty(), |c, out, _| {
            let s = bidiag_svals::singular_values(c[0].mat())
                .map_err(|_| LinalgError::NoConvergence { op: "svd" })?;
            out.copy_from_slice(&s);
            Ok(())
        })?;
        return Ok(vec![t]);
    }
    let (ur, vr) = if p.full_matrices { (m, n) } else { (k, k) };
    if k >= SVD_DC_FROM && (m.max(n) as f64) <= SVD_DC_RATIO * k as f64 {
        return b.run_into_many(&[&[m, ur], &[k], &[vr, n]], StackReq::empty(), |c, o, _| {
            let [u, s, vh] = o else {
                unreachable!("three outputs")
            };
            svd_dc::svd(c[0].mat(), u, s, vh, p.full_matrices)
                .map_err(|_| LinalgError::NoConvergence { op: "svd" })
        });
    }
    let compute = if p.full_matrices {
        ComputeSvdVectors::Full
    } else {
        ComputeSvdVectors::Thin
    };
    let params: faer_svd::SvdParams = faer_svd::SvdParams {
        recursion_threshold: SVD_LEAF,
        ..faer::Auto::<T>::auto()
    };
    let scratch = faer_svd::svd_scratch::<T>(m, n, compute, compute, Par::Seq, params.into());
    b.run_into_many(&[&[m, ur], &[k], &[vr, n]], scratch, |c, o, stack| {
        // faer writes the factors straight into the outputs: `U` row-major, and `V` as the
        // column-major view of `Vh`'s row-major buffer (the same numbers).
        let [u, s, vh] = o else {
            unreachable!("three outputs")
        };
        faer_svd::svd(
            c[0].mat(),
            ColMut::from_slice_mut(s).as_diagonal_mut(),
            Some(MatMut::from_row_major_slice_mut(u, m, ur)),
            Some(MatMut::from_column_major_slice_mut(vh, n, vr)),
            Par::Seq,
            stack,
            params.into(),
        )
        .map_err(no_conv)
    })
}

/// Up to this aspect ratio the SVD with vectors is our own ([`svd_dc`]: faer's
/// bidiagonalisation, then our divide and conquer); a longer matrix goes to faer's SVD, which factors
/// it `QR` first (past the same ratio) and bidiagonalises the square `R`.
const SVD_DC_RATIO: f64 = 11.0 / 6.0;

/// Smaller matrices (one leaf of the divide and conquer, nothing to merge) go to faer's SVD
/// too: its QR iteration solves 2×2 blocks directly as LAPACK's does, so exactly repeated
/// singular values come out in LAPACK's order (PyTensor's `multivariate_normal(method=
/// "svd")` of a covariance with a repeated eigenvalue depends on it); our leaves iterate
/// on them and may round such a tie the other way.
const SVD_DC_FROM: usize = 26;

/// Below this size faer's SVD solves a bidiagonal block by the QR iteration with rotations
/// applied to the vectors; above, by divide and conquer. faer's default (128) leaves
/// `n = 100` to the QR iteration, which is 10% slower there than one divide step over
/// two halves.
const SVD_LEAF: usize = 64;

/// Symmetric eigendecomposition, like `scipy.linalg.eigh`: inputs `[a]` with core signature
/// `(m,m)->(m),(m,m)`, or `[a, b]`, `(m,m),(m,m)->(m),(m,m)`, for the generalised problem
/// `a v = w b v` with symmetric positive definite `b`. Outputs `[w, v]` with `w` ascending,
/// `a v = v diag(w)` (or `a v = b v diag(w)` with `vᵀ b v = I`). Reads only the `lower` (or
/// upper) triangle of each matrix. Eigenvectors are unique only up to sign.
pub fn eigh(inputs: &[&Tensor], lower: bool) -> Result<Vec<Tensor>, LinalgError> {
    check_one_or_two("eigh", inputs)?;
    by_dtype!(float_dtype(inputs, &AB), eigh_imp(inputs, lower, true))
}

/// Eigenvalues of a symmetric matrix (or of the symmetric-definite pencil `(a, b)`), ascending,
/// like `scipy.linalg.eigvalsh`: `(m,m)->(m)` or `(m,m),(m,m)->(m)`.
pub fn eigvalsh(inputs: &[&Tensor], lower: bool) -> Result<Vec<Tensor>, LinalgError> {
    check_one_or_two("eigvalsh", inputs)?;
    by_dtype!(float_dtype(inputs, &AB), eigh_imp(inputs, lower, false))
}

const AB: [ArgSpec; 2] = [ArgSpec::matrix("a"), ArgSpec::matrix("b")];

fn check_one_or_two(op: &'static str, inputs: &[&Tensor]) -> Result<(), LinalgError> {
    if inputs.is_empty() || inputs.len() > 2 {
        return Err(LinalgError::Arity {
            op,
            expected: "1 or 2".into(),
            got: inputs.len(),
        });
    }
    Ok(())
}

fn eigh_imp<T: Real>(
    inputs: &[&Tensor],
    lower: bool,
    vectors: bool,
) -> Result<Vec<Tensor>, LinalgError> {
    let op = if vectors { "eigh" } else { "eigvalsh" };
    let b = Batched::<T>::new(op, inputs, &AB[..inputs.len()])?;
    let n = b.square(0, "a")?;
    if inputs.len() == 2 && b.cores[1] != [n, n] {
        return Err(b.shape_error(1, "b", &format!("{n}, {n}")));
    }
    let no_conv = |_| LinalgError::NoConvergence { op };
    let outs: &[&[usize]] = if vectors { &[&[n], &[n, n]] } else { &[&[n]] };
    b.run_into_many(outs, StackReq::empty(), |c, o, _| {
        // faer reads the one triangle it is told to (copying it into its own workspace), so
        // a single matrix is passed as it lies.
        let mut a = c[0].mat();
        let mut side = if lower { Side::Lower } else { Side::Upper };
        // For the pencil, b = L Lᵀ turns a v = w b v into (L⁻¹ a L⁻ᵀ) y = w y with v = L⁻ᵀ y.
        let reduced;
        let chol = match c.get(1) {
            Some(bm) => {
                let llt = symmetric_from(bm.mat(), lower)
                    .llt(Side::Lower)
                    .map_err(|_| LinalgError::NotPositiveDefinite { op, arg: "b" })?;
                let l = llt.L().to_owned();
                let mut y = symmetric_from(a, lower);
                l.solve_lower_triangular_in_place(y.as_mut());
                let mut z = y.transpose().to_owned();
                l.solve_lower_triangular_in_place(z.as_mut());
                reduced = z;
                (a, side) = (reduced.as_ref(), Side::Lower);
                Some(l)
            }
            None => None,
        };
        if !vectors {
            let w = tridiag_eigvals::symmetric_eigenvalues(a, side == Side::Lower)
                .map_err(|_| LinalgError::NoConvergence { op })?;
            o[0].copy_from_slice(&w);
            return Ok(());
        }
        let (w, v) = tridiag_eigvals::symmetric_eigen(a, side == Side::Lower).map_err(no_conv)?;
        for (i, x) in o[0].iter_mut().enumerate() {
            *x = w[i];
        }
        match chol {
            Some(l) => {
                let mut v = v;
                l.transpose().solve_upper_triangular_in_place(v.as_mut());
                write_rows(v.as_ref(), o[1]);
            }
            None => write_rows(v.as_ref(), o[1]),
        }
        Ok(())
    })
}

/// General eigendecomposition, `(m,m)->(m),(m,m)`, like `numpy.linalg.eig`, for matrices
/// whose eigenvalues are all real: outputs `[w, v]` with unit-norm eigenvector columns.
///
/// oxtensor has no complex dtype, so a matrix with a complex eigenvalue is an
/// [`LinalgError::Unsupported`] error. The eigenvalue order is faer's (from the real Schur
/// form), which need not be LAPACK's; eigenvectors are unique only up to sign.
pub fn eig(inputs: &[&Tensor]) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("eig", inputs, 1)?;
    by_dtype!(float_dtype(inputs, &A), eig_imp(inputs))
}

fn eig_imp<T: Real>(inputs: &[&Tensor]) -> Result<Vec<Tensor>, LinalgError> {
    let b = Batched::<T>::new("eig", inputs, &A)?;
    let n = b.square(0, "a")?;
    b.run(&[OutSpec::float(&[n]), OutSpec::float(&[n, n])], |c| {
        let f = c[0]
            .mat()
            .eigen()
            .map_err(|_| LinalgError::NoConvergence { op: "eig" })?;
        let s = f.S().column_vector();
        let zero = T::lit(0.0);
        if let Some(i) = (0..n).find(|&i| s[i].im != zero) {
            return Err(LinalgError::Unsupported {
                op: "eig",
                message: format!(
                    "eigenvalue {i} is complex ({:?} + {:?}i) and oxtensor has no complex dtype",
                    s[i].re, s[i].im
                ),
            });
        }
        let u = f.U();
        let mut v = Mat::from_fn(n, n, |i, j| u[(i, j)].re);
        for j in 0..n {
            let norm: f64 = (0..n)
                .map(|i| v[(i, j)].as_f64().powi(2))
                .sum::<f64>()
                .sqrt();
            if norm > 0.0 {
                for i in 0..n {
                    v[(i, j)] = T::lit(v[(i, j)].as_f64() / norm);
                }
            }
        }
        Ok(vec![(0..n).map(|i| s[i].re).collect(), rows(v.as_ref())])
    })
}

/// The core shape of matrix input `i`, `(m, n)`.
pub(crate) fn matrix_dims<T: Real>(
    b: &Batched<'_, T>,
    i: usize,
    arg: &'static str,
) -> Result<(usize, usize), LinalgError> {
    match b.cores[i][..] {
        [m, n] => Ok((m, n)),
        _ => Err(b.shape_error(i, arg, "m, n")),
    }
}
