//! Singular values of a bidiagonal matrix by the dqds algorithm (differential quotient
//! difference with shifts) of Fernando and Parlett, with the shift strategy, deflation and
//! splitting of Parlett and Marques ("An implementation of the dqds algorithm (positive
//! case)", LAPACK Working Note 155), the algorithm of LAPACK's `dlasq1`…`dlasq6`.
//!
//! The bidiagonal `B` (diagonal `a`, superdiagonal `b`) is turned into the qd array
//! `q_k = a_k²`, `e_k = b_k²` of the positive definite tridiagonal `BᵀB`; each dqds step
//! computes the qd array of the shifted Cholesky-like factorisation `B̂ᵀB̂ = BBᵀ − τ I` with
//! one division per row and no square root, and every quantity stays positive as long as
//! the shift is below the smallest eigenvalue, which gives every singular value to high
//! relative accuracy. A shift that turns out too large (a negative `d`) is detected after
//! the step and retried smaller. This is several times fewer dependent divisions and square
//! roots than the implicit-shift QR iteration on `B`, which is why LAPACK computes singular
//! values without vectors this way.
//!
//! Indexing follows the paper: rows are numbered from 1, and two copies of the qd array
//! (`pp = 0`, "ping", and `pp = 1`, "pong") live interleaved in one buffer, each step
//! reading one and writing the other.

/// dqds gave up: too many iterations on a block (the caller falls back to the QR
/// iteration, as LAPACK's `bdsqr` does).
#[derive(Debug)]
pub(crate) struct Failed;

/// Machine precision as LAPACK's `dlamch('P')`.
const EPS: f64 = f64::EPSILON;
/// LAPACK's safe minimum.
const SAFMIN: f64 = f64::MIN_POSITIVE;
/// Deflation tolerance `100 ε` and its square (the qd values are squares).
const TOL: f64 = 100.0 * EPS;
const TOL2: f64 = TOL * TOL;
/// A block is reversed when its last `q` exceeds its first by this factor, so that the
/// small values the iteration converges to sit at the bottom.
const CBIAS: f64 = 1.5;

/// Index of `q_k` in copy `p` (rows from 1).
#[inline]
fn qi(k: usize, p: usize) -> usize {
    4 * (k - 1) + p
}

/// Index of `e_k` in copy `p` (rows from 1).
#[inline]
fn ei(k: usize, p: usize) -> usize {
    4 * (k - 1) + 2 + p
}

/// The singular values of the upper bidiagonal matrix with diagonal `d` and superdiagonal
/// `e` (`e.len() + 1 == d.len()`, all finite), left descending in `d`; `e` is scratch.
pub(crate) fn bidiagonal_singular_values(d: &mut [f64], e: &mut [f64]) -> Result<(), Failed> {
    let n = d.len();
    d.iter_mut().for_each(|x| *x = x.abs());
    let emax = e.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if n < 2 || emax == 0.0 {
        d.sort_unstable_by(|a, b| b.total_cmp(a));
        return Ok(());
    }
    let sigmx = d.iter().fold(emax, |m, &x| m.max(x));
    // Scale the largest element to √(ε / safmin), so that squares neither overflow nor
    // lose the small values to underflow.
    let scale = (EPS / SAFMIN).sqrt();
    let sq = |x: f64| {
        let y = (x / sigmx) * scale;
        y * y
    };
    let mut qd = Dqds::new(n);
    for k in 1..=n {
        qd.z[qi(k, 0)] = sq(d[k - 1]);
        if k < n {
            qd.z[ei(k, 0)] = sq(e[k - 1]);
        }
    }
    qd.run()?;
    for k in 1..=n {
        d[k - 1] = (qd.z[qi(k, 0)].sqrt() / scale) * sigmx;
    }
    d.sort_unstable_by(|a, b| b.total_cmp(a));
    Ok(())
}

