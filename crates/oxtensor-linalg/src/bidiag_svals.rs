//! Singular values without singular vectors: faer's Householder bidiagonalisation (after a
//! QR factorisation for a matrix much taller than wide), then the implicit QR iteration of
//! Demmel and Kahan on the bidiagonal matrix, as LAPACK's `bdsqr` runs it.
//!
//! The iteration alternates shifted sweeps (a Wilkinson-like shift from the trailing 2×2
//! block) with *zero-shift* sweeps whenever a shift would swamp the smallest singular value,
//! and deflates only off-diagonal elements negligible relative to their neighbours (with a
//! running estimate of the smallest singular value), so every singular value of the
//! bidiagonal matrix, however small, comes out with a few ulps of relative error. faer's own
//! values-only path (divide and conquer on a two-row workspace) spends most of the time here.

use crate::Real;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::qr::no_pivoting::factor as qr;
use faer::linalg::svd::bidiag;
use faer::{Mat, MatRef, Par};

/// The iteration did not converge (after `6 n²` inner steps), or an element was not finite.
#[derive(Debug)]
pub(crate) struct NoConvergence;

/// A matrix this many times taller than wide is factored `A = Q R` first and `R`
/// bidiagonalised (faer's and LAPACK's crossover).
const QR_RATIO: f64 = 11.0 / 6.0;

/// The singular values of `a`, descending, computed in `T` up to the bidiagonal form and in
/// `f64` from there.
pub(crate) fn singular_values<T: Real>(a: MatRef<'_, T>) -> Result<Vec<T>, NoConvergence> {
    // Work on the tall one of `a` and `aᵀ` (the same singular values; a wide matrix reduces
    // to the transpose of what LAPACK's lower bidiagonal form would be). A square matrix is
    // reduced as it is, not transposed, whatever its layout: then a matrix that is already
    // upper bidiagonal passes the reduction unchanged and keeps the relative accuracy the
    // bidiagonal iteration gives its small singular values, as in LAPACK.
    let (m, n) = a.shape();
    let tall = if m >= n { a } else { a.transpose() };
    let (m, n) = tall.shape();
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut work = tall.to_owned();
    if m as f64 / n as f64 > QR_RATIO {
        let bs = qr::recommended_block_size::<T>(m, n);
        let mut h = Mat::<T>::zeros(bs, n);
        let mut mem = MemBuffer::new(qr::qr_in_place_scratch::<T>(
            m,
            n,
            bs,
            Par::Seq,
            Default::default(),
        ));
        qr::qr_in_place(
            work.as_mut(),
            h.as_mut(),
            Par::Seq,
            MemStack::new(&mut mem),
            Default::default(),
        );
        let zero = T::lit(0.0);
        work = Mat::from_fn(n, n, |i, j| if i <= j { work[(i, j)] } else { zero });
    }
    let mut hl = Mat::<T>::zeros(1, n);
    let mut hr = Mat::<T>::zeros(1, n - 1);
    let scratch: StackReq =
        bidiag::bidiag_in_place_scratch::<T>(work.nrows(), n, Par::Seq, Default::default());
    let mut mem = MemBuffer::new(scratch);
    bidiag::bidiag_in_place(
        work.as_mut(),
        hl.as_mut(),
        hr.as_mut(),
        Par::Seq,
        MemStack::new(&mut mem),
        Default::default(),
    );
    let mut d: Vec<f64> = (0..n).map(|i| work[(i, i)].as_f64()).collect();
    let mut e: Vec<f64> = (0..n - 1).map(|i| work[(i, i + 1)].as_f64()).collect();
    bidiagonal_singular_values(&mut d, &mut e)?;
    Ok(d.into_iter().map(T::lit).collect())
}

