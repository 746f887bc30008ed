//! The log-gamma and log-factorial approximations NumPy's discrete samplers use. They must be
//! NumPy's own (not the most accurate available) because accept/reject decisions compare
//! against them.

mod logfact_table;

use logfact_table::LOGFACT;
use std::f64::consts::PI;

/// NumPy's `random_loggam`: log Γ(x) for x > 0 by the Stirling series of Zhang & Jin
/// ("Computation of Special Functions", 1996), shifting x up to 7 and back for small x.
pub fn loggam(x: f64) -> f64 {
    const A: [f64; 10] = [
        8.333_333_333_333_333e-2,
        -2.777_777_777_777_778e-3,
        7.936_507_936_507_937e-4,
        -5.952_380_952_380_952e-4,
        8.417_508_417_508_418e-4,
        -1.917_526_917_526_918e-3,
        6.410_256_410_256_41e-3,
        -2.955_065_359_477_124e-2,
        1.796_443_723_688_307e-1,
        -1.392_432_216_905_9,
    ];
    if x == 1.0 || x == 2.0 {
        return 0.0;
    }
    let mut n: i64 = 0;
    let mut x0 = x;
    if x <= 7.0 {
        n = (7.0 - x) as i64;
        x0 = x + n as f64;
    }
    let x2 = 1.0 / (x0 * x0);
    let xp = 2.0 * PI;
    let mut gl0 = A[9];
    for &a in A[..9].iter().rev() {
        gl0 *= x2;
        gl0 += a;
    }
    let mut gl = gl0 / x0 + 0.5 * xp.ln() + (x0 - 0.5) * x0.ln() - x0;
    if x <= 7.0 {
        for _ in 0..n {
            gl -= (x0 - 1.0).ln();
            x0 -= 1.0;
        }
    }
    gl
}

/// NumPy's `logfactorial`: log(k!) from a table below 126, else the Stirling series truncated
/// after the 1/k^3 term.
pub fn logfactorial(k: i64) -> f64 {
    const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;
    if let Some(&v) = usize::try_from(k).ok().and_then(|i| LOGFACT.get(i)) {
        return v;
    }
    let kf = k as f64;
    (kf + 0.5) * kf.ln() - kf + (HALF_LN_2PI + (1.0 / kf) * (1.0 / 12.0 - 1.0 / (360.0 * kf * kf)))
}
