//! The SVD with vectors of a matrix that is not far from square: faer's Householder
//! bidiagonalisation, our divide and conquer on the bidiagonal ([`crate::bidiag_dc`]), and
//! faer's blocked Householder products to carry the bidiagonal's vectors back.

use crate::Real;
use crate::bidiag_dc::{NoConvergence, bidiag_svd};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::householder;
use faer::linalg::qr::no_pivoting::factor as qr;
use faer::linalg::svd::bidiag;
use faer::{Conj, Mat, MatRef, Par};

/// `a = U diag(s) Vh` for a matrix `a` (`m × n`), written row-major into `u` (`m × m` when
/// `full`, else `m × min(m, n)`), `s` and `vh` (`n × n` or `min(m, n) × n`).
pub(crate) fn svd<T: Real>(
    a: MatRef<'_, T>,
    u: &mut [T],
    s: &mut [T],
    vh: &mut [T],
    full: bool,
) -> Result<(), NoConvergence> {
    // A wide `a` is `aᵀ = U' Σ V'ᵀ` transposed: `a = V' Σ U'ᵀ`.
    let (left, right) = if a.nrows() >= a.ncols() {
        tall(a, s, full)?
    } else {
        let (uc, vc) = tall(a.transpose(), s, full)?;
        (vc, uc)
    };
    // `U` as it is; `Vh = Vᵀ`.
    write_rows(left.as_ref(), u);
    write_rows(right.as_ref().transpose(), vh);
    Ok(())
}

/// Writes `x` row-major into `out`.
fn write_rows<T: Real>(x: MatRef<'_, T>, out: &mut [T]) {
    let w = x.ncols();
    for i in 0..x.nrows() {
        for j in 0..w {
            out[i * w + j] = x[(i, j)];
        }
    }
}

/// The SVD of a matrix at least as tall as wide, with column-major `U` (`m × m` when `full`,
/// else `m × n`) and `V` (`n × n`).
fn tall<T: Real>(
    a: MatRef<'_, T>,
    s: &mut [T],
    full: bool,
) -> Result<(Mat<T>, Mat<T>), NoConvergence> {
    let (m, n) = a.shape();
    let ur = if full { m } else { n };
    if n == 0 {
        return Ok((Mat::identity(m, ur), Mat::zeros(0, 0)));
    }
    let mut bid = a.to_owned();
    let bs = qr::recommended_block_size::<T>(m, n);
    let mut hl = Mat::<T>::zeros(bs, n);
    let mut hr = Mat::<T>::zeros(bs, n - 1);
    let mut mem = MemBuffer::new(
        bidiag::bidiag_in_place_scratch::<T>(m, n, Par::Seq, Default::default()).or(
            householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(
                m,
                bs,
                ur.max(n),
            ),
        ),
    );
    let stack = MemStack::new(&mut mem);
    bidiag::bidiag_in_place(
        bid.as_mut(),
        hl.as_mut(),
        hr.as_mut(),
        Par::Seq,
        stack,
        Default::default(),
    );
    let mut d: Vec<f64> = (0..n).map(|i| bid[(i, i)].as_f64()).collect();
    let mut e: Vec<f64> = (0..n - 1).map(|i| bid[(i, i + 1)].as_f64()).collect();
    let big = d.iter().chain(e.iter()).fold(0.0f64, |x, y| x.max(y.abs()));
    if !big.is_finite() {
        return Err(NoConvergence);
    }
    let scale = if big == 0.0 { 1.0 } else { big };
    d.iter_mut().chain(e.iter_mut()).for_each(|x| *x /= scale);
    let b = bidiag_svd(&d, &e, false)?;
    // Descending values, the vectors' columns in the same order.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| b.s[y].total_cmp(&b.s[x]));
    for (o, &j) in s.iter_mut().zip(&order) {
        *o = T::lit(b.s[j] * scale);
    }
    let mut uc = Mat::<T>::zeros(m, ur);
    for (t, &j) in order.iter().enumerate() {
        for i in 0..n {
            uc[(i, t)] = T::lit(b.u[j * n + i]);
        }
    }
    for j in n..ur {
        uc[(j, j)] = T::lit(1.0);
    }
    householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
        bid.as_ref(),
        hl.as_ref(),
        Conj::No,
        uc.as_mut(),
        Par::Seq,
        MemStack::new(&mut mem),
    );
    let mut vc = Mat::<T>::from_fn(n, n, |i, t| T::lit(b.v[order[t] * n + i]));
    if n > 1 {
        for j in 1..n {
            for i in 0..j {
                bid[(j, i)] = bid[(i, j)];
            }
        }
        householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
            bid.as_ref().submatrix(1, 0, n - 1, n - 1),
            hr.as_ref(),
            Conj::No,
            vc.as_mut().subrows_mut(1, n - 1),
            Par::Seq,
            MemStack::new(&mut mem),
        );
    }
    Ok((uc, vc))
}
