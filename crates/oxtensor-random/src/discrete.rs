//! Discrete distributions with NumPy's algorithms: Bernoulli by uniform comparison, geometric
//! (search or inversion), Poisson (multiplication, or Hörmann's PTRS for lam >= 10), binomial
//! (inversion, or Kachitvichyanukul & Schmeiser's BTPE), negative binomial (gamma-Poisson
//! mixture) and hypergeometric (urn simulation, or Stadlober's HRUA ratio of uniforms).

use crate::error::{RandomError, Result, positive_not_nan, probability};
use crate::generator::Generator;
use crate::special::{logfactorial, loggam};

/// NumPy's largest accepted Poisson mean: `int64` max minus ten standard deviations.
pub const POISSON_LAM_MAX: f64 = 9.223_372_006_484_771e18;

impl Generator {
    /// Bernoulli(p) as one uniform comparison: 1 when `random() < p`. (SciPy's `bernoulli.rvs`,
    /// which PyTensor calls, instead draws `binomial(1, p)`; use [`Generator::binomial`] for that
    /// stream.)
    pub fn bernoulli(&mut self, p: f64) -> Result<i64> {
        probability("p", p)?;
        Ok(i64::from(self.random() < p))
    }

    /// `geometric(p)`: trials up to and including the first success (support 1, 2, ...);
    /// sequential search for `p >= 1/3`, inversion of an exponential draw otherwise.
    pub fn geometric(&mut self, p: f64) -> Result<i64> {
        if !(p > 0.0 && p <= 1.0) {
            return Err(RandomError::new(
                "p",
                format!(
                    "p <= 0, p > 1 or p contains NaNs (expected a probability in (0, 1], got {p})"
                ),
            ));
        }
        if p >= 1.0 / 3.0 {
            let mut x = 1;
            let mut prod = p;
            let mut sum = p;
            let q = 1.0 - p;
            let u = self.random();
            while u > sum {
                prod *= q;
                sum += prod;
                x += 1;
            }
            return Ok(x);
        }
        let z = (-self.standard_exponential() / (-p).ln_1p()).ceil();
        Ok(if z >= 9.223_372_036_854_776e18 {
            i64::MAX
        } else {
            z as i64
        })
    }

    pub(crate) fn poisson_unchecked(&mut self, lam: f64) -> i64 {
        if lam >= 10.0 {
            return self.poisson_ptrs(lam);
        }
        if lam == 0.0 {
            return 0;
        }
        let enlam = (-lam).exp();
        let mut x = 0;
        let mut prod = 1.0;
        loop {
            prod *= self.random();
            if prod > enlam {
                x += 1;
            } else {
                return x;
            }
        }
    }

    /// Hörmann's transformed rejection with squeeze (PTRS), "The transformed rejection method
    /// for generating Poisson random variables", 1993.
    fn poisson_ptrs(&mut self, lam: f64) -> i64 {
        let slam = lam.sqrt();
        let loglam = lam.ln();
        let b = 0.931 + 2.53 * slam;
        let a = -0.059 + 0.02483 * b;
        let invalpha = 1.1239 + 1.1328 / (b - 3.4);
        let vr = 0.9277 - 3.6224 / (b - 2.0);
        loop {
            let u = self.random() - 0.5;
            let v = self.random();
            let us = 0.5 - u.abs();
            let k = ((2.0 * a / us + b) * u + lam + 0.43).floor() as i64;
            if us >= 0.07 && v <= vr {
                return k;
            }
            if k < 0 || (us < 0.013 && v > us) {
                continue;
            }
            if v.ln() + invalpha.ln() - (a / (us * us) + b).ln()
                <= -lam + k as f64 * loglam - loggam(k as f64 + 1.0)
            {
                return k;
            }
        }
    }

    /// `poisson(lam)`.
    pub fn poisson(&mut self, lam: f64) -> Result<i64> {
        if lam.is_nan() || lam < 0.0 {
            return Err(RandomError::new(
                "lam",
                format!("lam < 0 or lam is NaN (expected a number >= 0, got {lam})"),
            ));
        }
        if lam > POISSON_LAM_MAX {
            return Err(RandomError::new(
                "lam",
                format!("lam value too large (expected lam <= {POISSON_LAM_MAX}, got {lam})"),
            ));
        }
        Ok(self.poisson_unchecked(lam))
    }

    fn binomial_inversion(&mut self, n: i64, p: f64) -> i64 {
        let q = 1.0 - p;
        let qn = (n as f64 * q.ln()).exp();
        let np = n as f64 * p;
        let bound = (n as f64).min(np + 10.0 * (np * q + 1.0).sqrt()) as i64;
        let mut x = 0;
        let mut px = qn;
        let mut u = self.random();
        while u > px {
            x += 1;
            if x > bound {
                x = 0;
                px = qn;
                u = self.random();
            } else {
                u -= px;
                px = ((n - x + 1) as f64 * p * px) / (x as f64 * q);
            }
        }
        x
    }

