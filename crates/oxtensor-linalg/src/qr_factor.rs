//! The QR kernel: faer's blocked Householder factorisation, then the explicit `Q` formed
//! block by block the way LAPACK's `orgqr` does it, touching only the part of `Q` that
//! each block reflector changes.
//!
//! faer's `compute_thin_Q`/`compute_Q` apply every block reflector to all columns of the
//! starting identity. Applied in reverse order, the block starting at row `j` meets a
//! matrix whose first `j` columns are still `e₀ … e_{j-1}` (zero in rows `j..`, so the
//! block leaves them alone) and whose rows above `j` are still zero in the other columns;
//! updating only `Q[j.., j..]` skips a third of the work for a square matrix.

use crate::Real;
use crate::util::write_rows;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::householder;
use faer::linalg::qr::no_pivoting::factor as qr;
use faer::{Conj, Mat, MatRef, Par};

/// `a = Q R`, written row-major into `q` (`m × q.len() / m`: `min(m, n)` columns for the
/// reduced factor, `m` for the complete one; `None` for no `Q`) and `r` (`r.len() / n` rows;
/// rows past `min(m, n)` are left zero). Both slices come zeroed.
pub(crate) fn qr_into<T: Real>(a: MatRef<'_, T>, q: Option<&mut [T]>, r: &mut [T]) {
    let (m, n) = a.shape();
    let q_cols = q.as_ref().map(|q| q.len().checked_div(m).unwrap_or(0));
    let k = m.min(n);
    let zero = T::lit(0.0);
    let mut work = a.to_owned();
    let bs = qr::recommended_block_size::<T>(m, n);
    let mut h = Mat::<T>::zeros(bs, k);
    let q_width = q_cols.unwrap_or(0);
    let scratch = StackReq::any_of(&[
        qr::qr_in_place_scratch::<T>(m, n, bs, Par::Seq, Default::default()),
        householder::apply_block_householder_on_the_left_in_place_scratch::<T>(m, bs, q_width),
    ]);
    let mut mem = MemBuffer::new(scratch);
    let stack = MemStack::new(&mut mem);
    if k > 0 {
        qr::qr_in_place(
            work.as_mut(),
            h.as_mut(),
            Par::Seq,
            stack,
            Default::default(),
        );
    }
    write_rows(work.as_ref().get(..k, ..), &mut r[..k * n]);
    for (i, row) in r.chunks_exact_mut(n.max(1)).take(k).enumerate() {
        row[..i.min(n)].fill(zero);
    }
    if let (Some(out), Some(qc)) = (q, q_cols) {
        let mut q = Mat::<T>::zeros(m, qc);
        for i in 0..qc.min(m) {
            q[(i, i)] = T::lit(1.0);
        }
        // Blocks start at 0, bs, 2 bs, …; applied last first.
        let starts: Vec<usize> = (0..k).step_by(bs).collect();
        for &j in starts.iter().rev() {
            let b = bs.min(k - j);
            householder::apply_block_householder_on_the_left_in_place_with_conj(
                work.as_ref().get(j.., j..j + b),
                h.as_ref().get(..b, j..j + b),
                Conj::No,
                q.as_mut().get_mut(j.., j..qc),
                Par::Seq,
                stack,
            );
        }
        write_rows(q.as_ref(), out);
    }
}