/// The qd arrays and the state the shift strategy carries from one step to the next.
struct Dqds {
    /// `q_k`, `qq_k`, `e_k`, `ee_k` for each row `k` (copy 0 and copy 1 of `q` and `e`).
    z: Vec<f64>,
    n: usize,
    /// The copy holding the current qd array; 2 right after a block was reversed (copy 0,
    /// and the deflation tests are skipped once).
    pp: usize,
    /// Smallest `d` of the last step, and the smallest excluding the last one and two rows.
    dmin: f64,
    dmin1: f64,
    dmin2: f64,
    /// The last three `d` of the last step (`d_n`, `d_{n-1}`, `d_{n-2}`).
    dn: f64,
    dn1: f64,
    dn2: f64,
    /// The fraction of `dmin` used by the shift of type 6 (no information).
    g: f64,
    tau: f64,
    /// Which case of the shift strategy chose `tau` (negative; −11/−12 more per failure).
    ttype: i32,
    /// The accumulated shift of the current block and its rounding error.
    sigma: f64,
    desig: f64,
    qmax: f64,
}

impl Dqds {
    fn new(n: usize) -> Self {
        Dqds {
            z: vec![0.0; 4 * n],
            n,
            pp: 0,
            dmin: 0.0,
            dmin1: 0.0,
            dmin2: 0.0,
            dn: 0.0,
            dn1: 0.0,
            dn2: 0.0,
            g: 0.0,
            tau: 0.0,
            ttype: 0,
            sigma: 0.0,
            desig: 0.0,
            qmax: 0.0,
        }
    }

    /// Reverses rows `i0..=n0` of both copies (`e_k` pairs with `e_{i0+n0-1-k}`).
    fn reverse(&mut self, i0: usize, n0: usize) {
        let z = &mut self.z;
        for k in i0..=(i0 + n0 - 1) / 2 {
            for p in 0..2 {
                z.swap(qi(k, p), qi(i0 + n0 - k, p));
                z.swap(ei(k, p), ei(i0 + n0 - 1 - k, p));
            }
        }
    }

    /// Runs the algorithm on the whole qd array in copy 0; leaves the eigenvalues of `BᵀB`
    /// (the squared singular values) in the `q` of copy 0.
    fn run(&mut self) -> Result<(), Failed> {
        let n = self.n;
        let (trace_q, trace_e) = (1..=n).fold((0.0, 0.0), |(a, b), k| {
            (a + self.z[qi(k, 0)], b + self.z[ei(k, 0)])
        });
        if trace_e == 0.0 || trace_q + trace_e == 0.0 {
            return Ok(());
        }
        let (mut i0, mut n0) = (1, n);
        if CBIAS * self.z[qi(i0, 0)] < self.z[qi(n0, 0)] {
            self.reverse(i0, n0);
        }
        self.initial_splits(i0, n0);
        for _ in 0..=n {
            if n0 < 1 {
                return Ok(());
            }
            // e_{n0} holds minus the accumulated shift at which the block ending at n0 split
            // off the one below it.
            self.desig = 0.0;
            self.sigma = if n0 == n { 0.0 } else { -self.z[ei(n0, 0)] };
            if self.sigma < 0.0 {
                return Err(Failed);
            }
            // The last unreduced block i0..=n0, with a Gershgorin-type bound for the first
            // shift when the q's dominate the e's.
            let mut emax: f64 = 0.0;
            let mut qmin = self.z[qi(n0, 0)];
            let mut qmax = qmin;
            i0 = 1;
            for k in (2..=n0).rev() {
                let ek = self.z[ei(k - 1, 0)];
                if ek <= 0.0 {
                    i0 = k;
                    break;
                }
                if qmin >= 4.0 * emax {
                    qmin = qmin.min(self.z[qi(k, 0)]);
                    emax = emax.max(ek);
                }
                qmax = qmax.max(self.z[qi(k - 1, 0)] + ek);
            }
            self.qmax = qmax;
            self.pp = 0;
            if n0 - i0 > 1 {
                // Reverse when the smallest `d` of a dqd sweep is nearer the top.
                let mut dee = self.z[qi(i0, 0)];
                let (mut deemin, mut kmin) = (dee, i0);
                for k in i0..n0 {
                    dee = self.z[qi(k + 1, 0)] * (dee / (dee + self.z[ei(k, 0)]));
                    if dee <= deemin {
                        (deemin, kmin) = (dee, k + 1);
                    }
                }
                if (kmin - i0) * 2 < n0 - kmin && deemin <= 0.5 * self.z[qi(n0, 0)] {
                    self.reverse(i0, n0);
                    self.pp = 2;
                }
            }
            // Minus the first shift.
            self.dmin = -(qmin - 2.0 * qmin.sqrt() * emax.sqrt()).max(0.0);
            for _ in 0..100 * (n0 - i0 + 1) {
                if i0 > n0 {
                    break;
                }
                self.step(i0, &mut n0);
                self.pp = 1 - self.pp;
                // Split the block where an e has become negligible.
                if self.pp == 0 && n0 >= i0 + 3 {
                    let z = &mut self.z;
                    if z[ei(n0, 1)] <= TOL2 * self.qmax || z[ei(n0, 0)] <= TOL2 * self.sigma {
                        let mut split = i0 - 1;
                        let mut qmax = z[qi(i0, 0)];
                        let mut emin = z[ei(i0, 0)];
                        let mut oldemn = z[ei(i0, 1)];
                        for k in i0..=n0 - 3 {
                            if z[ei(k, 1)] <= TOL2 * z[qi(k, 0)] || z[ei(k, 0)] <= TOL2 * self.sigma
                            {
                                z[ei(k, 0)] = -self.sigma;
                                split = k;
                                qmax = 0.0;
                                emin = z[ei(k + 1, 0)];
                                oldemn = z[ei(k + 1, 1)];
                            } else {
                                qmax = qmax.max(z[qi(k + 1, 0)]);
                                emin = emin.min(z[ei(k, 0)]);
                                oldemn = oldemn.min(z[ei(k, 1)]);
                            }
                        }
                        z[ei(n0, 0)] = emin;
                        z[ei(n0, 1)] = oldemn;
                        self.qmax = qmax;
                        i0 = split + 1;
                    }
                }
            }
            if i0 <= n0 {
                return Err(Failed);
            }
        }
        if n0 < 1 { Ok(()) } else { Err(Failed) }
    }

