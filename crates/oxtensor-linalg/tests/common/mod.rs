//! Small dense helpers shared by the test files (row-major `Vec<f64>` matrices).

#![allow(dead_code)]

use oxtensor_data::Tensor;

/// A row-major matrix for checks.
#[derive(Clone, Debug)]
pub struct M {
    pub r: usize,
    pub c: usize,
    pub d: Vec<f64>,
}

impl M {
    pub fn new(r: usize, c: usize, d: Vec<f64>) -> M {
        assert_eq!(d.len(), r * c);
        M { r, c, d }
    }
    pub fn at(&self, i: usize, j: usize) -> f64 {
        self.d[i * self.c + j]
    }
    pub fn mul(&self, o: &M) -> M {
        assert_eq!(self.c, o.r);
        let mut d = vec![0.0; self.r * o.c];
        for i in 0..self.r {
            for k in 0..self.c {
                for j in 0..o.c {
                    d[i * o.c + j] += self.at(i, k) * o.at(k, j);
                }
            }
        }
        M::new(self.r, o.c, d)
    }
    pub fn t(&self) -> M {
        M::new(
            self.c,
            self.r,
            (0..self.c * self.r)
                .map(|x| self.at(x % self.r, x / self.r))
                .collect(),
        )
    }
    pub fn cols(&self, k: usize) -> M {
        M::new(
            self.r,
            k,
            (0..self.r * k).map(|x| self.at(x / k, x % k)).collect(),
        )
    }
    pub fn rows(&self, k: usize) -> M {
        M::new(k, self.c, self.d[..k * self.c].to_vec())
    }
    pub fn eye(n: usize) -> M {
        M::new(
            n,
            n,
            (0..n * n)
                .map(|x| if x / n == x % n { 1.0 } else { 0.0 })
                .collect(),
        )
    }
    pub fn diag(v: &[f64]) -> M {
        let n = v.len();
        M::new(
            n,
            n,
            (0..n * n)
                .map(|x| if x / n == x % n { v[x / n] } else { 0.0 })
                .collect(),
        )
    }
    pub fn scale_cols(&self, s: &[f64]) -> M {
        M::new(
            self.r,
            self.c,
            (0..self.r * self.c)
                .map(|x| self.d[x] * s[x % self.c])
                .collect(),
        )
    }
}

/// Normwise relative difference `max|a-b| / max(1, max|b|)`; NaNs must match NaNs.
pub fn rel_err(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "lengths differ");
    let scale = b
        .iter()
        .filter(|x| x.is_finite())
        .fold(1.0f64, |m, x| m.max(x.abs()));
    a.iter().zip(b).fold(0.0, |m, (x, y)| {
        if x.is_nan() && y.is_nan() || x == y {
            m
        } else {
            m.max((x - y).abs() / scale)
        }
    })
}

/// The matrix at flat batch index `b` of a tensor whose last two dims are the core.
pub fn mat_at(t: &Tensor, b: usize) -> M {
    let s = t.shape();
    let (r, c) = (s[s.len() - 2], s[s.len() - 1]);
    let v = t.to_vec_as::<f64>();
    M::new(r, c, v[b * r * c..(b + 1) * r * c].to_vec())
}

/// The vector at flat batch index `b` of a tensor whose last dim is the core.
pub fn vec_at(t: &Tensor, b: usize) -> Vec<f64> {
    let n = *t.shape().last().expect("at least 1-D");
    t.to_vec_as::<f64>()[b * n..(b + 1) * n].to_vec()
}

/// Number of batch elements when the last `core` dims are the core.
pub fn batch_len(t: &Tensor, core: usize) -> usize {
    t.shape()[..t.ndim() - core].iter().product()
}

/// Flips column `j` of `m` (and entry `j` of each `companion`'s row `j`) so the column's
/// largest-magnitude entry is positive: fixes the sign freedom of eigen/singular vectors.
pub fn sign_fix_cols(m: &mut M, companion_rows: Option<&mut M>) {
    let mut signs = vec![1.0; m.c];
    for (j, s) in signs.iter_mut().enumerate() {
        let mut best = 0.0f64;
        for i in 0..m.r {
            if m.at(i, j).abs() > best.abs() + 1e-9 {
                best = m.at(i, j);
            }
        }
        if best < 0.0 {
            *s = -1.0;
        }
    }
    let c = m.c;
    for (x, v) in m.d.iter_mut().enumerate() {
        *v *= signs[x % c];
    }
    if let Some(o) = companion_rows {
        let oc = o.c;
        for (x, v) in o.d.iter_mut().enumerate() {
            if x / oc < signs.len() {
                *v *= signs[x / oc];
            }
        }
    }
}

/// xorshift64*, so the tests need no RNG crate; values in [-1, 1). Each test file adds the
/// generators of the matrices it needs.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    pub fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.next()).collect()
    }
    pub fn tensor(&mut self, shape: &[usize]) -> Tensor {
        let n = shape.iter().product();
        Tensor::from_slice(&self.vec(n), shape).expect("tensor")
    }
    /// A batch of SPD matrices `G Gᵀ + n I`.
    pub fn spd(&mut self, batch: usize, n: usize) -> Tensor {
        let mut out = Vec::with_capacity(batch * n * n);
        for _ in 0..batch {
            let g = M::new(n, n, self.vec(n * n));
            let mut a = g.mul(&g.t());
            for i in 0..n {
                a.d[i * n + i] += n as f64;
            }
            out.extend(a.d);
        }
        Tensor::from_slice(&out, &[batch, n, n]).expect("tensor")
    }
}
