//! The special functions as graph ops (`ScalarOp::Special`), in both backends: values equal to
//! oxtensor-special's own functions (bit for bit: both backends call them), close to SciPy's
//! values (committed fixtures), PyTensor's output dtypes, and gradients against finite
//! differences.

use oxtensor::gradient::{VerifyGradOptions, verify_grad};
use oxtensor::oxtensor_graph::{ScalarOp, SpecialFn};
use oxtensor::{DType, Mode, Tensor, Var, function, grad_vars, ops, vector};
use oxtensor_special::EntryF64;
use oxtensor_testkit::{Tol, assert_close};

#[path = "fixtures/special_scipy.rs"]
mod scipy;

/// The modes both backends are checked in: the interpreter and the default (native).
fn modes() -> Vec<Mode> {
    vec![
        Mode::FAST_COMPILE,
        Mode::FAST_RUN,
        Mode::new("interp", "fast_run").expect("mode"),
    ]
}

/// A small deterministic generator (xorshift), for reproducible points.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
}

/// A domain per argument where each function is finite and smooth.
fn domain(f: SpecialFn) -> Vec<(f64, f64)> {
    use SpecialFn::*;
    match f {
        Gamma | Factorial => vec![(0.2, 8.0)],
        Psi | TriGamma => vec![(0.2, 10.0)],
        PolyGamma | Kn => vec![(1.0, 3.0), (0.5, 5.0)],
        GammaInc | GammaIncC | GammaIncGrad => vec![(0.5, 6.0), (0.2, 8.0)],
        GammaIncInv | GammaIncCInv => vec![(0.5, 6.0), (0.1, 0.9)],
        Beta | BetaLn | Poch => vec![(0.5, 5.0), (0.5, 5.0)],
        BetaInc | BetaIncInv | BetaIncDa | BetaIncDb => vec![(0.8, 4.0), (0.8, 4.0), (0.1, 0.9)],
        Erfinv => vec![(-0.9, 0.9)],
        Erfcinv => vec![(0.1, 1.9)],
        Erfcx => vec![(-1.0, 5.0)],
        I0 | I1 | J0 | J1 => vec![(0.3, 4.0)],
        Iv | Ive | Jv | Kv | Kve => vec![(0.2, 2.5), (0.5, 4.0)],
        OwensT => vec![(-2.0, 2.0), (-1.5, 1.5)],
        Hyp2F1 | Hyp2F1Da | Hyp2F1Db | Hyp2F1Dc => {
            vec![(0.3, 1.5), (0.3, 1.5), (2.5, 4.0), (-0.5, 0.5)]
        }
        Chi2SF => vec![(0.5, 6.0), (1.0, 6.0)],
        Log1mexp => vec![(-5.0, -0.1)],
        XLogY => vec![(-2.0, 2.0), (0.2, 4.0)],
        XLog1PY => vec![(-2.0, 2.0), (-0.5, 4.0)],
        Logit => vec![(0.05, 0.95)],
    }
}

/// The inputs with integer values (orders): kept integral in the points.
fn integral(f: SpecialFn, k: usize) -> bool {
    matches!(f, SpecialFn::PolyGamma | SpecialFn::Kn) && k == 0
}

/// oxtensor-special's f64 value at `args`.
fn reference(f: SpecialFn, a: &[f64]) -> f64 {
    match f.export().entry {
        EntryF64::Unary(g) => g(a[0]),
        EntryF64::Binary(g) => g(a[0], a[1]),
        EntryF64::Ternary(g) => g(a[0], a[1], a[2]),
        EntryF64::Quaternary(g) => g(a[0], a[1], a[2], a[3]),
    }
}

/// Points for `f`: one vector of `n` values per argument.
fn points(f: SpecialFn, n: usize, rng: &mut Rng) -> Vec<Vec<f64>> {
    domain(f)
        .iter()
        .enumerate()
        .map(|(k, &(lo, hi))| {
            (0..n)
                .map(|_| {
                    let v = rng.uniform(lo, hi);
                    if integral(f, k) { v.round() } else { v }
                })
                .collect()
        })
        .collect()
}

/// `f` applied to vector inputs of dtype `dtype`, compiled in `mode`.
fn run(f: SpecialFn, args: &[Tensor], mode: &Mode) -> Tensor {
    let xs: Vec<Var> = (0..args.len())
        .map(|i| vector(&format!("x{i}"), args[i].dtype()))
        .collect();
    let out = ops::special(f, &xs).expect("build");
    let fun = function(&xs, &[out])
        .mode(mode.clone())
        .build()
        .expect("compile");
    fun.call(args).expect("call").remove(0)
}