    /// Two dqd sweeps (from copy 0 to 1 and back) with Li's test for negligible `e`s,
    /// after a backward pass that marks them, before any shift is chosen.
    fn initial_splits(&mut self, i0: usize, n0: usize) {
        let z = &mut self.z;
        for p in 0..2 {
            let o = 1 - p;
            let mut d = z[qi(n0, p)];
            for k in (i0..n0).rev() {
                if z[ei(k, p)] <= TOL2 * d {
                    z[ei(k, p)] = -0.0;
                    d = z[qi(k, p)];
                } else {
                    d = z[qi(k, p)] * (d / (d + z[ei(k, p)]));
                }
            }
            let mut d = z[qi(i0, p)];
            for k in i0..n0 {
                let (ek, qnext) = (z[ei(k, p)], z[qi(k + 1, p)]);
                let qo = d + ek;
                z[qi(k, o)] = qo;
                if ek <= TOL2 * d {
                    z[ei(k, p)] = -0.0;
                    z[qi(k, o)] = d;
                    z[ei(k, o)] = 0.0;
                    d = qnext;
                } else if SAFMIN * qnext < qo && SAFMIN * qo < qnext {
                    let t = qnext / qo;
                    z[ei(k, o)] = ek * t;
                    d *= t;
                } else {
                    z[ei(k, o)] = qnext * (ek / qo);
                    d = qnext * (d / qo);
                }
            }
            z[qi(n0, o)] = d;
        }
    }

