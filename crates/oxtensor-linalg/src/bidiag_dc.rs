//! Singular value decomposition with vectors of an upper bidiagonal matrix by divide and
//! conquer (Gu and Eisenstat; the method of LAPACK's `bdsdc`), computed in `f64`.
//!
//! A block of `n` rows and `n + sqre` columns (`sqre` is 0 or 1) is split at its middle row
//! `k` into a `k × (k + 1)` upper block, the row `k` (elements `α = d[k]`, `β = e[k]`) and a
//! lower block; each block's SVD is computed recursively (small blocks by the implicit QR
//! iteration with the rotations applied to their vectors), and the two are merged: in the
//! bases of the blocks' singular vectors the matrix becomes `M = [z; diag(d)]` (a first row
//! `z` over a diagonal with `d₀ = 0`), whose singular values are the roots of the secular
//! equation `1 + Σ zⱼ² / (dⱼ² − σ²) = 0`. Entries of `z` that are negligible, and poles
//! closer than a tolerance (after a rotation that zeroes one of their `z`), are *deflated*:
//! their singular values are the poles themselves. For the rest, every root is found
//! relative to its nearer pole (so the differences `dⱼ² − σᵢ²` carry full relative
//! accuracy), `z` is recomputed from the roots by Löwner's formula (so the vectors come out
//! orthogonal), and the vectors of `M` multiply the blocks' vectors in two matrix products
//! per side.

use crate::secular::{Root, secular_root};
use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};

/// The iteration did not converge, or an element was not finite.
#[derive(Debug)]
pub(crate) struct NoConvergence;

/// Blocks with at most this many rows are solved by the QR iteration.
const LEAF: usize = 25;

/// The SVD of one block: `B = U [diag(s) 0] Vᵀ` with `s ≥ 0` in no particular order (a
/// merge sorts its poles itself), `U` (`n × n`) and `V` (`m × m`, `m = n + sqre`)
/// column-major.
pub(crate) struct BlockSvd {
    pub(crate) s: Vec<f64>,
    pub(crate) u: Vec<f64>,
    pub(crate) v: Vec<f64>,
}

/// The SVD of the `n × (n + sqre)` upper bidiagonal matrix with diagonal `d` and
/// superdiagonal `e` (`e.len() == n - 1 + sqre`).
pub(crate) fn bidiag_svd(d: &[f64], e: &[f64], sqre: bool) -> Result<BlockSvd, NoConvergence> {
    let n = d.len();
    debug_assert_eq!(e.len() + 1, n + usize::from(sqre));
    if n <= LEAF {
        return leaf(d, e, sqre);
    }
    let k = n / 2;
    let left = bidiag_svd(&d[..k], &e[..k], true)?;
    let right = bidiag_svd(&d[k + 1..], &e[k + 1..], sqre)?;
    merge(left, right, d[k], e[k], sqre)
}

/// The `n × n` identity, column-major.
fn identity(n: usize) -> Vec<f64> {
    let mut m = vec![0.0; n * n];
    for i in 0..n {
        m[i * n + i] = 1.0;
    }
    m
}

/// Rotates columns `a` and `b` (length `rows`) of a column-major matrix:
/// `(ca, cb) ← (c ca + s cb, −s ca + c cb)`.
fn rot_cols(m: &mut [f64], rows: usize, a: usize, b: usize, c: f64, s: f64) {
    debug_assert!(a != b);
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    let (x, y) = m.split_at_mut(hi * rows);
    let (ca, cb) = if a < b {
        (&mut x[lo * rows..(lo + 1) * rows], &mut y[..rows])
    } else {
        (&mut y[..rows], &mut x[lo * rows..(lo + 1) * rows])
    };
    for (p, q) in ca.iter_mut().zip(cb.iter_mut()) {
        let (u, v) = (*p, *q);
        *p = c * u + s * v;
        *q = c * v - s * u;
    }
}