/// The singular values of the upper bidiagonal matrix with diagonal `d` and superdiagonal
/// `e` (`e.len() + 1 == d.len()`), left descending in `d`; `e` is overwritten.
pub(crate) fn bidiagonal_singular_values(
    d: &mut [f64],
    e: &mut [f64],
) -> Result<(), NoConvergence> {
    let n = d.len();
    if !d.iter().chain(e.iter()).all(|x| x.is_finite()) {
        return Err(NoConvergence);
    }
    // dqds (as LAPACK's `bdsqr` without vectors runs it); the QR iteration when it gives up.
    if n > 2 && crate::dqds::bidiagonal_singular_values(d, e).is_ok() {
        return Ok(());
    }
    if n > 1 {
        qr_iteration(d, e)?;
    }
    d.iter_mut().for_each(|x| *x = x.abs());
    d.sort_unstable_by(|a, b| b.total_cmp(a));
    Ok(())
}

/// Which way a sweep chases the bulge: from the top (when the top element is the larger) or
/// from the bottom, so that convergence happens at the end with the smaller element.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    Down,
    Up,
}

/// The Demmel–Kahan iteration on the whole bidiagonal; leaves signed singular values in `d`.
fn qr_iteration(d: &mut [f64], e: &mut [f64]) -> Result<(), NoConvergence> {
    let n = d.len();
    let eps = f64::EPSILON / 2.0;
    let unfl = f64::MIN_POSITIVE;
    // LAPACK's tolerance: relative accuracy of about tol per singular value.
    let tol = eps.powf(-0.125).clamp(10.0, 100.0) * eps;
    let max_steps = 6 * n * n;
    // A lower bound on the smallest singular value (from the recurrence of Demmel and Kahan)
    // makes the absolute threshold below which an off-diagonal element is dropped.
    let mut smin_est = d[0].abs();
    if smin_est != 0.0 {
        let mut mu = smin_est;
        for i in 1..n {
            mu = d[i].abs() * (mu / (mu + e[i - 1].abs()));
            smin_est = smin_est.min(mu);
            if smin_est == 0.0 {
                break;
            }
        }
    }
    smin_est /= (n as f64).sqrt();
    let thresh = (tol * smin_est).max(max_steps as f64 * (n as f64 * (n as f64 * unfl)));
    let mut steps = 0;
    // The last block worked on, to keep the direction while it is the same block.
    let (mut old_lo, mut old_hi) = (usize::MAX, usize::MAX);
    let mut dir = Dir::Down;
    let mut hi = n - 1;
    'outer: while hi > 0 {
        if steps > max_steps {
            return Err(NoConvergence);
        }
        // The unreduced block lo..=hi ending at hi.
        let mut smax = d[hi].abs();
        let mut lo = 0;
        for l in (0..hi).rev() {
            if e[l].abs() <= thresh {
                e[l] = 0.0;
                lo = l + 1;
                break;
            }
            smax = smax.max(d[l].abs()).max(e[l].abs());
        }
        if lo == hi {
            hi -= 1;
            continue;
        }
        if lo + 1 == hi {
            let (small, big) = sv2(d[lo], e[lo], d[hi]);
            d[lo] = big;
            d[hi] = small;
            e[lo] = 0.0;
            if hi < 2 {
                break;
            }
            hi -= 2;
            continue;
        }
        if old_hi == usize::MAX || lo > old_hi || hi < old_lo {
            dir = if d[lo].abs() >= d[hi].abs() {
                Dir::Down
            } else {
                Dir::Up
            };
        }
        // Relative convergence tests, carrying the smallest-singular-value estimate along.
        let smin_l;
        if dir == Dir::Down {
            if e[hi - 1].abs() <= tol * d[hi].abs() {
                e[hi - 1] = 0.0;
                continue;
            }
            let mut mu = d[lo].abs();
            let mut sl = mu;
            for l in lo..hi {
                if e[l].abs() <= tol * mu {
                    e[l] = 0.0;
                    continue 'outer;
                }
                mu = d[l + 1].abs() * (mu / (mu + e[l].abs()));
                sl = sl.min(mu);
            }
            smin_l = sl;
        } else {
            if e[lo].abs() <= tol * d[lo].abs() {
                e[lo] = 0.0;
                continue;
            }
            let mut mu = d[hi].abs();
            let mut sl = mu;
            for l in (lo..hi).rev() {
                if e[l].abs() <= tol * mu {
                    e[l] = 0.0;
                    continue 'outer;
                }
                mu = d[l].abs() * (mu / (mu + e[l].abs()));
                sl = sl.min(mu);
            }
            smin_l = sl;
        }
        (old_lo, old_hi) = (lo, hi);
        // The shift: the smaller singular value of the 2×2 block at the far end, or zero when
        // it would not be accurate relative to the smallest singular value.
        let shift = if n as f64 * tol * (smin_l / smax) <= eps.max(0.01 * tol) {
            0.0
        } else {
            let (s, edge) = match dir {
                Dir::Down => (sv2(d[hi - 1], e[hi - 1], d[hi]).0, d[lo].abs()),
                Dir::Up => (sv2(d[lo], e[lo], d[lo + 1]).0, d[hi].abs()),
            };
            if edge > 0.0 && (s / edge) * (s / edge) < eps {
                0.0
            } else {
                s
            }
        };
        steps += hi - lo;
        match (dir, shift == 0.0) {
            (Dir::Down, true) => zero_shift_down(&mut d[lo..=hi], &mut e[lo..hi], thresh),
            (Dir::Up, true) => zero_shift_up(&mut d[lo..=hi], &mut e[lo..hi], thresh),
            (Dir::Down, false) => shifted_down(&mut d[lo..=hi], &mut e[lo..hi], shift, thresh),
            (Dir::Up, false) => shifted_up(&mut d[lo..=hi], &mut e[lo..hi], shift, thresh),
        }
    }
    Ok(())
}

