//! Continuous distributions that are direct transforms of uniform, normal or exponential
//! draws, each drawing exactly what NumPy's `Generator` method of the same name draws
//! (`numpy/random/src/distributions/distributions.c`).

use crate::error::{RandomError, Result, finite, non_negative, positive};
use crate::generator::Generator;
use std::f64::consts::PI;

impl Generator {
    /// `normal(loc, scale)`: `loc + scale * z`, z standard normal.
    pub fn normal(&mut self, loc: f64, scale: f64) -> Result<f64> {
        non_negative("scale", scale)?;
        Ok(loc + scale * self.standard_normal())
    }

    /// `uniform(low, high)`: `low + (high - low) * u`; the range must be finite.
    pub fn uniform(&mut self, low: f64, high: f64) -> Result<f64> {
        let range = high - low;
        finite("high - low", range)?;
        Ok(low + range * self.random())
    }

    /// `exponential(scale)`: `scale * e`, e from the exponential ziggurat.
    pub fn exponential(&mut self, scale: f64) -> Result<f64> {
        non_negative("scale", scale)?;
        Ok(scale * self.standard_exponential())
    }

    /// `lognormal(mean, sigma)`: `exp(normal(mean, sigma))`.
    pub fn lognormal(&mut self, mean: f64, sigma: f64) -> Result<f64> {
        non_negative("sigma", sigma)?;
        Ok((mean + sigma * self.standard_normal()).exp())
    }

    /// Half-normal as SciPy's `halfnorm.rvs` and PyTensor draw it: `loc + scale * |z|`.
    pub fn halfnormal(&mut self, loc: f64, scale: f64) -> Result<f64> {
        non_negative("scale", scale)?;
        Ok(loc + scale * self.standard_normal().abs())
    }

    /// `standard_cauchy()`: the ratio of two standard normals.
    pub fn standard_cauchy(&mut self) -> f64 {
        let num = self.standard_normal();
        num / self.standard_normal()
    }

    /// `laplace(loc, scale)` by inversion; a uniform draw of exactly 0 is redrawn.
    pub fn laplace(&mut self, loc: f64, scale: f64) -> Result<f64> {
        non_negative("scale", scale)?;
        loop {
            let u = self.random();
            if u >= 0.5 {
                return Ok(loc - scale * (2.0 - u - u).ln());
            }
            if u > 0.0 {
                return Ok(loc + scale * (u + u).ln());
            }
        }
    }

    /// `logistic(loc, scale)` by inversion; a uniform draw of exactly 0 is redrawn.
    pub fn logistic(&mut self, loc: f64, scale: f64) -> Result<f64> {
        non_negative("scale", scale)?;
        loop {
            let u = self.random();
            if u > 0.0 {
                return Ok(loc + scale * (u / (1.0 - u)).ln());
            }
        }
    }

    /// `gumbel(loc, scale)` by inversion of `1 - u`; `1 - u == 1` is redrawn.
    pub fn gumbel(&mut self, loc: f64, scale: f64) -> Result<f64> {
        non_negative("scale", scale)?;
        loop {
            let u = 1.0 - self.random();
            if u < 1.0 {
                return Ok(loc - scale * (-u.ln()).ln());
            }
        }
    }

    /// `pareto(a)` (Lomax, support from 0): `expm1(e / a)`, e standard exponential.
    pub fn pareto(&mut self, a: f64) -> Result<f64> {
        positive("a", a)?;
        Ok((self.standard_exponential() / a).exp_m1())
    }

    /// `weibull(a)`: `e ^ (1 / a)`, e standard exponential; 0 when `a == 0`.
    pub fn weibull(&mut self, a: f64) -> Result<f64> {
        non_negative("a", a)?;
        if a == 0.0 {
            return Ok(0.0);
        }
        Ok(self.standard_exponential().powf(1.0 / a))
    }

    /// `wald(mean, scale)`: Michael, Schucany & Haas's transformation of one normal and one
    /// uniform draw, with the smaller root written as `mean * (1 - 2 / d)` (no cancellation),
    /// as NumPy 2's `Generator` writes it.
    pub fn wald(&mut self, mean: f64, scale: f64) -> Result<f64> {
        positive("mean", mean)?;
        positive("scale", scale)?;
        let z = self.standard_normal();
        let y = mean * z * z;
        let d = 1.0 + (1.0 + 4.0 * scale / y).sqrt();
        let x = mean * (1.0 - 2.0 / d);
        let u = self.random();
        Ok(if u <= mean / (mean + x) {
            x
        } else {
            mean * mean / x
        })
    }

    /// `triangular(left, mode, right)` by inversion of one uniform draw.
    pub fn triangular(&mut self, left: f64, mode: f64, right: f64) -> Result<f64> {
        if left > mode {
            return Err(RandomError::new(
                "left",
                format!("left > mode (expected left <= mode, got {left} > {mode})"),
            ));
        }
        if mode > right {
            return Err(RandomError::new(
                "mode",
                format!("mode > right (expected mode <= right, got {mode} > {right})"),
            ));
        }
        if left == right {
            return Err(RandomError::new(
                "left",
                format!("left == right (expected left < right, got {left} == {right})"),
            ));
        }
        let base = right - left;
        let leftbase = mode - left;
        let ratio = leftbase / base;
        let leftprod = leftbase * base;
        let rightprod = (right - mode) * base;
        let u = self.random();
        Ok(if u <= ratio {
            left + (u * leftprod).sqrt()
        } else {
            right - ((1.0 - u) * rightprod).sqrt()
        })
    }

    /// `vonmises(mu, kappa)`: Best & Fisher's rejection sampler, wrapped to `[-pi, pi]`; a
    /// uniform angle for `kappa < 1e-8` and a wrapped normal for `kappa > 1e6`, as NumPy does.
    pub fn vonmises(&mut self, mu: f64, kappa: f64) -> Result<f64> {
        non_negative("kappa", kappa)?;
        if kappa.is_nan() {
            // NumPy returns NaN for a NaN `kappa` before drawing anything.
            return Ok(f64::NAN);
        }
        if kappa < 1e-8 {
            return Ok(PI * (2.0 * self.random() - 1.0));
        }
        if kappa > 1e6 {
            let mut result = mu + (1.0 / kappa).sqrt() * self.standard_normal();
            if result < -PI {
                result += 2.0 * PI;
            }
            if result > PI {
                result -= 2.0 * PI;
            }
            return Ok(result);
        }
        let s = if kappa < 1e-5 {
            1.0 / kappa + kappa
        } else {
            let r = 1.0 + (1.0 + 4.0 * kappa * kappa).sqrt();
            let rho = (r - (2.0 * r).sqrt()) / (2.0 * kappa);
            (1.0 + rho * rho) / (2.0 * rho)
        };
        let w = loop {
            let u = self.random();
            let z = (PI * u).cos();
            let w = (1.0 + s * z) / (s + z);
            let y = kappa * (s - w);
            let v = self.random();
            if y * (2.0 - y) - v >= 0.0 || (y / v).ln() + 1.0 - y >= 0.0 {
                break w;
            }
        };
        let u = self.random();
        let mut result = w.acos();
        if u < 0.5 {
            result = -result;
        }
        result += mu;
        let neg = result < 0.0;
        let mut m = (result.abs() + PI) % (2.0 * PI) - PI;
        if neg {
            m = -m;
        }
        Ok(m)
    }
}
