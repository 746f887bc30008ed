//! The roots of the secular equation `1 + Σ zⱼ² / (dⱼ² − σ²) = 0` of a divide-and-conquer
//! merge ([`crate::bidiag_dc`]), each found relative to its nearer pole.
//!
//! Between poles `dᵢ < dᵢ₊₁` the function increases from −∞ to +∞; its sign at the middle
//! of `(dᵢ², dᵢ₊₁²)` says which pole is nearer, and the root is sought as `σ² = d₀² + μ`
//! with that pole `d₀` as origin, so that every `dⱼ² − σ² = (dⱼ − d₀)(dⱼ + d₀) − μ` is
//! computed with small relative error (what the vectors' orthogonality needs). Each step
//! fits a model with the two neighbouring poles to the function's value and slope at the
//! current `μ` (in the spirit of Ren-Cang Li's "middle way", which LAPACK's `lasd4` uses)
//! and solves its quadratic; a bracket kept by the signs seen so far catches a step that leaves it by
//! bisection.

use crate::bidiag_dc::NoConvergence;

/// One root of the secular equation: `σ² = d[origin]² + mu`.
#[derive(Clone, Copy)]
pub(crate) struct Root {
    /// The index of the pole taken as origin.
    pub(crate) origin: usize,
    /// `σ² − d[origin]²`.
    pub(crate) mu: f64,
}

/// The root of `1 + Σ zⱼ² / (dⱼ² − σ²) = 0` between `d[i]` and `d[i+1]` (above `d[i]` for
/// the last), relative to the nearer of the two poles.
pub(crate) fn secular_root(d: &[f64], z: &[f64], i: usize) -> Result<Root, NoConvergence> {
    let kk = d.len();
    let eps = f64::EPSILON;
    let diff = |o: usize, j: usize| (d[j] - d[o]) * (d[j] + d[o]);
    let f_at = |o: usize, mu: f64| -> f64 {
        1.0 + (0..kk)
            .map(|j| z[j] * z[j] / (diff(o, j) - mu))
            .sum::<f64>()
    };
    let (origin, mut lo, mut hi) = if i + 1 < kk {
        let gap = diff(i, i + 1);
        if f_at(i, gap / 2.0) >= 0.0 {
            (i, 0.0, gap / 2.0)
        } else {
            (i + 1, -gap / 2.0, 0.0)
        }
    } else {
        (i, 0.0, z.iter().map(|x| x * x).sum::<f64>())
    };
    let dif: Vec<f64> = (0..kk).map(|j| diff(origin, j)).collect();
    let mut mu = (lo + hi) / 2.0;
    for _ in 0..100 {
        let (mut psi, mut dpsi, mut phi, mut dphi) = (0.0, 0.0, 0.0, 0.0);
        for j in 0..kk {
            let t = z[j] / (dif[j] - mu);
            if j <= i {
                psi += z[j] * t;
                dpsi += t * t;
            } else {
                phi += z[j] * t;
                dphi += t * t;
            }
        }
        let f = 1.0 + psi + phi;
        if f.abs() <= 8.0 * eps * kk as f64 * (1.0 + psi.abs() + phi.abs()) {
            break;
        }
        if f < 0.0 {
            lo = mu;
        } else {
            hi = mu;
        }
        // Two-pole model matching f and f′ at mu.
        let dl = dif[i] - mu;
        let sl = dl * dl * dpsi;
        let eta = if i + 1 < kk {
            let dr = dif[i + 1] - mu;
            let sr = dr * dr * dphi;
            let c = f - sl / dl - sr / dr;
            let a = c * (dl + dr) + sl + sr;
            let b = c * dl * dr + sl * dr + sr * dl;
            if c == 0.0 {
                b / a
            } else {
                let disc = (a * a - 4.0 * b * c).max(0.0).sqrt();
                let (e1, e2) = if a >= 0.0 {
                    ((a + disc) / (2.0 * c), 2.0 * b / (a + disc))
                } else {
                    ((a - disc) / (2.0 * c), 2.0 * b / (a - disc))
                };
                if e1 > dl && e1 < dr { e1 } else { e2 }
            }
        } else {
            let c = f - sl / dl;
            dl + sl / c
        };
        let next = mu + eta;
        let next = if next > lo && next < hi && next.is_finite() {
            next
        } else {
            (lo + hi) / 2.0
        };
        if (next - mu).abs() <= 2.0 * eps * next.abs() || hi - lo <= 2.0 * eps * mu.abs() {
            mu = next;
            break;
        }
        mu = next;
    }
    if !mu.is_finite() {
        return Err(NoConvergence);
    }
    Ok(Root { origin, mu })
}
