//! Sampling without replacement, as NumPy's `Generator.choice(..., replace=False)` draws it
//! (PyTensor's `choice` without replacement calls it once per batch element).

use crate::{BoundedMethod, Generator, RandomError, Result};
use std::collections::HashSet;

/// NumPy's population size above which a tail shuffle of the whole `arange` beats Floyd's
/// algorithm (when more than `1 / TAIL_SHUFFLE_FRACTION` of it is taken).
const TAIL_SHUFFLE_POPULATION: usize = 10_000;

/// See [`TAIL_SHUFFLE_POPULATION`]: NumPy's cutoff for `shuffle=True`.
const TAIL_SHUFFLE_FRACTION: usize = 50;

impl Generator {
    /// NumPy's `_shuffle_int(n, first, data)`: Fisher-Yates swaps of `data[i]` for `i` from the
    /// end down to `first`, with Lemire bounded draws (where [`Generator::shuffle`] uses masked
    /// rejection, as NumPy's `shuffle` does).
    fn shuffle_int(&mut self, data: &mut [i64], first: usize) {
        for i in (first..data.len()).rev() {
            let j = self.bounded_u64(i as u64, BoundedMethod::Lemire) as usize;
            data.swap(i, j);
        }
    }

    /// `choice(pop_size, size, replace=False)`: `size` distinct indices of `0..pop_size` in
    /// random order, by NumPy's tail shuffle (large populations, large samples) or Floyd's
    /// algorithm followed by a shuffle.
    pub fn choice_without_replacement(&mut self, pop_size: usize, size: usize) -> Result<Vec<i64>> {
        let mut out = vec![0; size];
        self.choice_without_replacement_into(pop_size, &mut out, &mut ChoiceScratch::default())?;
        Ok(out)
    }

    /// [`Self::choice_without_replacement`] of `out.len()` indices written into `out`, with
    /// the tail shuffle's `arange` and Floyd's set of taken indices kept in `scratch`
    /// between calls (a caller drawing again allocates nothing once they have grown).
    pub fn choice_without_replacement_into(
        &mut self,
        pop_size: usize,
        out: &mut [i64],
        scratch: &mut ChoiceScratch,
    ) -> Result<()> {
        let size = out.len();
        if size > pop_size {
            return Err(RandomError::new(
                "size",
                format!(
                    "Cannot take a larger sample than population when replace is False (sample {size}, population {pop_size})"
                ),
            ));
        }
        if pop_size > TAIL_SHUFFLE_POPULATION && size > pop_size / TAIL_SHUFFLE_FRACTION {
            let idx = &mut scratch.arange;
            idx.clear();
            idx.extend(0..pop_size as i64);
            self.shuffle_int(idx, (pop_size - size).max(1));
            out.copy_from_slice(&idx[pop_size - size..]);
            return Ok(());
        }
        let taken = &mut scratch.taken;
        taken.clear();
        for (o, j) in out.iter_mut().zip(pop_size - size..pop_size) {
            let val = self.bounded_u64(j as u64, BoundedMethod::Lemire) as i64;
            // Floyd: a value already taken is replaced by `j`, which cannot be.
            let pick = if taken.insert(val) { val } else { j as i64 };
            taken.insert(pick);
            *o = pick;
        }
        self.shuffle_int(out, 1);
        Ok(())
    }

    /// `choice(len(p), size, replace=False, p=p)`: `size` distinct indices drawn with
    /// probabilities `p`, by NumPy's loop: draw the missing count of uniforms, search them in
    /// the normalized `cumsum` of `p` with the indices taken so far zeroed, keep the new
    /// distinct indices in order of first appearance, repeat until `size` are taken.
    pub fn choice_without_replacement_p(&mut self, p: &[f64], size: usize) -> Result<Vec<i64>> {
        let mut out = vec![0; size];
        self.choice_without_replacement_p_into(p, &mut out, &mut ChoiceScratch::default())?;
        Ok(out)
    }

    /// [`Self::choice_without_replacement_p`] of `out.len()` indices written into `out`, with
    /// the zeroed copy of `p`, its `cumsum`, the uniforms and the set of indices seen kept in
    /// `scratch` between calls.
    pub fn choice_without_replacement_p_into(
        &mut self,
        p: &[f64],
        out: &mut [i64],
        scratch: &mut ChoiceScratch,
    ) -> Result<()> {
        let (pop_size, size) = (p.len(), out.len());
        if size > pop_size {
            return Err(RandomError::new(
                "size",
                format!(
                    "Cannot take a larger sample than population when replace is False (sample {size}, population {pop_size})"
                ),
            ));
        }
        check_probabilities(p, f64::EPSILON.sqrt())?;
        if p.iter().filter(|&&x| x > 0.0).count() < size {
            return Err(RandomError::new(
                "p",
                "Fewer non-zero entries in p than size",
            ));
        }
        let ChoiceScratch {
            p: weights,
            cdf,
            uniforms,
            taken: seen,
            ..
        } = scratch;
        weights.clear();
        weights.extend_from_slice(p);
        cdf.clear();
        cdf.resize(pop_size, 0.0);
        let mut found = 0;
        while found < size {
            uniforms.clear();
            uniforms.extend((0..size - found).map(|_| self.random()));
            for &f in &out[..found] {
                weights[f as usize] = 0.0;
            }
            let mut acc = 0.0;
            for (c, &pi) in cdf.iter_mut().zip(weights.iter()) {
                acc += pi;
                *c = acc;
            }
            let total = acc;
            cdf.iter_mut().for_each(|c| *c /= total);
            seen.clear();
            for &u in uniforms.iter() {
                // `searchsorted(side="right")`: the first entry above `u`.
                let k = cdf.partition_point(|&c| c <= u) as i64;
                if seen.insert(k) {
                    out[found] = k;
                    found += 1;
                }
            }
        }
        Ok(())
    }
}