/// `(c, s, r)` with `c f + s g = r`, `−s f + c g = 0`: the direct formula when squaring
/// can neither overflow nor underflow (always, on the scaled blocks here), else `hypot`.
fn givens(f: f64, g: f64) -> (f64, f64, f64) {
    const SAFE_MIN: f64 = 1.4916681462400413e-154; // √(smallest normal)
    const SAFE_MAX: f64 = 9.480751908109176e153; // √(largest / 2)
    if g == 0.0 {
        return (1.0, 0.0, f);
    }
    if f == 0.0 {
        return (0.0, 1.0, g);
    }
    let big = f.abs().max(g.abs());
    let small = f.abs().min(g.abs());
    let r = if small > SAFE_MIN && big < SAFE_MAX {
        (f * f + g * g).sqrt()
    } else {
        f.hypot(g)
    };
    (f / r, g / r, r)
}

/// A small block by the implicit QR iteration (Golub–Kahan steps with a Wilkinson shift),
/// the rotations applied to the block's vectors.
fn leaf(d0: &[f64], e0: &[f64], sqre: bool) -> Result<BlockSvd, NoConvergence> {
    let n = d0.len();
    let m = n + usize::from(sqre);
    let mut d = d0.to_vec();
    let mut e = e0[..n - 1].to_vec();
    let mut u = identity(n);
    let mut v = identity(m);
    if sqre {
        // Chase the element at (n-1, n) up and out of the last column by rotations of
        // columns (j, n) from the right.
        let mut x = e0[n - 1];
        for j in (0..n).rev() {
            if x == 0.0 {
                break;
            }
            let (c, s, r) = givens(d[j], x);
            d[j] = r;
            rot_cols(&mut v, m, j, n, c, s);
            if j > 0 {
                x = -s * e[j - 1];
                e[j - 1] *= c;
            }
        }
    }
    qr_sweeps(&mut d, &mut e, &mut u, &mut v, m)?;
    // Positive values.
    for (j, x) in d.iter_mut().enumerate() {
        if *x < 0.0 {
            *x = -*x;
            u[j * n..(j + 1) * n].iter_mut().for_each(|y| *y = -*y);
        }
    }
    Ok(BlockSvd { s: d, u, v })
}

/// The QR iteration on the square upper bidiagonal `(d, e)`, accumulating the left
/// rotations into the columns of `u` (`n` rows) and the right ones into the first `n`
/// columns of `v` (`vrows` rows). Leaves signed singular values in `d`.
fn qr_sweeps(
    d: &mut [f64],
    e: &mut [f64],
    u: &mut [f64],
    v: &mut [f64],
    vrows: usize,
) -> Result<(), NoConvergence> {
    let n = d.len();
    let eps = f64::EPSILON;
    let norm = d.iter().chain(e.iter()).fold(0.0f64, |a, x| a.max(x.abs()));
    if !norm.is_finite() {
        return Err(NoConvergence);
    }
    let mut hi = n - 1;
    let mut steps = 0usize;
    while hi > 0 {
        if steps > 30 * n * n {
            return Err(NoConvergence);
        }
        // Negligible elements.
        for i in 0..hi {
            if e[i].abs() <= eps * (d[i].abs() + d[i + 1].abs()) || e[i].abs() <= eps * eps * norm {
                e[i] = 0.0;
            }
        }
        if e[hi - 1] == 0.0 {
            hi -= 1;
            continue;
        }
        let mut lo = hi - 1;
        while lo > 0 && e[lo - 1] != 0.0 {
            lo -= 1;
        }
        // A zero on the diagonal splits the block once its row (or column) is chased out.
        if let Some(i) = (lo..hi).find(|&i| d[i].abs() <= eps * norm) {
            d[i] = 0.0;
            let mut x = e[i];
            e[i] = 0.0;
            for j in i + 1..=hi {
                // Zero the element x at (i, j) against d[j] by rotating rows (j, i).
                let (c, s, r) = givens(d[j], x);
                d[j] = r;
                rot_cols(u, n, j, i, c, s);
                if j < hi {
                    x = -s * e[j];
                    e[j] *= c;
                }
            }
            continue;
        }
        if d[hi].abs() <= eps * norm {
            d[hi] = 0.0;
            let mut x = e[hi - 1];
            e[hi - 1] = 0.0;
            for j in (lo..hi).rev() {
                // Zero the element x at (j, hi) against d[j] by rotating columns (j, hi).
                let (c, s, r) = givens(d[j], x);
                d[j] = r;
                rot_cols(v, vrows, j, hi, c, s);
                if j > lo {
                    x = -s * e[j - 1];
                    e[j - 1] *= c;
                }
            }
            continue;
        }
        // Wilkinson shift from the trailing 2×2 block of BᵀB.
        let t11 = d[hi - 1] * d[hi - 1]
            + if hi - 1 > lo {
                e[hi - 2] * e[hi - 2]
            } else {
                0.0
            };
        let t12 = d[hi - 1] * e[hi - 1];
        let t22 = d[hi] * d[hi] + e[hi - 1] * e[hi - 1];
        let half = (t11 - t22) / 2.0;
        let mu = t22 - t12 * t12 / (half + half.signum() * half.hypot(t12));
        let mu = if mu.is_finite() { mu } else { t22 };
        let mut y = d[lo] * d[lo] - mu;
        let mut z = d[lo] * e[lo];
        for k in lo..hi {
            let (c, s, r) = givens(y, z);
            if k > lo {
                e[k - 1] = r;
            }
            let f = c * d[k] + s * e[k];
            let g = c * e[k] - s * d[k];
            let h = s * d[k + 1];
            let dk1 = c * d[k + 1];
            rot_cols(v, vrows, k, k + 1, c, s);
            let (c, s, r) = givens(f, h);
            d[k] = r;
            let ek = c * g + s * dk1;
            d[k + 1] = c * dk1 - s * g;
            rot_cols(u, n, k, k + 1, c, s);
            if k + 1 < hi {
                y = ek;
                z = s * e[k + 1];
                e[k + 1] *= c;
            } else {
                e[k] = ek;
            }
        }
        steps += hi - lo;
    }
    Ok(())
}

