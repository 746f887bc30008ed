//! A complex Schur decomposition and the Bartels–Stewart solver of `A X + X B = Q` built on it.
//!
//! faer 0.24 computes Schur forms only inside its eigenvalue routines (the routine is
//! crate-private), so this module has its own: Householder reduction to Hessenberg form, then
//! the single-shift complex QR algorithm (Wilkinson shifts, Givens rotations, deflation on
//! small subdiagonals, an exceptional shift every ten sweeps without progress). Working in
//! complex arithmetic keeps the triangular factor truly triangular (no 2×2 blocks), so the
//! Bartels–Stewart back-substitution is a plain triangular solve per column. Everything here
//! runs in `f64` on row-major slices; callers convert.

use std::ops::{Add, Div, Mul, Neg, Sub};

/// A complex number in `f64`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub(crate) struct C {
    re: f64,
    im: f64,
}

impl C {
    const ZERO: C = C { re: 0.0, im: 0.0 };

    fn real(re: f64) -> C {
        C { re, im: 0.0 }
    }
    fn conj(self) -> C {
        C {
            re: self.re,
            im: -self.im,
        }
    }
    fn abs(self) -> f64 {
        self.re.hypot(self.im)
    }
    fn scale(self, s: f64) -> C {
        C {
            re: self.re * s,
            im: self.im * s,
        }
    }
    fn sqrt(self) -> C {
        let r = self.abs();
        let re = ((r + self.re) / 2.0).max(0.0).sqrt();
        let im = ((r - self.re) / 2.0).max(0.0).sqrt();
        C {
            re,
            im: if self.im < 0.0 { -im } else { im },
        }
    }
}

impl Add for C {
    type Output = C;
    fn add(self, o: C) -> C {
        C {
            re: self.re + o.re,
            im: self.im + o.im,
        }
    }
}
impl Sub for C {
    type Output = C;
    fn sub(self, o: C) -> C {
        C {
            re: self.re - o.re,
            im: self.im - o.im,
        }
    }
}
impl Mul for C {
    type Output = C;
    fn mul(self, o: C) -> C {
        C {
            re: self.re * o.re - self.im * o.im,
            im: self.re * o.im + self.im * o.re,
        }
    }
}
impl Div for C {
    type Output = C;
    fn div(self, o: C) -> C {
        // Smith's algorithm avoids overflow in |o|².
        if o.re.abs() >= o.im.abs() {
            let r = o.im / o.re;
            let d = o.re + o.im * r;
            C {
                re: (self.re + self.im * r) / d,
                im: (self.im - self.re * r) / d,
            }
        } else {
            let r = o.re / o.im;
            let d = o.re * r + o.im;
            C {
                re: (self.re * r + self.im) / d,
                im: (self.im * r - self.re) / d,
            }
        }
    }
}
impl Neg for C {
    type Output = C;
    fn neg(self) -> C {
        C {
            re: -self.re,
            im: -self.im,
        }
    }
}

/// A square complex matrix, row-major.
struct Sq {
    n: usize,
    d: Vec<C>,
}

impl Sq {
    fn at(&self, i: usize, j: usize) -> C {
        self.d[i * self.n + j]
    }
    fn set(&mut self, i: usize, j: usize, v: C) {
        self.d[i * self.n + j] = v;
    }
}

/// Why the Schur decomposition or the Sylvester solve failed.
#[derive(Debug, PartialEq)]
pub(crate) enum SchurError {
    /// The QR iteration did not converge (or the input had NaN/inf).
    NoConvergence,
    /// `A` and `−B` share an eigenvalue: the Sylvester equation has no unique solution.
    Singular,
}

/// Reduces real `a` (n×n, row-major) to upper Hessenberg `h = qᵀ a q` by Householder
/// reflections; returns `(h, q)` as complex matrices.
fn hessenberg(a: &[f64], n: usize) -> (Sq, Sq) {
    let mut h = a.to_vec();
    let mut q: Vec<f64> = (0..n * n)
        .map(|x| if x / n == x % n { 1.0 } else { 0.0 })
        .collect();
    for k in 0..n.saturating_sub(2) {
        let mut v: Vec<f64> = (k + 1..n).map(|i| h[i * n + k]).collect();
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm == 0.0 {
            continue;
        }
        let alpha = if v[0] > 0.0 { -norm } else { norm };
        v[0] -= alpha;
        let vn = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if vn == 0.0 {
            continue;
        }
        v.iter_mut().for_each(|x| *x /= vn);
        // h ← (I − 2vvᵀ) h on rows k+1.., then h ← h (I − 2vvᵀ) and q ← q (I − 2vvᵀ) on
        // columns k+1..
        for j in 0..n {
            let dot: f64 = v
                .iter()
                .enumerate()
                .map(|(t, x)| x * h[(k + 1 + t) * n + j])
                .sum();
            for (t, x) in v.iter().enumerate() {
                h[(k + 1 + t) * n + j] -= 2.0 * x * dot;
            }
        }
        for m in [&mut h, &mut q] {
            for i in 0..n {
                let dot: f64 = v
                    .iter()
                    .enumerate()
                    .map(|(t, x)| x * m[i * n + k + 1 + t])
                    .sum();
                for (t, x) in v.iter().enumerate() {
                    m[i * n + k + 1 + t] -= 2.0 * x * dot;
                }
            }
        }
        for i in k + 2..n {
            h[i * n + k] = 0.0;
        }
    }
    let to_c = |m: Vec<f64>| Sq {
        n,
        d: m.into_iter().map(C::real).collect(),
    };
    (to_c(h), to_c(q))
}