/// The buffers [`Generator::choice_without_replacement_into`] and
/// [`Generator::choice_without_replacement_p_into`] work in, kept by a caller that draws
/// again so that drawing allocates nothing once they have grown.
#[derive(Debug, Default)]
pub struct ChoiceScratch {
    /// The tail shuffle's `arange(pop_size)`.
    arange: Vec<i64>,
    /// The indices taken (Floyd) or seen in one round (with `p`).
    taken: HashSet<i64>,
    /// `p` with the indices taken zeroed.
    p: Vec<f64>,
    /// The normalized `cumsum` of `p`.
    cdf: Vec<f64>,
    /// One round's uniforms.
    uniforms: Vec<f64>,
}

/// NumPy's checks of `choice`'s `p`: no NaN, no negative entry, a (Kahan) sum within `atol`
/// of 1 (NumPy's `atol` is `sqrt(eps)` of `p`'s dtype: about 1.5e-8 for `float64` values,
/// 3.5e-4 for `float32` ones). The errors carry NumPy's messages.
pub fn check_probabilities(p: &[f64], atol: f64) -> Result<()> {
    let (mut sum, mut comp) = (0.0f64, 0.0f64);
    for &x in p {
        let y = x - comp;
        let t = sum + y;
        comp = (t - sum) - y;
        sum = t;
    }
    if sum.is_nan() {
        return Err(RandomError::new("p", "Probabilities contain NaN"));
    }
    if p.iter().any(|&x| x < 0.0) {
        return Err(RandomError::new("p", "Probabilities are not non-negative"));
    }
    if (sum - 1.0).abs() > atol {
        return Err(RandomError::new(
            "p",
            format!("Probabilities do not sum to 1 (their sum is {sum})"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::default_rng;

    #[test]
    fn same_indices_as_numpy() {
        // np.random.default_rng(21).choice(10, size=(2, 3), replace=False)
        let mut g = default_rng(21);
        let v = g.choice_without_replacement(10, 6).expect("valid");
        assert_eq!(v, [8, 9, 7, 4, 1, 2]);
        // g = np.random.default_rng(22): g.choice(20000, 6000, replace=False) twice (the
        // tail shuffle): the first five of the first, the sum of the second.
        let mut g = default_rng(22);
        let v = g.choice_without_replacement(20_000, 6000).expect("valid");
        assert_eq!(v[..5], [9320, 14341, 10096, 14132, 16429]);
        let v = g.choice_without_replacement(20_000, 6000).expect("valid");
        assert_eq!(v.iter().sum::<i64>(), 59_509_346);
        // np.random.default_rng(23).choice(5, 3, replace=False, p=[.1, .2, .3, .25, .15])
        let mut g = default_rng(23);
        let v = g
            .choice_without_replacement_p(&[0.1, 0.2, 0.3, 0.25, 0.15], 3)
            .expect("valid");
        assert_eq!(v, [3, 1, 0]);
    }

    #[test]
    fn floyd_and_tail_shuffle_give_distinct_indices() {
        let mut g = default_rng(5);
        for (pop, size) in [(10, 10), (10, 3), (20_000, 5000), (20_000, 10), (1, 0)] {
            let mut v = g
                .choice_without_replacement(pop, size)
                .expect("valid sizes");
            assert_eq!(v.len(), size);
            v.sort_unstable();
            v.dedup();
            assert_eq!(v.len(), size);
            assert!(v.iter().all(|&x| (0..pop as i64).contains(&x)));
        }
        assert!(g.choice_without_replacement(3, 4).is_err());
    }

    #[test]
    fn weighted_choice_skips_zero_probabilities() {
        let mut g = default_rng(6);
        let p = [0.0, 0.5, 0.0, 0.25, 0.25];
        let mut v = g
            .choice_without_replacement_p(&p, 3)
            .expect("three non-zero entries");
        v.sort_unstable();
        assert_eq!(v, [1, 3, 4]);
        assert!(g.choice_without_replacement_p(&p, 4).is_err());
        assert!(g.choice_without_replacement_p(&[0.5, 0.6], 1).is_err());
    }
}