    /// Deflates converged rows at the bottom of block `i0..=n0`, then takes one dqds step
    /// (retrying with smaller shifts until every `d` stays positive) from copy `pp` into
    /// copy `1 - pp` (`dlasq3`).
    fn step(&mut self, i0: usize, n0: &mut usize) {
        let n0in = *n0;
        let mut pp = self.pp;
        // Right after the block was reversed (pp == 2) the deflation tests are skipped.
        if pp == 2 {
            pp = 0;
        } else {
            loop {
                if *n0 < i0 {
                    return;
                }
                let m = *n0;
                let (p, o) = (pp, 1 - pp);
                let z = &mut self.z;
                let one = m == i0
                    || (m > i0 + 1
                        && !(z[ei(m - 1, p)] > TOL2 * (self.sigma + z[qi(m, p)])
                            && z[ei(m - 1, o)] > TOL2 * z[qi(m - 1, p)]));
                if one {
                    z[qi(m, 0)] = z[qi(m, p)] + self.sigma;
                    *n0 -= 1;
                    continue;
                }
                let two = m == i0 + 1
                    || !(z[ei(m - 2, p)] > TOL2 * self.sigma
                        && z[ei(m - 2, o)] > TOL2 * z[qi(m - 2, p)]);
                if two {
                    // The eigenvalues of the trailing 2×2 block.
                    let (mut qa, mut qb, eb) = (z[qi(m - 1, p)], z[qi(m, p)], z[ei(m - 1, p)]);
                    if qb > qa {
                        std::mem::swap(&mut qa, &mut qb);
                    }
                    if eb > qb * TOL2 {
                        let t = 0.5 * ((qa - qb) + eb);
                        let mut s = qb * (eb / t);
                        s = if s <= t {
                            qb * (eb / (t * (1.0 + (1.0 + s / t).sqrt())))
                        } else {
                            qb * (eb / (t + t.sqrt() * (t + s).sqrt()))
                        };
                        let t = qa + (s + eb);
                        qb *= qa / t;
                        qa = t;
                    }
                    z[qi(m - 1, 0)] = qa + self.sigma;
                    z[qi(m, 0)] = qb + self.sigma;
                    *n0 -= 2;
                    continue;
                }
                break;
            }
        }
        self.pp = pp;
        let n0 = *n0;
        let (p, o) = (pp, 1 - pp);
        // Reverse when the block has become larger at the bottom.
        if (self.dmin <= 0.0 || n0 < n0in) && CBIAS * self.z[qi(i0, p)] < self.z[qi(n0, p)] {
            self.reverse(i0, n0);
            let z = &mut self.z;
            if n0 - i0 <= 4 {
                z[ei(n0, p)] = z[ei(i0, p)];
                z[ei(n0, o)] = z[ei(i0, o)];
            }
            self.dmin2 = self.dmin2.min(z[ei(n0, p)]);
            z[ei(n0, p)] = z[ei(n0, p)].min(z[ei(i0, p)]).min(z[ei(i0 + 1, p)]);
            z[ei(n0, o)] = z[ei(n0, o)].min(z[ei(i0, o)]).min(z[ei(i0 + 1, o)]);
            self.qmax = self.qmax.max(z[qi(i0, p)]).max(z[qi(i0 + 1, p)]);
            self.dmin = -0.0;
        }
        self.choose_shift(i0, n0, n0in);
        let mut tau = self.tau;
        loop {
            tau = self.dqds(i0, n0, tau);
            if self.dmin >= 0.0 && self.dmin1 > 0.0 {
                break;
            }
            if self.dmin < 0.0
                && self.dmin1 > 0.0
                && self.z[ei(n0 - 1, o)] < TOL * (self.sigma + self.dn1)
                && self.dn.abs() < TOL * self.sigma
            {
                // Convergence hidden by a negative last d.
                self.z[qi(n0, o)] = 0.0;
                self.dmin = 0.0;
                break;
            }
            if self.dmin < 0.0 {
                // The shift was too large: a smaller one, and zero after two failures.
                tau = if self.ttype < -22 {
                    0.0
                } else if self.dmin1 > 0.0 {
                    self.ttype -= 11;
                    (tau + self.dmin) * (1.0 - 2.0 * EPS)
                } else {
                    self.ttype -= 12;
                    0.25 * tau
                };
                continue;
            }
            if self.dmin.is_nan() && tau != 0.0 {
                tau = 0.0;
                continue;
            }
            // NaN without a shift, or a possible underflow: a zero-shift dqd step with
            // underflow protection.
            self.dqd(i0, n0);
            tau = 0.0;
            break;
        }
        self.tau = tau;
        // sigma += tau, with the rounding error carried in desig.
        let t;
        if tau < self.sigma {
            self.desig += tau;
            t = self.sigma + self.desig;
            self.desig -= t - self.sigma;
        } else {
            t = self.sigma + tau;
            self.desig += self.sigma - (t - tau);
        }
        self.sigma = t;
    }