    /// BTPE (Kachitvichyanukul & Schmeiser, "Binomial random variate generation", 1988) for
    /// `p <= 0.5` and `n * p > 30`, step for step as NumPy's `random_binomial_btpe`.
    fn binomial_btpe(&mut self, n: i64, p: f64) -> i64 {
        let nf = n as f64;
        let r = p.min(1.0 - p);
        let q = 1.0 - r;
        let fm = nf * r + r;
        let m = fm.floor() as i64;
        let mf = m as f64;
        let p1 = (2.195 * (nf * r * q).sqrt() - 4.6 * q).floor() + 0.5;
        let xm = mf + 0.5;
        let xl = xm - p1;
        let xr = xm + p1;
        let c = 0.134 + 20.5 / (15.3 + mf);
        let a = (fm - xl) / (fm - xl * r);
        let laml = a * (1.0 + a / 2.0);
        let a = (xr - fm) / (xr * q);
        let lamr = a * (1.0 + a / 2.0);
        let p2 = p1 * (1.0 + 2.0 * c);
        let p3 = p2 + c / laml;
        let p4 = p3 + c / lamr;
        let nrq = nf * r * q;
        let y = 'draw: loop {
            let u = self.random() * p4;
            let mut v = self.random();
            let y;
            if u <= p1 {
                break 'draw (xm - p1 * v + u).floor() as i64;
            } else if u <= p2 {
                let x = xl + (u - p1) / c;
                v = v * c + 1.0 - (mf - x + 0.5).abs() / p1;
                if v > 1.0 {
                    continue;
                }
                y = x.floor() as i64;
            } else if u <= p3 {
                y = (xl + v.ln() / laml).floor() as i64;
                if y < 0 || v == 0.0 {
                    continue;
                }
                v *= (u - p2) * laml;
            } else {
                y = (xr - v.ln() / lamr).floor() as i64;
                if y > n || v == 0.0 {
                    continue;
                }
                v *= (u - p3) * lamr;
            }
            let k = (y - m).abs();
            let kf = k as f64;
            if !(k > 20 && kf < nrq / 2.0 - 1.0) {
                let s = r / q;
                let a = s * (nf + 1.0);
                let mut f = 1.0;
                if m < y {
                    for i in (m + 1)..=y {
                        f *= a / i as f64 - s;
                    }
                } else if m > y {
                    for i in (y + 1)..=m {
                        f /= a / i as f64 - s;
                    }
                }
                if v > f {
                    continue;
                }
                break 'draw y;
            }
            let rho =
                (kf / nrq) * ((kf * (kf / 3.0 + 0.625) + 0.166_666_666_666_666_66) / nrq + 0.5);
            let t = -kf * kf / (2.0 * nrq);
            let big_a = v.ln();
            if big_a < t - rho {
                break 'draw y;
            }
            if big_a > t + rho {
                continue;
            }
            let yf = y as f64;
            let x1 = yf + 1.0;
            let f1 = mf + 1.0;
            let z = nf + 1.0 - mf;
            let w = nf - yf + 1.0;
            let x2 = x1 * x1;
            let f2 = f1 * f1;
            let z2 = z * z;
            let w2 = w * w;
            let stirling = |d: f64, d2: f64| {
                (13680.0 - (462.0 - (132.0 - (99.0 - 140.0 / d2) / d2) / d2) / d2) / d / 166_320.0
            };
            let bound = xm * (f1 / x1).ln()
                + (nf - mf + 0.5) * (z / w).ln()
                + (yf - mf) * (w * r / (x1 * q)).ln()
                + stirling(f1, f2)
                + stirling(z, z2)
                + stirling(x1, x2)
                + stirling(w, w2);
            if big_a > bound {
                continue;
            }
            break 'draw y;
        };
        if p > 0.5 { n - y } else { y }
    }

    pub(crate) fn binomial_unchecked(&mut self, n: i64, p: f64) -> i64 {
        if n == 0 || p == 0.0 {
            return 0;
        }
        if p <= 0.5 {
            if p * n as f64 <= 30.0 {
                self.binomial_inversion(n, p)
            } else {
                self.binomial_btpe(n, p)
            }
        } else {
            let q = 1.0 - p;
            if q * n as f64 <= 30.0 {
                n - self.binomial_inversion(n, q)
            } else {
                n - self.binomial_btpe(n, q)
            }
        }
    }

    /// `binomial(n, p)`.
    pub fn binomial(&mut self, n: i64, p: f64) -> Result<i64> {
        if n < 0 {
            return Err(RandomError::new(
                "n",
                format!("n < 0 (expected n >= 0, got {n})"),
            ));
        }
        probability("p", p)?;
        Ok(self.binomial_unchecked(n, p))
    }

    /// `negative_binomial(n, p)`: failures before the n-th success, drawn as
    /// `poisson(gamma(n, (1 - p) / p))`.
    pub fn negative_binomial(&mut self, n: f64, p: f64) -> Result<i64> {
        positive_not_nan("n", n)?;
        if !(p > 0.0 && p <= 1.0) {
            return Err(RandomError::new(
                "p",
                format!(
                    "p <= 0, p > 1 or p contains NaNs (expected a probability in (0, 1], got {p})"
                ),
            ));
        }
        let y = self.standard_gamma_unchecked(n) * ((1.0 - p) / p);
        Ok(self.poisson_unchecked(y))
    }

    fn hypergeometric_sample(&mut self, good: i64, bad: i64, sample: i64) -> i64 {
        let total = good + bad;
        let computed = if sample > total / 2 {
            total - sample
        } else {
            sample
        };
        let mut remaining_total = total;
        let mut remaining_good = good;
        let mut left = computed;
        while left > 0 && remaining_good > 0 && remaining_total > remaining_good {
            remaining_total -= 1;
            if (self.interval(remaining_total as u64) as i64) < remaining_good {
                remaining_good -= 1;
            }
            left -= 1;
        }
        if remaining_total == remaining_good {
            remaining_good -= left;
        }
        if sample > total / 2 {
            remaining_good
        } else {
            good - remaining_good
        }
    }

    /// Stadlober's HRUA ("Sampling from Poisson, Binomial and Hypergeometric Distributions:
    /// Ratio of Uniforms as a Simple and Fast Alternative", 1989), as NumPy's
    /// `hypergeometric_hrua`.
    fn hypergeometric_hrua(&mut self, good: i64, bad: i64, sample: i64) -> i64 {
        const D1: f64 = 1.715_527_769_921_413_5;
        const D2: f64 = 0.898_916_162_058_898_8;
        let popsize = good + bad;
        let computed = sample.min(popsize - sample);
        let mingb = good.min(bad);
        let maxgb = good.max(bad);
        let p = mingb as f64 / popsize as f64;
        let q = maxgb as f64 / popsize as f64;
        let mu = computed as f64 * p;
        let a = mu + 0.5;
        let var = (popsize - computed) as f64 * computed as f64 * p * q / (popsize - 1) as f64;
        let c = (var + 0.5).sqrt();
        let h = D1 * c + D2;
        let m = ((computed + 1) as f64 * (mingb + 1) as f64 / (popsize + 2) as f64).floor() as i64;
        let g = logfactorial(m)
            + logfactorial(mingb - m)
            + logfactorial(computed - m)
            + logfactorial(maxgb - computed + m);
        let b = ((computed.min(mingb) + 1) as f64).min((a + 16.0 * c).floor());
        let mut k = loop {
            let u = self.random();
            let v = self.random();
            let x = a + h * (v - 0.5) / u;
            if x < 0.0 || x >= b {
                continue;
            }
            let k = x.floor() as i64;
            let gp = logfactorial(k)
                + logfactorial(mingb - k)
                + logfactorial(computed - k)
                + logfactorial(maxgb - computed + k);
            let t = g - gp;
            if u * (4.0 - u) - 3.0 <= t {
                break k;
            }
            if u * (u - t) >= 1.0 {
                continue;
            }
            if 2.0 * u.ln() <= t {
                break k;
            }
        };
        if good > bad {
            k = computed - k;
        }
        if computed < sample {
            k = good - k;
        }
        k
    }

    /// `hypergeometric(ngood, nbad, nsample)`: good items among `nsample` drawn without
    /// replacement; HRUA when `10 <= nsample <= total - 10`, urn simulation otherwise.
    pub fn hypergeometric(&mut self, ngood: i64, nbad: i64, nsample: i64) -> Result<i64> {
        const LIMIT: i64 = 1_000_000_000;
        if !(0..LIMIT).contains(&ngood) {
            return Err(RandomError::new(
                "ngood",
                format!("ngood < 0 or ngood >= 10**9 (expected 0 <= ngood < 10**9, got {ngood})"),
            ));
        }
        if !(0..LIMIT).contains(&nbad) {
            return Err(RandomError::new(
                "nbad",
                format!("nbad < 0 or nbad >= 10**9 (expected 0 <= nbad < 10**9, got {nbad})"),
            ));
        }
        if nsample < 0 {
            return Err(RandomError::new(
                "nsample",
                format!("nsample < 0 (expected nsample >= 0, got {nsample})"),
            ));
        }
        if nsample > ngood + nbad {
            return Err(RandomError::new(
                "nsample",
                format!(
                    "ngood + nbad < nsample (expected nsample <= ngood + nbad = {}, got {nsample})",
                    ngood + nbad
                ),
            ));
        }
        Ok(if nsample >= 10 && nsample <= ngood + nbad - 10 {
            self.hypergeometric_hrua(ngood, nbad, nsample)
        } else {
            self.hypergeometric_sample(ngood, nbad, nsample)
        })
    }
}