#[test]
fn every_function_equals_oxtensor_special_in_both_backends() {
    let mut rng = Rng(0x5eed_1234);
    for f in SpecialFn::ALL {
        let n = 37;
        let pts = points(f, n, &mut rng);
        let want: Vec<f64> = (0..n)
            .map(|i| reference(f, &pts.iter().map(|p| p[i]).collect::<Vec<_>>()))
            .collect();
        let want = Tensor::from_slice(&want, &[n]).expect("tensor");
        let args: Vec<Tensor> = pts
            .iter()
            .map(|p| Tensor::from_slice(p, &[n]).expect("tensor"))
            .collect();
        for mode in modes() {
            let got = run(f, &args, &mode);
            assert_eq!(got.dtype(), DType::F64);
            assert_close(&format!("{f:?} in {mode:?}"), &got, &want, Tol::EXACT);
        }
    }
}

#[test]
fn float32_and_integer_inputs_follow_pytensor_dtypes() {
    let mut rng = Rng(0xf1_0a7);
    for f in SpecialFn::ALL {
        let n = 11;
        let pts = points(f, n, &mut rng);
        // float32 inputs: a float32 output, computed in f64 from the float32 values and
        // rounded once (oxtensor-special's f32 entry points).
        let pts32: Vec<Vec<f32>> = pts
            .iter()
            .map(|p| p.iter().map(|&v| v as f32).collect())
            .collect();
        let want: Vec<f32> = (0..n)
            .map(|i| {
                reference(
                    f,
                    &pts32.iter().map(|p| f64::from(p[i])).collect::<Vec<_>>(),
                ) as f32
            })
            .collect();
        let want = Tensor::from_slice(&want, &[n]).expect("tensor");
        let args: Vec<Tensor> = pts32
            .iter()
            .map(|p| Tensor::from_slice(p, &[n]).expect("tensor"))
            .collect();
        for mode in modes() {
            let got = run(f, &args, &mode);
            assert_eq!(got.dtype(), DType::F32, "{f:?}");
            assert_close(
                &format!("{f:?} float32 in {mode:?}"),
                &got,
                &want,
                Tol::EXACT,
            );
        }
        // Integer inputs upcast as PyTensor's upgrade_to_float: int8 → float32, int64 →
        // float64; except the functions PyTensor builds from a true division (logit,
        // chi2sf), which give float64 as an integer division does.
        let small = if f.divides_integers() {
            DType::F64
        } else {
            DType::F32
        };
        let types = [
            (DType::I8, small),
            (DType::I16, small),
            (DType::I64, DType::F64),
        ];
        for (input, output) in types {
            let xs: Vec<Var> = (0..f.arity())
                .map(|i| vector(&format!("x{i}"), input))
                .collect();
            let out = ops::special(f, &xs).expect("build");
            assert_eq!(out.dtype(), output, "{f:?} of {input}");
        }
    }
    // Mixed: float32 with int64 gives float64 (NumPy promotion, then upgrade_to_float).
    let (a, x) = (vector("a", DType::I64), vector("x", DType::F32));
    let out = ops::special(SpecialFn::GammaInc, &[a, x]).expect("build");
    assert_eq!(out.dtype(), DType::F64);
}

#[test]
fn values_are_close_to_scipy() {
    // oxtensor-special is within 3 ulp of mpmath everywhere in its fixtures; SciPy's own error
    // at these moderate points is below ~50 ulp (larger only for `poch`, `beta` and the Bessel
    // functions of non-integer order near their zeros, not sampled here): 64 ulp, or 1e-13
    // of the value, covers both.
    let tol = Tol::ulps(64).or_scaled(1e-13);
    for mode in [Mode::FAST_COMPILE, Mode::FAST_RUN] {
        for (name, args, bits) in scipy::SCIPY {
            let f = SpecialFn::from_name(name).expect("a special function");
            let ts: Vec<Tensor> = args
                .iter()
                .map(|&a| Tensor::from_slice(&[a], &[1]).expect("tensor"))
                .collect();
            let got = run(f, &ts, &mode);
            let want = Tensor::from_slice(&[f64::from_bits(*bits)], &[1]).expect("tensor");
            assert_close(&format!("{name}{args:?} in {mode:?}"), &got, &want, tol);
        }
    }
}

