//! Helpers shared by the gradient test suites: a seeded generator of shapes and values, and
//! wrappers that compile and run graphs.

#![allow(dead_code)]

use oxtensor::gradient::{VerifyGradOptions, verify_grad};
use oxtensor::{OnUnusedInput, Tensor, Var, function};

/// SplitMix64, seeded per test so failures reproduce.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }

    /// Uniform integer in `lo..=hi`.
    pub fn int(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }

    /// A shape of rank `rank` with extents in `2..=3`.
    pub fn shape(&mut self, rank: usize) -> Vec<usize> {
        (0..rank).map(|_| self.int(2, 3)).collect()
    }

    /// A float64 tensor of `shape` with values in `[lo, hi)`, at least `gap` away from 0.
    pub fn tensor(&mut self, shape: &[usize], lo: f64, hi: f64, gap: f64) -> Tensor {
        let n: usize = shape.iter().product();
        let values: Vec<f64> = (0..n)
            .map(|_| {
                loop {
                    let v = self.uniform(lo, hi);
                    if v.abs() >= gap {
                        break v;
                    }
                }
            })
            .collect();
        Tensor::from_slice(&values, shape).unwrap()
    }

    /// `shape` made broadcastable: each dimension becomes 1 with probability ½, and leading
    /// dimensions are dropped with probability ⅓ (NumPy's right alignment).
    pub fn broadcast_of(&mut self, shape: &[usize]) -> Vec<usize> {
        let mut s: Vec<usize> = shape
            .iter()
            .map(|&d| if self.int(0, 1) == 0 { 1 } else { d })
            .collect();
        if !s.is_empty() && self.int(0, 2) == 0 {
            let drop = self.int(1, s.len());
            s.drain(..drop);
        }
        s
    }
}

/// Runs `verify_grad` and panics with its message (and `what`) on failure.
pub fn check(
    what: &str,
    f: impl FnOnce(&[Var]) -> Result<Var, oxtensor::gradient::VerifyGradError>,
    points: &[Tensor],
) {
    let shapes: Vec<Vec<usize>> = points.iter().map(|p| p.shape().to_vec()).collect();
    if let Err(e) = verify_grad(f, points, &VerifyGradOptions::default()) {
        panic!("{what} at shapes {shapes:?}: {e}");
    }
}

/// Compiles `outputs` of `inputs` and runs it on `args`.
pub fn eval(inputs: &[Var], outputs: &[Var], args: &[Tensor]) -> Vec<Tensor> {
    function(inputs, outputs)
        .on_unused_input(OnUnusedInput::Ignore)
        .build()
        .unwrap_or_else(|e| panic!("compiling: {e}"))
        .call(args)
        .unwrap_or_else(|e| panic!("running: {e}"))
}

/// The values of a tensor as `f64`.
pub fn values(t: &Tensor) -> Vec<f64> {
    t.to_vec_as::<f64>()
}

/// Asserts two lists are equal within `tol` (absolute or relative), element by element.
pub fn assert_close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths {got:?} vs {want:?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (g - w).abs() <= tol * (1.0 + w.abs()) || (g.is_nan() && w.is_nan()) || g == w;
        assert!(
            ok,
            "{what}: element {i}: got {g}, want {w}\n got {got:?}\nwant {want:?}"
        );
    }
}
