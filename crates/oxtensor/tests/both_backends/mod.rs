//! Running one graph in the native backend and in the interpreter, asserting they agree bit for
//! bit: for ops the native backend computes with the interpreter's own kernels (or exactly
//! specified C), where any difference is a bug.

use oxtensor::{Mode, Tensor, Var, function};

/// The native backend's default mode and the interpreter.
pub fn modes() -> Vec<Mode> {
    vec![
        Mode::FAST_RUN,
        Mode::new("interp", "fast_run").expect("mode"),
    ]
}

/// Runs `outs` of inputs `xs` on `args` in every mode; all modes must agree exactly.
pub fn run(xs: &[Var], outs: &[Var], args: &[Tensor]) -> Vec<Tensor> {
    let mut first: Option<Vec<Tensor>> = None;
    for mode in modes() {
        let f = function(xs, outs).mode(mode).build().expect("compile");
        let got = f.call(args).expect("call");
        match &first {
            None => first = Some(got),
            Some(want) => {
                for (a, b) in got.iter().zip(want) {
                    assert!(a.bits_eq(b), "backends disagree: {a:?} vs {b:?}");
                }
            }
        }
    }
    first.expect("at least one mode")
}
