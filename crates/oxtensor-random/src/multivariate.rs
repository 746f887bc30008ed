//! Multivariate draws and permutations: multinomial (a chain of conditional binomials),
//! Dirichlet (normalized gammas, or beta stick-breaking when every alpha < 0.1), and
//! Fisher–Yates shuffles driven by NumPy's masked `random_interval`.

use crate::error::{RandomError, Result};
use crate::generator::Generator;

impl Generator {
    /// `multinomial(n, pvals)`: counts for each category, drawn as conditional binomials. The
    /// last category takes whatever is left, so `pvals[-1]` is not read (as in NumPy).
    pub fn multinomial(&mut self, n: i64, pvals: &[f64]) -> Result<Vec<i64>> {
        if n < 0 {
            return Err(RandomError::new(
                "n",
                format!("n < 0 (expected n >= 0, got {n})"),
            ));
        }
        if pvals.is_empty() {
            return Err(RandomError::new("pvals", "expected at least one category"));
        }
        if let Some(bad) = pvals.iter().find(|p| !(0.0..=1.0).contains(*p)) {
            return Err(RandomError::new(
                "pvals",
                format!(
                    "pvals < 0, pvals > 1 or pvals contains NaNs (expected probabilities in [0, 1], got {bad})"
                ),
            ));
        }
        let head: f64 = pvals[..pvals.len() - 1].iter().sum();
        if head > 1.0 + 1e-12 {
            return Err(RandomError::new(
                "pvals",
                format!("sum(pvals[:-1]) > 1.0 (expected at most 1, got {head})"),
            ));
        }
        let d = pvals.len();
        let mut out = vec![0i64; d];
        let mut remaining_p = 1.0;
        let mut dn = n;
        for j in 0..d - 1 {
            out[j] = self.binomial_unchecked(dn, pvals[j] / remaining_p);
            dn -= out[j];
            if dn <= 0 {
                break;
            }
            remaining_p -= pvals[j];
        }
        if dn > 0 {
            out[d - 1] = dn;
        }
        Ok(out)
    }

    /// `dirichlet(alpha)`: one point of the simplex. Every alpha must be ≥ 0 (NumPy 2): a
    /// zero alpha gives a zero component, a NaN one a NaN point.
    pub fn dirichlet(&mut self, alpha: &[f64]) -> Result<Vec<f64>> {
        if let Some(bad) = alpha.iter().find(|a| **a < 0.0) {
            return Err(RandomError::new(
                "alpha",
                format!("alpha < 0 (expected every alpha >= 0, got {bad})"),
            ));
        }
        let k = alpha.len();
        if k == 0 {
            return Ok(Vec::new());
        }
        // `alpha.max()` as NumPy computes it: NaN when any alpha is NaN, which then takes the
        // gamma path below (a NaN alpha gives a NaN point, its gammas still drawn).
        let max = alpha.iter().copied().fold(f64::NEG_INFINITY, |m, a| {
            if m.is_nan() || a.is_nan() {
                f64::NAN
            } else {
                m.max(a)
            }
        });
        if max < 0.1 {
            let mut csum = vec![0.0; k];
            let mut acc_sum = 0.0;
            for j in (0..k).rev() {
                acc_sum += alpha[j];
                csum[j] = acc_sum;
            }
            let mut out = vec![0.0; k];
            if csum[0] == 0.0 {
                // Every alpha is zero: the point is all zeros, and nothing is drawn.
                return Ok(out);
            }
            let mut acc = 1.0;
            for j in 0..k - 1 {
                let v = self.beta_unchecked(alpha[j], csum[j + 1]);
                out[j] = acc * v;
                acc *= 1.0 - v;
                if csum[j + 1] == 0.0 {
                    // Every later alpha is zero: v is 1, and the rest of the point is 0.
                    break;
                }
            }
            out[k - 1] = acc;
            return Ok(out);
        }
        let mut out: Vec<f64> = alpha
            .iter()
            .map(|&a| self.standard_gamma_unchecked(a))
            .collect();
        let total: f64 = out.iter().fold(0.0, |s, &v| s + v);
        let inv = 1.0 / total;
        for v in &mut out {
            *v *= inv;
        }
        Ok(out)
    }

    /// `shuffle(x)` for a 1-d sequence: Fisher–Yates from the back, `j = interval(i)`.
    pub fn shuffle<T>(&mut self, x: &mut [T]) {
        for i in (1..x.len()).rev() {
            let j = self.interval(i as u64) as usize;
            x.swap(i, j);
        }
    }

    /// `permutation(n)`: a shuffled `0..n`.
    pub fn permutation(&mut self, n: usize) -> Vec<i64> {
        let mut v: Vec<i64> = (0..n as i64).collect();
        self.shuffle(&mut v);
        v
    }
}