/// Where a column of the merged problem's bases lives: the upper block's rows, the lower
/// block's, or both (after a rotation between the two).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Upper,
    Lower,
    Both,
}

impl Part {
    fn join(self, other: Part) -> Part {
        if self == other { self } else { Part::Both }
    }
}

/// Merges the SVDs of the upper block (`k × (k+1)`) and the lower block (`nr × (nr+sqre)`)
/// joined by the row with `alpha` (at column `k`) and `beta` (at column `k + 1`).
fn merge(
    left: BlockSvd,
    right: BlockSvd,
    alpha: f64,
    beta: f64,
    sqre: bool,
) -> Result<BlockSvd, NoConvergence> {
    let k = left.s.len();
    let nr = right.s.len();
    let n = k + 1 + nr;
    let m = n + usize::from(sqre);
    let (kl, mr) = (k + 1, nr + usize::from(sqre));
    let scale = left
        .s
        .iter()
        .chain(right.s.iter())
        .fold(alpha.abs().max(beta.abs()), |a, x| a.max(*x));
    if scale == 0.0 {
        return Ok(BlockSvd {
            s: vec![0.0; n],
            u: identity(n),
            v: identity(m),
        });
    }
    if !scale.is_finite() {
        return Err(NoConvergence);
    }
    let (alpha, beta) = (alpha / scale, beta / scale);
    // The bases: column j of `ub` (n × n) and `vb` (m × m), and the problem M = [z; diag(d)].
    let mut ub = vec![0.0; n * n];
    let mut vb = vec![0.0; m * m];
    let mut d = vec![0.0; n];
    let mut z = vec![0.0; n];
    let mut part = vec![Part::Both; n];
    ub[k] = 1.0;
    let r0 = alpha * left.v[k * kl + k];
    let r1 = if sqre { beta * right.v[nr * mr] } else { 0.0 };
    let z0 = r0.hypot(r1);
    let (c0, s0) = if z0 == 0.0 {
        (1.0, 0.0)
    } else {
        (r0 / z0, r1 / z0)
    };
    z[0] = z0;
    // The blocks' null vectors (the last columns of their V), rotated into w₀ (column 0)
    // and, when the merged block is wide, its own null vector (column n).
    let null_l = &left.v[k * kl..];
    for (o, x) in vb[..kl].iter_mut().zip(null_l) {
        *o = c0 * x;
    }
    if sqre {
        let null_r = &right.v[nr * mr..];
        for (i, x) in null_r.iter().enumerate() {
            vb[kl + i] = s0 * x;
            vb[n * m + kl + i] = c0 * x;
        }
        for (o, x) in vb[n * m..n * m + kl].iter_mut().zip(null_l) {
            *o = -s0 * x;
        }
    }
    for t in 0..k {
        let j = 1 + t;
        d[j] = left.s[t] / scale;
        z[j] = alpha * left.v[t * kl + k];
        part[j] = Part::Upper;
        ub[j * n..j * n + k].copy_from_slice(&left.u[t * k..(t + 1) * k]);
        vb[j * m..j * m + kl].copy_from_slice(&left.v[t * kl..(t + 1) * kl]);
    }
    for t in 0..nr {
        let j = 1 + k + t;
        d[j] = right.s[t] / scale;
        z[j] = beta * right.v[t * mr];
        part[j] = Part::Lower;
        ub[j * n + k + 1..(j + 1) * n].copy_from_slice(&right.u[t * nr..(t + 1) * nr]);
        vb[j * m + kl..(j + 1) * m].copy_from_slice(&right.v[t * mr..(t + 1) * mr]);
    }
    // Deflation.
    let tol = 8.0 * f64::EPSILON;
    let mut order: Vec<usize> = (1..n).collect();
    order.sort_by(|&a, &b| d[a].total_cmp(&d[b]));
    if z[0].abs() <= tol {
        z[0] = tol;
    }
    let mut live: Vec<usize> = vec![0];
    let mut deflated: Vec<usize> = Vec::new();
    for &j in &order {
        if z[j].abs() <= tol {
            deflated.push(j);
            continue;
        }
        let last = *live.last().expect("index 0 is live");
        if last != 0 && d[j] - d[last] <= tol {
            let r = z[last].hypot(z[j]);
            let (c, s) = (z[j] / r, z[last] / r);
            z[j] = r;
            z[last] = 0.0;
            // col_last ← c col_last − s col_j, col_j ← s col_last + c col_j.
            rot_cols(&mut ub, n, last, j, c, -s);
            rot_cols(&mut vb, m, last, j, c, -s);
            let p = part[last].join(part[j]);
            part[last] = p;
            part[j] = p;
            live.pop();
            deflated.push(last);
        }
        live.push(j);
    }
    // Keep the live poles apart from d₀ = 0 and from each other.
    let mut floor = 0.0;
    for &j in &live[1..] {
        if d[j] <= floor + tol / 2.0 {
            d[j] = floor + tol / 2.0;
        }
        floor = d[j];
    }
    let kk = live.len();
    let dl: Vec<f64> = live.iter().map(|&j| d[j]).collect();
    let zl: Vec<f64> = live.iter().map(|&j| z[j]).collect();
    let roots: Vec<Root> = (0..kk)
        .map(|i| secular_root(&dl, &zl, i))
        .collect::<Result<_, _>>()?;
    // σᵢ² − dⱼ², accurate relative to its size.
    let gap = |r: &Root, j: usize| r.mu - (dl[j] - dl[r.origin]) * (dl[j] + dl[r.origin]);
    // Löwner's formula: the z for which the computed roots are exact.
    let mut zh = vec![0.0; kk];
    for j in 0..kk {
        let mut p = gap(&roots[kk - 1], j);
        for (i, r) in roots.iter().enumerate().take(kk - 1) {
            let den = if i < j {
                (dl[i] - dl[j]) * (dl[i] + dl[j])
            } else {
                (dl[i + 1] - dl[j]) * (dl[i + 1] + dl[j])
            };
            p *= gap(r, j) / den;
        }
        zh[j] = p.abs().sqrt().copysign(zl[j]);
    }
    // The vectors of M, one column per root: rows follow `live`.
    let mut um = vec![0.0; kk * kk];
    let mut vm = vec![0.0; kk * kk];
    for (i, r) in roots.iter().enumerate() {
        let uc = &mut um[i * kk..(i + 1) * kk];
        let vc = &mut vm[i * kk..(i + 1) * kk];
        for j in 0..kk {
            let w = zh[j] / -gap(r, j);
            vc[j] = w;
            uc[j] = dl[j] * w;
        }
        uc[0] = -1.0;
        let nu = uc.iter().map(|x| x * x).sum::<f64>().sqrt();
        let nv = vc.iter().map(|x| x * x).sum::<f64>().sqrt();
        uc.iter_mut().for_each(|x| *x /= nu);
        vc.iter_mut().for_each(|x| *x /= nv);
    }
    // New vectors: deflated columns as they are, live ones from two products per side.
    let mut s = Vec::with_capacity(n);
    let mut uo = vec![0.0; n * n];
    let mut vo = vec![0.0; m * m];
    for r in &roots {
        s.push((dl[r.origin] * dl[r.origin] + r.mu).sqrt() * scale);
    }
    let pos_u: Vec<usize> = (1..kk).collect();
    product(
        &ub,
        n,
        &live,
        &part,
        &pos_u,
        &um,
        kk,
        0..k,
        Part::Lower,
        &mut uo[..],
        n,
    );
    product(
        &ub,
        n,
        &live,
        &part,
        &pos_u,
        &um,
        kk,
        k + 1..n,
        Part::Upper,
        &mut uo[..],
        n,
    );
    for i in 0..kk {
        uo[i * n + k] = um[i * kk];
    }
    let pos_v: Vec<usize> = (0..kk).collect();
    product(
        &vb,
        m,
        &live,
        &part,
        &pos_v,
        &vm,
        kk,
        0..kl,
        Part::Lower,
        &mut vo[..],
        m,
    );
    product(
        &vb,
        m,
        &live,
        &part,
        &pos_v,
        &vm,
        kk,
        kl..m,
        Part::Upper,
        &mut vo[..],
        m,
    );
    for (t, &j) in deflated.iter().enumerate() {
        let c = kk + t;
        s.push(d[j] * scale);
        uo[c * n..(c + 1) * n].copy_from_slice(&ub[j * n..(j + 1) * n]);
        vo[c * m..(c + 1) * m].copy_from_slice(&vb[j * m..(j + 1) * m]);
    }
    if sqre {
        vo[n * m..].copy_from_slice(&vb[n * m..]);
    }
    Ok(BlockSvd { s, u: uo, v: vo })
}