/// A Givens rotation `G = [[c, s], [−s̄, c]]` (c real) with `G [x; y] = [r; 0]`.
fn givens(x: C, y: C) -> (f64, C) {
    let (ax, ay) = (x.abs(), y.abs());
    if ay == 0.0 {
        return (1.0, C::ZERO);
    }
    if ax == 0.0 {
        return (0.0, y.conj().scale(1.0 / ay));
    }
    let r = ax.hypot(ay);
    (ax / r, x.scale(1.0 / ax) * y.conj().scale(1.0 / r))
}

/// The complex Schur form `a = u t uᴴ` of real `a`: returns `(t, u)`, `t` upper triangular.
fn schur(a: &[f64], n: usize) -> Result<(Sq, Sq), SchurError> {
    if a.iter().any(|x| !x.is_finite()) {
        return Err(SchurError::NoConvergence);
    }
    let (mut h, mut z) = hessenberg(a, n);
    let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let mut hi = n;
    let mut stalled = 0usize;
    let mut total = 0usize;
    while hi > 1 {
        let mut lo = 0;
        for k in (1..hi).rev() {
            let near = h.at(k - 1, k - 1).abs() + h.at(k, k).abs();
            let tol = f64::EPSILON * if near > 0.0 { near } else { scale };
            if h.at(k, k - 1).abs() <= tol {
                h.set(k, k - 1, C::ZERO);
                lo = k;
                break;
            }
        }
        if lo == hi - 1 {
            hi -= 1;
            stalled = 0;
            continue;
        }
        stalled += 1;
        total += 1;
        if total > 60 * n.max(10) {
            return Err(SchurError::NoConvergence);
        }
        let (p, q) = (hi - 2, hi - 1);
        let mu = if stalled.is_multiple_of(10) {
            h.at(q, q) + C::real(0.75 * h.at(q, p).abs())
        } else {
            let (a, b, c, d) = (h.at(p, p), h.at(p, q), h.at(q, p), h.at(q, q));
            let half = (a - d).scale(0.5);
            let disc = (half * half + b * c).sqrt();
            let mid = (a + d).scale(0.5);
            let (m1, m2) = (mid + disc, mid - disc);
            if (m1 - d).abs() <= (m2 - d).abs() {
                m1
            } else {
                m2
            }
        };
        for k in lo..hi {
            h.set(k, k, h.at(k, k) - mu);
        }
        let mut rots = Vec::with_capacity(hi - lo - 1);
        for k in lo..hi - 1 {
            let (c, s) = givens(h.at(k, k), h.at(k + 1, k));
            for j in k..n {
                let (u, v) = (h.at(k, j), h.at(k + 1, j));
                h.set(k, j, u.scale(c) + s * v);
                h.set(k + 1, j, -(s.conj() * u) + v.scale(c));
            }
            rots.push((k, c, s));
        }
        for &(k, c, s) in &rots {
            let rot = |m: &mut Sq, rows: usize| {
                for i in 0..rows {
                    let (u, v) = (m.at(i, k), m.at(i, k + 1));
                    m.set(i, k, u.scale(c) + v * s.conj());
                    m.set(i, k + 1, -(u * s) + v.scale(c));
                }
            };
            rot(&mut h, (k + 2).min(hi));
            rot(&mut z, n);
        }
        for k in lo..hi {
            h.set(k, k, h.at(k, k) + mu);
        }
    }
    for i in 0..n {
        for j in 0..i {
            h.set(i, j, C::ZERO);
        }
    }
    Ok((h, z))
}