/// One zero-shift QR sweep on a block, chasing from the top.
fn zero_shift_down(d: &mut [f64], e: &mut [f64], thresh: f64) {
    let last = d.len() - 1;
    let (mut cs, mut old_cs, mut old_sn) = (1.0, 1.0, 0.0);
    for i in 0..last {
        let (c, s, r) = rotation(d[i] * cs, e[i]);
        cs = c;
        if i > 0 {
            e[i - 1] = old_sn * r;
        }
        let (oc, os, di) = rotation(old_cs * r, d[i + 1] * s);
        (old_cs, old_sn, d[i]) = (oc, os, di);
    }
    let h = d[last] * cs;
    d[last] = h * old_cs;
    e[last - 1] = h * old_sn;
    if e[last - 1].abs() <= thresh {
        e[last - 1] = 0.0;
    }
}

/// One zero-shift QR sweep on a block, chasing from the bottom.
fn zero_shift_up(d: &mut [f64], e: &mut [f64], thresh: f64) {
    let last = d.len() - 1;
    let (mut cs, mut old_cs, mut old_sn) = (1.0, 1.0, 0.0);
    for i in (1..=last).rev() {
        let (c, s, r) = rotation(d[i] * cs, e[i - 1]);
        cs = c;
        if i < last {
            e[i] = old_sn * r;
        }
        let (oc, os, di) = rotation(old_cs * r, d[i - 1] * s);
        (old_cs, old_sn, d[i]) = (oc, os, di);
    }
    let h = d[0] * cs;
    d[0] = h * old_cs;
    e[0] = h * old_sn;
    if e[0].abs() <= thresh {
        e[0] = 0.0;
    }
}

/// One shifted QR sweep on a block, chasing the bulge from the top.
fn shifted_down(d: &mut [f64], e: &mut [f64], shift: f64, thresh: f64) {
    let last = d.len() - 1;
    let mut f = (d[0].abs() - shift) * (1f64.copysign(d[0]) + shift / d[0]);
    let mut g = e[0];
    for i in 0..last {
        let (cr, sr, r) = rotation(f, g);
        if i > 0 {
            e[i - 1] = r;
        }
        f = cr * d[i] + sr * e[i];
        e[i] = cr * e[i] - sr * d[i];
        g = sr * d[i + 1];
        d[i + 1] *= cr;
        let (cl, sl, r) = rotation(f, g);
        d[i] = r;
        f = cl * e[i] + sl * d[i + 1];
        d[i + 1] = cl * d[i + 1] - sl * e[i];
        if i + 1 < last {
            g = sl * e[i + 1];
            e[i + 1] *= cl;
        }
    }
    e[last - 1] = f;
    if f.abs() <= thresh {
        e[last - 1] = 0.0;
    }
}

