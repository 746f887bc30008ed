//! Helpers shared by the random-variable test files: constants, a seeded generator value, and
//! running a draw in both backends against NumPy's values and next generator state.
#![allow(dead_code)]

use oxtensor::random::{self, Generator, default_rng, generator_to_tensor};
use oxtensor::{Mode, Tensor, Var, function, ops};

/// The modes both backends are checked in: the interpreter and the default (native).
pub fn modes() -> Vec<Mode> {
    vec![
        Mode::FAST_COMPILE,
        Mode::FAST_RUN,
        Mode::new("interp", "fast_run").expect("mode"),
    ]
}

/// A float64 scalar constant.
pub fn c(v: f64) -> Var {
    Var::constant(Tensor::scalar(v))
}

/// An int64 scalar constant.
pub fn ci(v: i64) -> Var {
    Var::constant(Tensor::scalar(v))
}

/// A float64 vector constant.
pub fn vec_c(v: &[f64]) -> Var {
    Var::constant(Tensor::from_slice(v, &[v.len()]).expect("vector"))
}

/// An int64 vector constant.
pub fn ints(v: &[i64]) -> Var {
    Var::constant(Tensor::from_slice(v, &[v.len()]).expect("vector"))
}

/// A `size` argument of constant extents.
pub fn size(dims: &[i64]) -> Var {
    let d: Vec<Var> = dims.iter().map(|&n| Var::int_constant(n)).collect();
    ops::random::size_vector(Some(&d)).expect("size")
}

/// The generator value of `np.random.default_rng(seed)`.
pub fn rng_const(seed: u128) -> Var {
    Var::constant(generator_to_tensor(&default_rng(seed)))
}

/// Runs `(next_rng, draw)` in every mode, checks each gives the generator state of `after`,
/// and returns each mode's draw.
pub fn draws_in_all_modes(next: &Var, draw: &Var, after: &Generator) -> Vec<(Mode, Tensor)> {
    modes()
        .into_iter()
        .map(|mode| {
            let f = function(&[], &[next.clone(), draw.clone()])
                .mode(mode.clone())
                .build()
                .expect("compile");
            let mut out = f.call(&[]).expect("call");
            let state = random::generator_from_tensor(&out[0]).expect("rng").state();
            assert_eq!(state, after.state(), "next generator in {mode:?}");
            (mode, out.remove(1))
        })
        .collect()
}

/// Runs `(next_rng, draw)` in every mode: each draw must equal `want` bitwise and the next
/// generator must be `after`'s state.
pub fn check_all_modes(next: &Var, draw: &Var, want: &[f64], after: &Generator) {
    for (mode, t) in draws_in_all_modes(next, draw, after) {
        let got = t.to_vec_as::<f64>();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert_eq!(g.to_bits(), w.to_bits(), "{mode:?}: {got:?} vs {want:?}");
        }
    }
}
