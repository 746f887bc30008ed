//! Multivariate draws and permutations: multinomial (a chain of conditional binomials),
//! Dirichlet (normalized gammas, or beta stick-breaking when every alpha < 0.1), and
//! Fisher–Yates shuffles driven by NumPy's masked `random_interval`.

use crate::error::{RandomError, Result};
use crate::generator::Generator;

impl Generator {
    /// `multinomial(n, pvals)`: counts for each category, drawn as conditional binomials. The
    /// last category takes whatever is left, so `pvals[-1]` is not read (as in NumPy).
    pub fn multinomial(&mut self, n: i64, pvals: &[f64]) -> Result<Vec<i64>> {
        let mut out = vec![0i64; pvals.len()];
        self.multinomial_into(n, pvals, &mut out)?;
        Ok(out)
    }

    /// [`Self::multinomial`] written into `out` (one count per category; its length must be
    /// `pvals.len()`), so a caller drawing many can keep one buffer.
    pub fn multinomial_into(&mut self, n: i64, pvals: &[f64], out: &mut [i64]) -> Result<()> {
        if n < 0 {
            return Err(RandomError::new(
                "n",
                format!("n < 0 (expected n >= 0, got {n})"),
            ));
        }
        if pvals.is_empty() {
            return Err(RandomError::new("pvals", "expected at least one category"));
        }
        if out.len() != pvals.len() {
            return Err(RandomError::new(
                "pvals",
                format!(
                    "{} categories for {} counts (expected as many)",
                    pvals.len(),
                    out.len()
                ),
            ));
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
        out.fill(0);
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
        Ok(())
    }

    /// `dirichlet(alpha)`: one point of the simplex. Every alpha must be ≥ 0 (NumPy 2): a
    /// zero alpha gives a zero component, a NaN one a NaN point.
    pub fn dirichlet(&mut self, alpha: &[f64]) -> Result<Vec<f64>> {
        let mut out = vec![0.0; alpha.len()];
        self.dirichlet_into(alpha, &mut out)?;
        Ok(out)
    }

    /// [`Self::dirichlet`] written into `out` (its length must be `alpha.len()`), allocating
    /// nothing, so a caller drawing many can keep one buffer.
    pub fn dirichlet_into(&mut self, alpha: &[f64], out: &mut [f64]) -> Result<()> {
        if let Some(bad) = alpha.iter().find(|a| **a < 0.0) {
            return Err(RandomError::new(
                "alpha",
                format!("alpha < 0 (expected every alpha >= 0, got {bad})"),
            ));
        }
        let k = alpha.len();
        if out.len() != k {
            return Err(RandomError::new(
                "alpha",
                format!("{k} alphas for {} components (expected as many)", out.len()),
            ));
        }
        if k == 0 {
            return Ok(());
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
            // The suffix sums of alpha (NumPy's `csum`, summed from the back), kept in `out`:
            // step j reads csum[j + 1] before it writes out[j], so each is read in time.
            let mut acc_sum = 0.0;
            for j in (0..k).rev() {
                acc_sum += alpha[j];
                out[j] = acc_sum;
            }
            if out[0] == 0.0 {
                // Every alpha is zero: the point is all zeros, and nothing is drawn.
                out.fill(0.0);
                return Ok(());
            }
            let mut acc = 1.0;
            for j in 0..k - 1 {
                let rest = out[j + 1];
                let v = self.beta_unchecked(alpha[j], rest);
                out[j] = acc * v;
                acc *= 1.0 - v;
                if rest == 0.0 {
                    // Every later alpha is zero: v is 1, and the rest of the point is 0.
                    out[j + 1..].fill(0.0);
                    break;
                }
            }
            out[k - 1] = acc;
            return Ok(());
        }
        for (o, &a) in out.iter_mut().zip(alpha) {
            *o = self.standard_gamma_unchecked(a);
        }
        let total: f64 = out.iter().fold(0.0, |s, &v| s + v);
        let inv = 1.0 / total;
        for v in out.iter_mut() {
            *v *= inv;
        }
        Ok(())
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
        let mut v = vec![0; n];
        self.permutation_into(&mut v);
        v
    }

    /// [`Self::permutation`] of `out.len()` written into `out`.
    pub fn permutation_into(&mut self, out: &mut [i64]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = i as i64;
        }
        self.shuffle(out);
    }
}