/// Rows `rows` of the first `kk` output columns: `out[rows, i] = Σ_q basis[rows, live[q]]
/// coef[q, i]` over the positions `q` in `pos` whose part is not `skip`.
#[allow(clippy::too_many_arguments)]
fn product(
    basis: &[f64],
    ld: usize,
    live: &[usize],
    part: &[Part],
    pos: &[usize],
    coef: &[f64],
    kk: usize,
    rows: std::ops::Range<usize>,
    skip: Part,
    out: &mut [f64],
    ldo: usize,
) {
    let used: Vec<usize> = pos
        .iter()
        .copied()
        .filter(|&q| part[live[q]] != skip)
        .collect();
    let nr = rows.len();
    if nr == 0 {
        return;
    }
    if used.is_empty() {
        for i in 0..kk {
            out[i * ldo + rows.start..i * ldo + rows.end].fill(0.0);
        }
        return;
    }
    let mut a = vec![0.0; nr * used.len()];
    let mut b = vec![0.0; used.len() * kk];
    for (t, &q) in used.iter().enumerate() {
        let j = live[q];
        a[t * nr..(t + 1) * nr].copy_from_slice(&basis[j * ld + rows.start..j * ld + rows.end]);
        for i in 0..kk {
            b[i * used.len() + t] = coef[i * kk + q];
        }
    }
    let dst = MatMut::from_column_major_slice_with_stride_mut(&mut out[rows.start..], nr, kk, ldo);
    matmul(
        dst,
        Accum::Replace,
        MatRef::from_column_major_slice(&a, nr, used.len()),
        MatRef::from_column_major_slice(&b, used.len(), kk),
        1.0,
        Par::Seq,
    );
}