/// One shifted QR sweep on a block, chasing the bulge from the bottom.
fn shifted_up(d: &mut [f64], e: &mut [f64], shift: f64, thresh: f64) {
    let last = d.len() - 1;
    let mut f = (d[last].abs() - shift) * (1f64.copysign(d[last]) + shift / d[last]);
    let mut g = e[last - 1];
    for i in (1..=last).rev() {
        let (cr, sr, r) = rotation(f, g);
        if i < last {
            e[i] = r;
        }
        f = cr * d[i] + sr * e[i - 1];
        e[i - 1] = cr * e[i - 1] - sr * d[i];
        g = sr * d[i - 1];
        d[i - 1] *= cr;
        let (cl, sl, r) = rotation(f, g);
        d[i] = r;
        f = cl * e[i - 1] + sl * d[i - 1];
        d[i - 1] = cl * d[i - 1] - sl * e[i - 1];
        if i > 1 {
            g = sl * e[i - 2];
            e[i - 2] *= cl;
        }
    }
    e[0] = f;
    if f.abs() <= thresh {
        e[0] = 0.0;
    }
}

/// A plane rotation `(c, s, r)` with `c f + s g = r` and `-s f + c g = 0` (LAPACK's
/// `lartg`): the direct formula when squaring cannot overflow or underflow, else a scaled
/// one.
fn rotation(f: f64, g: f64) -> (f64, f64, f64) {
    const RT_MIN: f64 = 1.4916681462400413e-154; // √(smallest normal)
    const RT_MAX: f64 = 9.480751908109176e153; // √(largest / 2)
    if g == 0.0 {
        return (1.0, 0.0, f);
    }
    if f == 0.0 {
        return (0.0, 1f64.copysign(g), g.abs());
    }
    let (f1, g1) = (f.abs(), g.abs());
    if f1 > RT_MIN && f1 < RT_MAX && g1 > RT_MIN && g1 < RT_MAX {
        let h = (f * f + g * g).sqrt();
        let r = h.copysign(f);
        (f1 / h, g / r, r)
    } else {
        let u = f1.max(g1).clamp(f64::MIN_POSITIVE, 1.0 / f64::MIN_POSITIVE);
        let (fs, gs) = (f / u, g / u);
        let h = (fs * fs + gs * gs).sqrt();
        let r = h.copysign(f);
        (fs.abs() / h, gs / r, r * u)
    }
}