    /// Chooses the next shift `tau` for block `i0..=n0` from the `d`s of the last step
    /// (`dlasq4`): a lower bound on the smallest eigenvalue from the trailing rows when
    /// they dominate it, else a fraction of `dmin`. `n0in` is the block's end before this
    /// step's deflations. Where a bound cannot be formed (an `e` larger than its `q`),
    /// `dlasq4` returns early and keeps the previous shift; this takes the conservative
    /// fraction of `dmin` chosen up to that point instead.
    fn choose_shift(&mut self, i0: usize, n0: usize, n0in: usize) {
        const CNST1: f64 = 0.563;
        const CNST2: f64 = 1.01;
        const CNST3: f64 = 1.05;
        const THIRD: f64 = 0.333;
        if self.dmin <= 0.0 {
            self.tau = -self.dmin;
            self.ttype = -1;
            return;
        }
        let (p, o) = (self.pp, 1 - self.pp);
        let z = &self.z;
        let q = |k: usize| z[qi(k, p)];
        let e = |k: usize| z[ei(k, p)];
        // Σ e_k/q_k-like products over rows `from` down to `i0` (None when an e exceeds
        // its q: no bound then), starting from `b` and `a`, stopping once negligible.
        let tail = |from: usize, mut b: f64, mut a: f64, stop: &dyn Fn(f64, f64, f64) -> bool| {
            let mut k = from;
            while k >= i0 && k > 0 {
                if b == 0.0 {
                    break;
                }
                let prev = b;
                if e(k) > q(k) {
                    return None;
                }
                b *= e(k) / q(k);
                a += b;
                if stop(b, prev, a) {
                    break;
                }
                k -= 1;
            }
            Some(a)
        };
        let (dmin, dmin1, dmin2) = (self.dmin, self.dmin1, self.dmin2);
        let (dn, dn1, dn2) = (self.dn, self.dn1, self.dn2);
        let mut s;
        if n0in == n0 {
            // No eigenvalue deflated in this step.
            if dmin == dn || dmin == dn1 {
                let b1 = q(n0).sqrt() * e(n0 - 1).sqrt();
                let b2 = q(n0 - 1).sqrt() * e(n0 - 2).sqrt();
                let a2 = q(n0 - 1) + e(n0 - 1);
                if dmin == dn && dmin1 == dn1 {
                    // Cases 2 and 3: the last two rows separated from the rest.
                    let gap2 = dmin2 - a2 - dmin2 * 0.25;
                    let gap1 = if gap2 > 0.0 && gap2 > b2 {
                        a2 - dn - (b2 / gap2) * b2
                    } else {
                        a2 - dn - (b1 + b2)
                    };
                    if gap1 > 0.0 && gap1 > b1 {
                        s = (dn - (b1 / gap1) * b1).max(0.5 * dmin);
                        self.ttype = -2;
                    } else {
                        s = 0.0;
                        if dn > b1 {
                            s = dn - b1;
                        }
                        if a2 > b1 + b2 {
                            s = s.min(a2 - (b1 + b2));
                        }
                        s = s.max(THIRD * dmin);
                        self.ttype = -3;
                    }
                } else {
                    // Case 4: a Rayleigh-quotient residual bound.
                    self.ttype = -4;
                    s = 0.25 * dmin;
                    let start = if dmin == dn {
                        if e(n0 - 1) > q(n0 - 1) {
                            self.tau = s;
                            return;
                        }
                        Some((dn, 0.0, e(n0 - 1) / q(n0 - 1), n0 - 2))
                    } else {
                        let (qo, eo) = (z[qi(n0, o)], z[ei(n0 - 1, o)]);
                        if eo > qo || e(n0 - 2) > q(n0 - 2) {
                            self.tau = s;
                            return;
                        }
                        Some((dn1, eo / qo, e(n0 - 2) / q(n0 - 2), n0.saturating_sub(3)))
                    };
                    if let Some((gam, a2, b2, from)) = start {
                        let stop = |b: f64, prev: f64, a: f64| 100.0 * b.max(prev) < a || CNST1 < a;
                        let Some(a2) = tail(from, b2, a2 + b2, &stop) else {
                            self.tau = s;
                            return;
                        };
                        let a2 = CNST3 * a2;
                        if a2 < CNST1 {
                            s = gam * (1.0 - a2.sqrt()) / (1.0 + a2);
                        }
                    }
                }
            } else if dmin == dn2 {
                // Case 5: the bound from the third row from the end.
                self.ttype = -5;
                s = 0.25 * dmin;
                let (b1, b2) = (z[qi(n0, o)], z[qi(n0 - 1, o)]);
                let (ea, eb) = (z[ei(n0 - 2, o)], z[ei(n0 - 1, o)]);
                if ea > b2 || eb > b1 {
                    self.tau = s;
                    return;
                }
                let mut a2 = (ea / b2) * (1.0 + eb / b1);
                if n0 - i0 > 2 {
                    let b2 = e(n0 - 3) / q(n0 - 3);
                    let stop = |b: f64, prev: f64, a: f64| 100.0 * b.max(prev) < a || CNST1 < a;
                    let Some(a) = tail(n0 - 4, b2, a2 + b2, &stop) else {
                        self.tau = s;
                        return;
                    };
                    a2 = CNST3 * a;
                }
                if a2 < CNST1 {
                    s = dn2 * (1.0 - a2.sqrt()) / (1.0 + a2);
                }
            } else {
                // Case 6: no information; a growing fraction of dmin.
                self.g = if self.ttype == -6 {
                    self.g + THIRD * (1.0 - self.g)
                } else if self.ttype == -18 {
                    0.25 * THIRD
                } else {
                    0.25
                };
                s = self.g * dmin;
                self.ttype = -6;
            }
        } else if n0in == n0 + 1 {
            // One eigenvalue just deflated: dmin1 and dn1 play dmin's and dn's part.
            if dmin1 == dn1 && dmin2 == dn2 {
                self.ttype = -7;
                s = THIRD * dmin1;
                if e(n0 - 1) > q(n0 - 1) {
                    self.tau = s;
                    return;
                }
                let b1 = e(n0 - 1) / q(n0 - 1);
                let stop = |b: f64, prev: f64, a: f64| 100.0 * b.max(prev) < a;
                let Some(b2) = tail(n0 - 2, b1, b1, &stop) else {
                    self.tau = s;
                    return;
                };
                let b2 = (CNST3 * b2).sqrt();
                let a2 = dmin1 / (1.0 + b2 * b2);
                let gap2 = 0.5 * dmin2 - a2;
                if gap2 > 0.0 && gap2 > b2 * a2 {
                    s = s.max(a2 * (1.0 - CNST2 * a2 * (b2 / gap2) * b2));
                } else {
                    s = s.max(a2 * (1.0 - CNST2 * b2));
                    self.ttype = -8;
                }
            } else {
                s = if dmin1 == dn1 {
                    0.5 * dmin1
                } else {
                    0.25 * dmin1
                };
                self.ttype = -9;
            }
        } else if n0in == n0 + 2 {
            // Two eigenvalues deflated: dmin2 and dn2 play dmin's and dn's part.
            if dmin2 == dn2 && 2.0 * e(n0 - 1) < q(n0 - 1) {
                self.ttype = -10;
                s = THIRD * dmin2;
                if e(n0 - 1) > q(n0 - 1) {
                    self.tau = s;
                    return;
                }
                let b1 = e(n0 - 1) / q(n0 - 1);
                let stop = |b: f64, _prev: f64, a: f64| 100.0 * b < a;
                let Some(b2) = tail(n0 - 2, b1, b1, &stop) else {
                    self.tau = s;
                    return;
                };
                let b2 = (CNST3 * b2).sqrt();
                let a2 = dmin2 / (1.0 + b2 * b2);
                let gap2 = q(n0 - 1) + e(n0 - 2) - q(n0 - 2).sqrt() * e(n0 - 2).sqrt() - a2;
                if gap2 > 0.0 && gap2 > b2 * a2 {
                    s = s.max(a2 * (1.0 - CNST2 * a2 * (b2 / gap2) * b2));
                } else {
                    s = s.max(a2 * (1.0 - CNST2 * b2));
                }
            } else {
                s = 0.25 * dmin2;
                self.ttype = -11;
            }
        } else {
            // More than two deflated: no information.
            s = 0.0;
            self.ttype = -12;
        }
        self.tau = s;
    }