#[test]
fn edge_values_follow_scipy_conventions_in_both_backends() {
    let inf = f64::INFINITY;
    // (function, arguments, SciPy's value)
    let cases: &[(SpecialFn, &[f64], f64)] = &[
        (SpecialFn::Gamma, &[0.0], inf),
        (SpecialFn::Gamma, &[-1.0], f64::NAN),
        (SpecialFn::Gamma, &[inf], inf),
        (SpecialFn::Gamma, &[f64::NAN], f64::NAN),
        (SpecialFn::Psi, &[0.0], -inf),
        (SpecialFn::Erfinv, &[1.0], inf),
        (SpecialFn::Erfinv, &[-1.0], -inf),
        (SpecialFn::Erfinv, &[2.0], f64::NAN),
        (SpecialFn::Erfcinv, &[0.0], inf),
        (SpecialFn::GammaInc, &[1.0, 0.0], 0.0),
        (SpecialFn::GammaInc, &[1.0, inf], 1.0),
        (SpecialFn::GammaIncC, &[1.0, inf], 0.0),
        (SpecialFn::BetaInc, &[1.0, 2.0, 0.0], 0.0),
        (SpecialFn::BetaInc, &[1.0, 2.0, 1.0], 1.0),
        (SpecialFn::XLogY, &[0.0, 0.0], 0.0),
        (SpecialFn::XLog1PY, &[0.0, -1.0], 0.0),
        (SpecialFn::Logit, &[0.0], -inf),
        (SpecialFn::Logit, &[1.0], inf),
        (SpecialFn::Log1mexp, &[0.0], -inf),
        (SpecialFn::Log1mexp, &[-inf], 0.0),
        (SpecialFn::Factorial, &[-1.0], 0.0),
        (SpecialFn::I0, &[0.0], 1.0),
        (SpecialFn::J0, &[0.0], 1.0),
        (SpecialFn::Kv, &[0.0, 0.0], inf),
    ];
    for mode in modes() {
        for (f, args, want) in cases {
            let ts: Vec<Tensor> = args
                .iter()
                .map(|&a| Tensor::from_slice(&[a], &[1]).expect("tensor"))
                .collect();
            let got = run(*f, &ts, &mode).to_vec::<f64>().expect("f64")[0];
            let same = got == *want || (got.is_nan() && want.is_nan());
            assert!(same, "{f:?}{args:?} in {mode:?}: {got}, SciPy {want}");
        }
    }
}

#[test]
fn special_functions_fuse_with_elementwise_neighbours() {
    // exp(-x)·gamma(x + 1) + digamma(x): one fused loop in the native backend; equal values.
    let x = vector("x", DType::F64);
    let xp1 = &x + &Var::scalar_constant(1.0, DType::F64);
    let g = ops::special(SpecialFn::Gamma, &[xp1]).expect("gamma");
    let d = ops::special(SpecialFn::Psi, std::slice::from_ref(&x)).expect("psi");
    let out = (-&x).exp() * g + d;
    let pts: Vec<f64> = (1..200).map(|i| i as f64 * 0.05).collect();
    let arg = Tensor::from_slice(&pts, &[pts.len()]).expect("tensor");
    let want: Vec<f64> = pts
        .iter()
        .map(|&v| (-v).exp() * oxtensor_special::gamma(v + 1.0) + oxtensor_special::digamma(v))
        .collect();
    let want = Tensor::from_slice(&want, &[want.len()]).expect("tensor");
    for mode in modes() {
        let fun = function(std::slice::from_ref(&x), std::slice::from_ref(&out))
            .mode(mode.clone())
            .build()
            .expect("compile");
        let got = fun
            .call(std::slice::from_ref(&arg))
            .expect("call")
            .remove(0);
        assert_close(&format!("{mode:?}"), &got, &want, Tol::MATH_LIBRARIES);
    }
}

/// Which inputs of `f` have a gradient (PyTensor's; the others are undefined).
fn differentiable(f: SpecialFn) -> Vec<bool> {
    use SpecialFn::*;
    match f {
        PolyGamma | GammaIncGrad | GammaIncInv | GammaIncCInv | Iv | Ive | Jv | Kn | Kv | Kve => {
            vec![false, true]
        }
        BetaIncInv | BetaIncDa | BetaIncDb => vec![false, false, true],
        Hyp2F1Da | Hyp2F1Db | Hyp2F1Dc => vec![false, false, false, true],
        Chi2SF => vec![true, false],
        _ => vec![true; f.arity()],
    }
}