/// The singular values `(smaller, larger)` of the upper triangular 2×2 matrix
/// `[[f, g], [0, h]]`, accurate relative to each (LAPACK's `las2`).
fn sv2(f: f64, g: f64, h: f64) -> (f64, f64) {
    let (fa, ga, ha) = (f.abs(), g.abs(), h.abs());
    let (lo, hi) = (fa.min(ha), fa.max(ha));
    if lo == 0.0 {
        let big = if hi == 0.0 {
            ga
        } else {
            hi.max(ga) * (1.0 + (hi.min(ga) / hi.max(ga)).powi(2)).sqrt()
        };
        return (0.0, big);
    }
    if ga < hi {
        let s = 1.0 + lo / hi;
        let t = (hi - lo) / hi;
        let u = (ga / hi) * (ga / hi);
        let c = 2.0 / ((s * s + u).sqrt() + (t * t + u).sqrt());
        (lo * c, hi / c)
    } else {
        let u = hi / ga;
        if u == 0.0 {
            // hi ≪ ga: the product of the singular values is lo·hi.
            return ((lo * hi) / ga, ga);
        }
        let s = 1.0 + lo / hi;
        let t = (hi - lo) / hi;
        let c = 1.0 / ((1.0 + (s * u) * (s * u)).sqrt() + (1.0 + (t * u) * (t * u)).sqrt());
        let small = (lo * c) * u;
        (small + small, ga / (c + c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_by_two_blocks() {
        // [[3, 0], [0, 4]] and [[1, 1], [0, 1]] (golden-ratio singular values).
        assert_eq!(sv2(3.0, 0.0, 4.0), (3.0, 4.0));
        let (s, b) = sv2(1.0, 1.0, 1.0);
        let phi = (1.0 + 5f64.sqrt()) / 2.0;
        assert!((b - phi).abs() < 1e-15 && (s - 1.0 / phi).abs() < 1e-15);
    }

    #[test]
    fn a_graded_bidiagonal_keeps_its_tiny_singular_values() {
        // diag 1, 1e-10, 1e-20, … with superdiagonal 1e-5 · diag: each singular value is
        // within a relative 1e-10 of its diagonal element.
        let n: i32 = 12;
        let mut d: Vec<f64> = (0..n).map(|i| 10f64.powi(-10 * i)).collect();
        let mut e: Vec<f64> = (0..n - 1).map(|i| 1e-5 * 10f64.powi(-10 * i)).collect();
        let want = d.clone();
        bidiagonal_singular_values(&mut d, &mut e).expect("converges");
        for (s, w) in d.iter().zip(&want) {
            assert!(((s - w) / w).abs() < 1e-9, "{s:e} vs {w:e}");
        }
    }

    /// dqds (which must not give up on these) and the QR iteration agree value by value,
    /// relative to each value, on random bidiagonals with graded, clustered and tiny
    /// entries: two algorithms each accurate to a few ulps per singular value.
    #[test]
    fn dqds_agrees_with_the_qr_iteration_per_value() {
        let mut seed = 99u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for n in [3, 4, 5, 8, 13, 31, 60] {
            for kind in 0..9 {
                let entry = |i: usize, r: f64| match kind {
                    0 => r - 0.5,
                    1 => (r + 0.1) * 10f64.powi(-(i as i32)),
                    2 => (r + 0.1) * 10f64.powi(-((n - i) as i32)),
                    3 => 1.0 + 1e-9 * r,
                    4 => (r - 0.5) * if i % 5 == 2 { 1e-30 } else { 1.0 },
                    5 => (r + 0.5) * 1e-200,
                    // Exact zeros (a singular matrix, and a split), and all-equal entries.
                    6 => f64::from(u8::from(i % 4 != 1)) * (r + 0.5),
                    7 => f64::from(u8::from(i != n / 2)),
                    // Subnormal: the QR iteration's absolute threshold would drop every
                    // e, so it runs on the matrix scaled by 2¹⁰⁰⁰ (dqds scales itself).
                    _ => (r - 0.5) * 1e-310,
                };
                // With exact zeros, the values that should be zero are computed to
                // within the norm's rounding.
                let floor = if matches!(kind, 6 | 7) { 1.0 } else { 0.0 };
                let d: Vec<f64> = (0..n).map(|i| entry(i, next())).collect();
                let e: Vec<f64> = (0..n - 1).map(|i| entry(i, next())).collect();
                let (mut d1, mut e1) = (d.clone(), e.clone());
                crate::dqds::bidiagonal_singular_values(&mut d1, &mut e1)
                    .unwrap_or_else(|_| panic!("dqds gave up: n={n} kind {kind}"));
                let scale = if kind == 8 { 2f64.powi(1000) } else { 1.0 };
                let mut d2: Vec<f64> = d.iter().map(|x| x * scale).collect();
                let mut e2: Vec<f64> = e.iter().map(|x| x * scale).collect();
                qr_iteration(&mut d2, &mut e2).expect("QR converges");
                d2.iter_mut().for_each(|x| *x = x.abs() / scale);
                d2.sort_unstable_by(|a, b| b.total_cmp(a));
                for (x, y) in d1.iter().zip(&d2) {
                    assert!(
                        (x - y).abs() <= 64.0 * n as f64 * f64::EPSILON * (y + floor * d2[0]),
                        "n={n} kind {kind}: {x:e} vs {y:e}"
                    );
                }
            }
        }
    }

    #[test]
    fn rotations_of_extreme_values() {
        for (f, g) in [(1e300, 1e300), (1e-300, 3e-300), (-2.0, 1.0), (0.0, -5.0)] {
            let (c, s, r) = rotation(f, g);
            assert!((c * f + s * g - r).abs() <= 1e-15 * r.abs());
            assert!((-s * f + c * g).abs() <= 1e-15 * r.abs());
        }
    }
}