    /// One dqds transform of rows `i0..=n0` with shift `tau` from copy `pp` to `1 - pp`
    /// (`dlasq5`); returns the shift used (zero when `tau` is negligible next to `sigma`,
    /// and then tiny `d`s are flushed to zero).
    fn dqds(&mut self, i0: usize, n0: usize, mut tau: f64) -> f64 {
        let (p, o) = (self.pp, 1 - self.pp);
        let dthresh = EPS * (self.sigma + tau);
        if tau < 0.5 * dthresh {
            tau = 0.0;
        }
        let flush = tau == 0.0;
        let z = &mut self.z;
        let mut emin = z[qi(i0 + 1, p)];
        let mut d = z[qi(i0, p)] - tau;
        let mut dmin = d;
        for k in i0..n0 - 2 {
            let ek = z[ei(k, p)];
            let qo = d + ek;
            z[qi(k, o)] = qo;
            let t = z[qi(k + 1, p)] / qo;
            d = d * t - tau;
            if flush && d < dthresh {
                d = 0.0;
            }
            dmin = dmin.min(d);
            let eo = ek * t;
            z[ei(k, o)] = eo;
            emin = emin.min(eo);
        }
        // The last two rows divide first (d, not the ratio, is what the shift strategy
        // reads there).
        self.dn2 = d;
        self.dmin2 = dmin;
        let mut last = |k: usize, d: f64| {
            let (ek, qnext) = (z[ei(k, p)], z[qi(k + 1, p)]);
            let qo = d + ek;
            z[qi(k, o)] = qo;
            z[ei(k, o)] = qnext * (ek / qo);
            qnext * (d / qo) - tau
        };
        self.dn1 = last(n0 - 2, self.dn2);
        dmin = dmin.min(self.dn1);
        self.dmin1 = dmin;
        self.dn = last(n0 - 1, self.dn1);
        self.dmin = dmin.min(self.dn);
        z[qi(n0, o)] = self.dn;
        z[ei(n0, o)] = emin;
        tau
    }