/// `x` with `a x + x b = q` (`a` m×m, `b` n×n, `q` m×n, all real row-major) by
/// Bartels–Stewart on complex Schur forms; returns the real `x` (m×n).
pub(crate) fn sylvester(
    a: &[f64],
    b: &[f64],
    q: &[f64],
    m: usize,
    n: usize,
) -> Result<Vec<f64>, SchurError> {
    let (s, u) = schur(a, m)?;
    let (t, v) = schur(b, n)?;
    // f = uᴴ q v
    let mut qv = vec![C::ZERO; m * n];
    for i in 0..m {
        for j in 0..n {
            qv[i * n + j] = (0..n).fold(C::ZERO, |acc, k| acc + v.at(k, j).scale(q[i * n + k]));
        }
    }
    let mut f = vec![C::ZERO; m * n];
    for i in 0..m {
        for j in 0..n {
            f[i * n + j] = (0..m).fold(C::ZERO, |acc, k| acc + u.at(k, i).conj() * qv[k * n + j]);
        }
    }
    // Solve s y + y t = f column by column: (s + t_jj I) y_j = f_j − Σ_{k<j} t_kj y_k.
    let mut y = vec![C::ZERO; m * n];
    for j in 0..n {
        let mut rhs: Vec<C> = (0..m)
            .map(|i| (0..j).fold(f[i * n + j], |acc, k| acc - t.at(k, j) * y[i * n + k]))
            .collect();
        for i in (0..m).rev() {
            let acc = (i + 1..m).fold(rhs[i], |acc, l| acc - s.at(i, l) * rhs[l]);
            let d = s.at(i, i) + t.at(j, j);
            if d == C::ZERO {
                return Err(SchurError::Singular);
            }
            rhs[i] = acc / d;
        }
        for i in 0..m {
            y[i * n + j] = rhs[i];
        }
    }
    // x = u y vᴴ, real part.
    let mut uy = vec![C::ZERO; m * n];
    for i in 0..m {
        for j in 0..n {
            uy[i * n + j] = (0..m).fold(C::ZERO, |acc, k| acc + u.at(i, k) * y[k * n + j]);
        }
    }
    Ok((0..m * n)
        .map(|x| {
            let (i, j) = (x / n, x % n);
            (0..n)
                .fold(C::ZERO, |acc, k| acc + uy[i * n + k] * v.at(j, k).conj())
                .re
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_schur(a: &[f64], n: usize) {
        let (t, u) = schur(a, n).expect("converges");
        let scale = a.iter().fold(1.0f64, |m, x| m.max(x.abs()));
        for i in 0..n {
            for j in 0..n {
                let v = (0..n).fold(C::ZERO, |acc, k| {
                    acc + (0..n).fold(C::ZERO, |s, l| {
                        s + u.at(i, k) * t.at(k, l) * u.at(j, l).conj()
                    })
                });
                let err = (v.re - a[i * n + j]).abs().max(v.im.abs());
                assert!(
                    err < 1e-12 * scale * n as f64,
                    "({i},{j}) {v:?} vs {}",
                    a[i * n + j]
                );
                if i > j {
                    assert_eq!(t.at(i, j), C::ZERO);
                }
            }
        }
    }

    #[test]
    fn schur_reconstructs_hard_matrices() {
        let n = 5;
        let general: Vec<f64> = (0..n * n)
            .map(|x| ((x * 37 % 11) as f64 - 5.0) / 3.0)
            .collect();
        check_schur(&general, n);
        // A cyclic permutation: eigenvalues on the unit circle, where unshifted QR stalls.
        let cyclic: Vec<f64> = (0..n * n)
            .map(|x| if (x / n + 1) % n == x % n { 1.0 } else { 0.0 })
            .collect();
        check_schur(&cyclic, n);
        // A Jordan block (defective), a zero matrix, an already triangular matrix.
        let jordan: Vec<f64> = (0..n * n)
            .map(|x| {
                if x / n == x % n {
                    2.0
                } else if x % n == x / n + 1 {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        check_schur(&jordan, n);
        check_schur(&vec![0.0; n * n], n);
        let upper: Vec<f64> = (0..n * n)
            .map(|x| if x / n <= x % n { x as f64 } else { 0.0 })
            .collect();
        check_schur(&upper, n);
        check_schur(&[3.0], 1);
        check_schur(&[], 0);
        assert_eq!(schur(&[f64::NAN], 1).err(), Some(SchurError::NoConvergence));
    }

    #[test]
    fn sylvester_reports_a_shared_eigenvalue() {
        // A = 1, B = −1: a x + x b = 0 x.
        assert_eq!(
            sylvester(&[1.0], &[-1.0], &[1.0], 1, 1),
            Err(SchurError::Singular)
        );
    }
}