#[test]
fn gradients_match_finite_differences() {
    let mut rng = Rng(0x6a_d1e7);
    for f in SpecialFn::ALL {
        let n = 4;
        let pts = points(f, n, &mut rng);
        let which = differentiable(f);
        let fixed: Vec<Var> = pts
            .iter()
            .map(|p| Var::constant(Tensor::from_slice(p, &[n]).expect("tensor")))
            .collect();
        let free: Vec<Tensor> = pts
            .iter()
            .zip(&which)
            .filter(|(_, w)| **w)
            .map(|(p, _)| Tensor::from_slice(p, &[n]).expect("tensor"))
            .collect();
        let result = verify_grad(
            |xs| {
                let mut it = xs.iter();
                let args: Vec<Var> = which
                    .iter()
                    .zip(&fixed)
                    .map(|(w, c)| {
                        if *w {
                            it.next().cloned().unwrap_or_else(|| c.clone())
                        } else {
                            c.clone()
                        }
                    })
                    .collect();
                Ok(ops::special(f, &args)?)
            },
            &free,
            &VerifyGradOptions::default(),
        );
        assert!(result.is_ok(), "{f:?}: {result:?}");
    }
}

#[test]
fn second_derivatives_go_through_the_special_ops() {
    // d²/dx² gammaln = trigamma, d³ = polygamma(2): built from Psi and TriGamma's rules.
    let x = vector("x", DType::F64);
    let d = |y: &Var| {
        grad_vars(&y.sum(None), std::slice::from_ref(&x))
            .expect("grad")
            .remove(0)
    };
    let g1 = d(&ops::gammaln(&x).expect("gammaln"));
    let g2 = d(&g1);
    let g3 = d(&g2);
    let pts = [0.5, 1.5, 4.0];
    let arg = Tensor::from_slice(&pts, &[3]).expect("tensor");
    for mode in modes() {
        let fun = function(std::slice::from_ref(&x), &[g2.clone(), g3.clone()])
            .mode(mode.clone())
            .build()
            .expect("compile");
        let got = fun.call(std::slice::from_ref(&arg)).expect("call");
        let tri: Vec<f64> = pts.iter().map(|&v| oxtensor_special::trigamma(v)).collect();
        let pg2: Vec<f64> = pts
            .iter()
            .map(|&v| oxtensor_special::polygamma(2.0, v))
            .collect();
        let tol = Tol::MATH_LIBRARIES;
        assert_close(
            "trigamma",
            &got[0],
            &Tensor::from_slice(&tri, &[3]).expect("t"),
            tol,
        );
        assert_close(
            "polygamma(2)",
            &got[1],
            &Tensor::from_slice(&pg2, &[3]).expect("t"),
            tol,
        );
    }
}

#[test]
fn undefined_gradients_name_the_function_and_parameter() {
    let (n, x) = (vector("n", DType::F64), vector("x", DType::F64));
    let y = ops::special(SpecialFn::PolyGamma, &[n.clone(), x]).expect("polygamma");
    let err = grad_vars(&y.sum(None), &[n]).expect_err("the order has no gradient");
    let msg = err.to_string();
    assert!(msg.contains("polygamma") && msg.contains('n'), "{msg}");
    let (a, b, x) = (
        vector("a", DType::F64),
        vector("b", DType::F64),
        vector("x", DType::F64),
    );
    let y = ops::special(SpecialFn::BetaIncInv, &[a.clone(), b, x]).expect("betaincinv");
    let msg = grad_vars(&y.sum(None), &[a])
        .expect_err("not implemented")
        .to_string();
    assert!(
        msg.contains("betaincinv") && msg.contains("not implemented"),
        "{msg}"
    );
}

#[test]
fn wrong_argument_counts_are_errors_naming_the_function() {
    let x = vector("x", DType::F64);
    let err = ops::special(SpecialFn::BetaInc, &[x.clone(), x]).expect_err("arity");
    assert!(err.to_string().contains("betainc"), "{err}");
    assert_eq!(ScalarOp::Special(SpecialFn::Psi).name(), "Psi");
}