    /// One dqd transform (no shift) of rows `i0..=n0` from copy `pp` to `1 - pp`, guarded
    /// against underflow (`dlasq6`).
    fn dqd(&mut self, i0: usize, n0: usize) {
        let (p, o) = (self.pp, 1 - self.pp);
        let z = &mut self.z[..];
        let mut emin = z[qi(i0 + 1, p)];
        let mut d = z[qi(i0, p)];
        let mut dmin = d;
        for k in i0..n0 - 2 {
            let zero;
            (d, zero) = dqd_row(z, k, p, d);
            if zero {
                dmin = d;
                emin = 0.0;
            }
            dmin = dmin.min(d);
            emin = emin.min(z[ei(k, o)]);
        }
        self.dn2 = d;
        self.dmin2 = dmin;
        let (dn1, zero) = dqd_row(z, n0 - 2, p, d);
        if zero {
            dmin = dn1;
            emin = 0.0;
        }
        dmin = dmin.min(dn1);
        self.dmin1 = dmin;
        let (dn, zero) = dqd_row(z, n0 - 1, p, dn1);
        if zero {
            dmin = dn;
            emin = 0.0;
        }
        self.dn1 = dn1;
        self.dn = dn;
        self.dmin = dmin.min(dn);
        z[qi(n0, o)] = dn;
        z[ei(n0, o)] = emin;
    }
}

/// Row `k` of a dqd transform from copy `p` to `1 - p` with incoming `d`: writes `q̂_k` and
/// `ê_k`, returns the next `d` and whether `q̂_k` was zero.
fn dqd_row(z: &mut [f64], k: usize, p: usize, d: f64) -> (f64, bool) {
    let o = 1 - p;
    let (ek, qnext) = (z[ei(k, p)], z[qi(k + 1, p)]);
    let qo = d + ek;
    z[qi(k, o)] = qo;
    if qo == 0.0 {
        z[ei(k, o)] = 0.0;
        (qnext, true)
    } else if SAFMIN * qnext < qo && SAFMIN * qo < qnext {
        let t = qnext / qo;
        z[ei(k, o)] = ek * t;
        (d * t, false)
    } else {
        z[ei(k, o)] = qnext * (ek / qo);
        (qnext * (d / qo), false)
    }
}
