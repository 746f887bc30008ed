//! The gamma family: standard gamma (Marsaglia & Tsang 2000 for shape >= 1, Stuart's
//! power/exponential rejection for shape < 1, the exponential ziggurat for shape == 1) and the
//! distributions NumPy builds from it: gamma, beta, chi-square and Student's t.

use crate::error::{Result, non_negative, positive};
use crate::generator::Generator;

impl Generator {
    /// `standard_gamma(shape)` without argument checks (shape >= 0 assumed), as NumPy's
    /// `random_standard_gamma`.
    pub(crate) fn standard_gamma_unchecked(&mut self, shape: f64) -> f64 {
        if shape == 1.0 {
            return self.standard_exponential();
        }
        if shape == 0.0 {
            return 0.0;
        }
        if shape < 1.0 {
            loop {
                let u = self.random();
                let v = self.standard_exponential();
                if u <= 1.0 - shape {
                    let x = u.powf(1.0 / shape);
                    if x <= v {
                        return x;
                    }
                } else {
                    let y = -((1.0 - u) / shape).ln();
                    let x = (1.0 - shape + shape * y).powf(1.0 / shape);
                    if x <= v + y {
                        return x;
                    }
                }
            }
        }
        let b = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * b).sqrt();
        loop {
            let (x, mut v) = loop {
                let x = self.standard_normal();
                let v = 1.0 + c * x;
                // NumPy's `do { .. } while (V <= 0.0)`: a NaN `v` (NaN shape) leaves the loop.
                if v > 0.0 || v.is_nan() {
                    break (x, v);
                }
            };
            v = v * v * v;
            let u = self.random();
            if u < 1.0 - 0.0331 * (x * x) * (x * x) {
                return b * v;
            }
            if u.ln() < 0.5 * x * x + b * (1.0 - v + v.ln()) {
                return b * v;
            }
        }
    }

    /// `standard_gamma(shape)`: Gamma(shape, 1).
    pub fn standard_gamma(&mut self, shape: f64) -> Result<f64> {
        non_negative("shape", shape)?;
        Ok(self.standard_gamma_unchecked(shape))
    }

    /// `standard_gamma(shape, dtype=float32)`: the same algorithm in single precision, on the
    /// `f32` ziggurats.
    pub fn standard_gamma_f32(&mut self, shape: f32) -> Result<f32> {
        non_negative("shape", f64::from(shape))?;
        if shape == 1.0 {
            return Ok(self.standard_exponential_f32());
        }
        if shape == 0.0 {
            return Ok(0.0);
        }
        if shape < 1.0 {
            loop {
                let u = self.random_f32();
                let v = self.standard_exponential_f32();
                if u <= 1.0 - shape {
                    let x = u.powf(1.0 / shape);
                    if x <= v {
                        return Ok(x);
                    }
                } else {
                    let y = -((1.0 - u) / shape).ln();
                    let x = (1.0 - shape + shape * y).powf(1.0 / shape);
                    if x <= v + y {
                        return Ok(x);
                    }
                }
            }
        }
        let b = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * b).sqrt();
        loop {
            let (x, mut v) = loop {
                let x = self.standard_normal_f32();
                let v = 1.0 + c * x;
                // NumPy's `do { .. } while (V <= 0.0)`: a NaN `v` (NaN shape) leaves the loop.
                if v > 0.0 || v.is_nan() {
                    break (x, v);
                }
            };
            v = v * v * v;
            let u = self.random_f32();
            if u < 1.0 - 0.0331 * (x * x) * (x * x) {
                return Ok(b * v);
            }
            if u.ln() < 0.5 * x * x + b * (1.0 - v + v.ln()) {
                return Ok(b * v);
            }
        }
    }

    /// `gamma(shape, scale)`: `scale * standard_gamma(shape)`.
    pub fn gamma(&mut self, shape: f64, scale: f64) -> Result<f64> {
        non_negative("shape", shape)?;
        non_negative("scale", scale)?;
        Ok(scale * self.standard_gamma_unchecked(shape))
    }

    /// `beta(a, b)` without argument checks (a, b > 0 assumed), as NumPy's `random_beta`:
    /// Jöhnk's algorithm when both are <= 1 (in log space when either power underflows), the ratio
    /// `Ga / (Ga + Gb)` of gamma draws otherwise.
    pub(crate) fn beta_unchecked(&mut self, a: f64, b: f64) -> f64 {
        if a <= 1.0 && b <= 1.0 {
            loop {
                let u = self.random();
                let v = self.random();
                let x = u.powf(1.0 / a);
                let y = v.powf(1.0 / b);
                let xpy = x + y;
                if xpy <= 1.0 && u + v > 0.0 {
                    if x > 0.0 && y > 0.0 {
                        return x / xpy;
                    }
                    let mut log_x = u.ln() / a;
                    let mut log_y = v.ln() / b;
                    let log_m = if log_x > log_y { log_x } else { log_y };
                    log_x -= log_m;
                    log_y -= log_m;
                    // log(exp(log_x) + exp(log_y)) as NumPy's `logaddexp` evaluates it.
                    let log_sum = if log_x >= log_y {
                        log_x + (log_y - log_x).exp().ln_1p()
                    } else {
                        log_y + (log_x - log_y).exp().ln_1p()
                    };
                    return (log_x - log_sum).exp();
                }
            }
        }
        let ga = self.standard_gamma_unchecked(a);
        let gb = self.standard_gamma_unchecked(b);
        ga / (ga + gb)
    }

    /// `beta(a, b)`.
    pub fn beta(&mut self, a: f64, b: f64) -> Result<f64> {
        positive("a", a)?;
        positive("b", b)?;
        Ok(self.beta_unchecked(a, b))
    }

    /// `chisquare(df)`: `2 * standard_gamma(df / 2)`.
    pub fn chisquare(&mut self, df: f64) -> Result<f64> {
        positive("df", df)?;
        Ok(2.0 * self.standard_gamma_unchecked(df / 2.0))
    }

    /// `standard_t(df)`: `sqrt(df / 2) * z / sqrt(standard_gamma(df / 2))`.
    pub fn standard_t(&mut self, df: f64) -> Result<f64> {
        positive("df", df)?;
        let num = self.standard_normal();
        let denom = self.standard_gamma_unchecked(df / 2.0);
        Ok((df / 2.0).sqrt() * num / denom.sqrt())
    }
}