#[test]
fn logsumexp_softmax_and_logaddexp_are_stable() {
    let x = oxtensor::matrix("x", DType::F64);
    let lse = ops::logsumexp(&x, Some(&[1]), false).expect("lse");
    let lse_keep = ops::logsumexp(&x, Some(&[-1]), true).expect("lse");
    let sm = ops::softmax(&x, Some(&[1])).expect("softmax");
    let lsm = ops::log_softmax(&x, Some(&[1])).expect("log_softmax");
    let rows = [[1000.0, 1000.0, 999.0], [-1000.0, -1001.0, -1002.0]];
    let flat: Vec<f64> = rows.iter().flatten().copied().collect();
    let arg = Tensor::from_slice(&flat, &[2, 3]).expect("tensor");
    // Reference: the same shifts in plain f64.
    let lse_want: Vec<f64> = rows
        .iter()
        .map(|r| {
            let m = r.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            m + r.iter().map(|v| (v - m).exp()).sum::<f64>().ln()
        })
        .collect();
    // softmax = exp(x - m) / Σ exp(x - m); log_softmax = (x - m) - log Σ exp(x - m).
    let shifted = |r: &[f64; 3]| {
        let m = r.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = r.iter().map(|v| (v - m).exp()).collect();
        let s: f64 = e.iter().sum();
        (m, e, s)
    };
    let sm_want: Vec<f64> = rows
        .iter()
        .flat_map(|r| {
            let (_, e, s) = shifted(r);
            e.into_iter().map(move |v| v / s)
        })
        .collect();
    let lsm_want: Vec<f64> = rows
        .iter()
        .flat_map(|r| {
            let (m, _, s) = shifted(r);
            r.iter().map(move |v| (v - m) - s.ln())
        })
        .collect();
    let a = vector("a", DType::F64);
    let b = vector("b", DType::F64);
    let lae = ops::logaddexp(&a, &b).expect("logaddexp");
    let av = [1000.0, f64::INFINITY, f64::NEG_INFINITY, -3.0];
    let bv = [999.0, f64::INFINITY, f64::NEG_INFINITY, 2.0];
    let lae_want: Vec<f64> = av
        .iter()
        .zip(&bv)
        .map(|(&p, &q)| {
            if p == q {
                p + std::f64::consts::LN_2
            } else {
                p.max(q) + (-(p - q).abs()).exp().ln_1p()
            }
        })
        .collect();
    let t = |v: &[f64], s: &[usize]| Tensor::from_slice(v, s).expect("tensor");
    let tol = Tol::MATH_LIBRARIES.or_scaled(1e-14);
    for mode in modes() {
        let fun = function(
            std::slice::from_ref(&x),
            &[lse.clone(), lse_keep.clone(), sm.clone(), lsm.clone()],
        )
        .mode(mode.clone())
        .build()
        .expect("compile");
        let got = fun.call(std::slice::from_ref(&arg)).expect("call");
        assert_close("logsumexp", &got[0], &t(&lse_want, &[2]), tol);
        assert_close("logsumexp keepdims", &got[1], &t(&lse_want, &[2, 1]), tol);
        assert_close("softmax", &got[2], &t(&sm_want, &[2, 3]), tol);
        assert_close("log_softmax", &got[3], &t(&lsm_want, &[2, 3]), tol);
        let fun = function(&[a.clone(), b.clone()], std::slice::from_ref(&lae))
            .mode(mode.clone())
            .build()
            .expect("compile");
        let got = fun.call(&[t(&av, &[4]), t(&bv, &[4])]).expect("call");
        assert_close("logaddexp", &got[0], &t(&lae_want, &[4]), tol);
    }
    // All -inf along the axis: -inf, not NaN (the shift is taken as 0 there).
    let fun = function(std::slice::from_ref(&x), std::slice::from_ref(&lse))
        .build()
        .expect("compile");
    let ninf = t(&[f64::NEG_INFINITY; 3], &[1, 3]);
    let got = fun.call(&[ninf]).expect("call").remove(0);
    assert_eq!(got.to_vec::<f64>().expect("f64"), vec![f64::NEG_INFINITY]);
    verify_grad(
        |xs| Ok(ops::logsumexp(&xs[0], Some(&[1]), false)?),
        &[t(&[0.3, -1.2, 2.0, 0.5, 0.1, -0.4], &[2, 3])],
        &VerifyGradOptions::default(),
    )
    .expect("logsumexp gradient");
    verify_grad(
        |xs| Ok(ops::softmax(&xs[0], Some(&[0]))?),
        &[t(&[0.3, -1.2, 2.0, 0.5, 0.1, -0.4], &[2, 3])],
        &VerifyGradOptions::default(),
    )
    .expect("softmax gradient");
}
