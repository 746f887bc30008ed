//! The loops users write, run whole in C: a GARCH(1,1) likelihood, a stochastic-volatility
//! latent AR, an HMM's forward algorithm in log space, RK4 and Euler–Maruyama integration of a
//! small vector ODE, Newton iterations stopped by `until`, an LSTM and a GRU on a batch, a map
//! with no state, Fibonacci's taps `[-2, -1]`, and PyTensor's documented power and polynomial
//! loops. Each is built unoptimized and as `function` compiles it in FAST_RUN (with the
//! gradients where they make sense), every loop of both graphs is checked to be a C loop that
//! hands nothing to the interpreter's loop, and every output is compared with the
//! interpreter's.

use crate::common;

use common::data::Rng;
use common::models::{Loop, Model, Step, assert_loops_in_c, check, inputs_of};
use common::staged::{square_sum, values};
use oxtensor::gradient::{VerifyGradOptions, verify_grad};
use oxtensor::ops::{self, Idx};
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FunctionGraph, Var};
use oxtensor_testkit::Tol;

/// `½·log(2π)`.
const HALF_LOG_2PI: f64 = 0.918_938_533_204_672_8;

/// `x[a:b]` along the last axis of a matrix.
fn columns(x: &Var, a: usize, b: usize) -> Var {
    x.at(&[
        Idx::full(),
        Idx::range(Some(a as i64), Some(b as i64), None),
    ])
}

/// The last entry of a trajectory.
fn last(x: &Var) -> Var {
    x.at(&[Idx::int(-1)])
}

/// Transcendental functions from two math libraries through recurrences that contract.
const TOL: Tol = Tol::MATH_LIBRARIES.or_scaled(1e-11);

// ---- GARCH(1,1) ----

/// `σ²_t = ω + α·r²_{t-1} + β·σ²_{t-1}` over returns `r` from `σ²_0`, and the Gaussian
/// log-likelihood of `r_t` under it; inputs `r, ω, α, β, σ²_0`.
fn garch(v: &[Var]) -> (Vec<Var>, Var) {
    let (r, omega, alpha, beta, s0) = (&v[0], &v[1], &v[2], &v[3], &v[4]);
    let mut lp = Loop::new("garch", &[], &[s0], &[omega, alpha, beta]);
    lp.sequences = vec![(r.clone(), vec![-1, 0])];
    let out = lp.build(|taps, o| {
        let (r_prev, r_t, s_prev) = (&taps[0], &taps[1], &taps[2]);
        let s = &(&o[0] + &(&o[1] * &(r_prev * r_prev))) + &(&o[2] * s_prev);
        let ll = -(&(&s.log() + &(&(r_t * r_t) / &s)) * 0.5) - HALF_LOG_2PI;
        Step {
            next: vec![s],
            mapped: vec![ll],
            until: None,
        }
    });
    let cost = out[1].sum(None);
    (out, cost)
}

fn garch_values(rng: &mut Rng, steps: usize) -> Vec<Tensor> {
    vec![
        values(rng, &[steps], 1.0),
        Tensor::scalar(0.1),
        Tensor::scalar(0.15),
        Tensor::scalar(0.8),
        Tensor::scalar(0.5),
    ]
}

// ---- Stochastic volatility ----

/// Four latent log-volatilities `h_t = μ + φ·(h_{t-1} − μ) + exp(log σ)·ε_t` and the
/// log-likelihood of observations `y_t ~ N(0, exp(h_t))`; inputs `ε, y, μ, φ, log σ, h_0`.
fn stochastic_volatility(v: &[Var]) -> (Vec<Var>, Var) {
    let lp = Loop::new("sv", &[&v[0], &v[1]], &[&v[5]], &[&v[2], &v[3], &v[4]]);
    let out = lp.build(|taps, o| {
        let (eps, y, h_prev) = (&taps[0], &taps[1], &taps[2]);
        let (mu, phi, log_sigma) = (&o[0], &o[1], &o[2]);
        let h = &(mu + &(phi * &(h_prev - mu))) + &(&log_sigma.exp() * eps);
        let ll = -(&(&h + &(&(y * y) * &(-&h).exp())) * 0.5) - HALF_LOG_2PI;
        Step {
            next: vec![h],
            mapped: vec![ll],
            until: None,
        }
    });
    let cost = out[1].sum(None);
    (out, cost)
}

fn sv_values(rng: &mut Rng, steps: usize) -> Vec<Tensor> {
    let k = 4;
    vec![
        values(rng, &[steps, k], 1.0),
        values(rng, &[steps, k], 1.0),
        values(rng, &[k], 0.3),
        Tensor::from_slice(&[0.9, 0.8, 0.95, 0.7], &[k]).expect("phi"),
        values(rng, &[k], 0.5),
        values(rng, &[k], 0.2),
    ]
}

// ---- HMM forward algorithm ----

/// The forward algorithm of a hidden Markov model with Gaussian emissions in log space:
/// `log α_t = logsumexp(log α_{t-1}[:, None] + log A, axis 0) + log p(y_t | states)`, with
/// `log A = log_softmax(logits, axis 1)`; the cost is the log-likelihood
/// `logsumexp(log α_T)`. Inputs `y, logits, μ, log σ, log α_0`.
fn hmm(v: &[Var]) -> (Vec<Var>, Var) {
    let log_a = ops::log_softmax(&v[1], Some(&[1])).expect("log A");
    let lp = Loop::new("hmm", &[&v[0]], &[&v[4]], &[&log_a, &v[2], &v[3]]);
    let out = lp.build(|taps, o| {
        let (y, alpha) = (&taps[0], &taps[1]);
        let (log_a, mu, log_sigma) = (&o[0], &o[1], &o[2]);
        let z = &(y - mu) / &log_sigma.exp();
        let emission = &(-(&(&z * &z) * 0.5) - log_sigma) - HALF_LOG_2PI;
        let col = ops::expand_dims(alpha, 1).expect("column");
        let moved = ops::logsumexp(&(&col + log_a), Some(&[0]), false).expect("logsumexp");
        Step {
            next: vec![&moved + &emission],
            mapped: vec![],
            until: None,
        }
    });
    let cost = ops::logsumexp(&last(&out[0]), None, false).expect("log-likelihood");
    (out, cost)
}

fn hmm_values(rng: &mut Rng, steps: usize, k: usize) -> Vec<Tensor> {
    vec![
        values(rng, &[steps], 2.0),
        values(rng, &[k, k], 1.0),
        values(rng, &[k], 1.5),
        values(rng, &[k], 0.3),
        Tensor::from_slice(&vec![-(k as f64).ln(); k], &[k]).expect("alpha0"),
    ]
}

// ---- ODE integration ----

/// `f(x) = A·x − 0.1·x³`.
fn drift(a: &Var, x: &Var) -> Var {
    &a.matmul(x) - &(&(&(x * x) * x) * 0.1)
}

/// 40 RK4 steps of `dx/dt = A·x − 0.1·x³` from `x_0`; inputs `A, x_0, dt`.
fn rk4(v: &[Var]) -> (Vec<Var>, Var) {
    let mut lp = Loop::new("rk4", &[], &[&v[1]], &[&v[0], &v[2]]);
    lp.n_steps = Var::int_constant(40);
    let out = lp.build(|taps, o| {
        let (x, a, dt) = (&taps[0], &o[0], &o[1]);
        let half = dt * 0.5;
        let k1 = drift(a, x);
        let k2 = drift(a, &(x + &(&half * &k1)));
        let k3 = drift(a, &(x + &(&half * &k2)));
        let k4 = drift(a, &(x + &(dt * &k3)));
        let sum = &(&(&k1 + &(&k2 * 2.0)) + &(&k3 * 2.0)) + &k4;
        Step {
            next: vec![x + &(&(dt / 6.0) * &sum)],
            mapped: vec![],
            until: None,
        }
    });
    let cost = square_sum(&out);
    (out, cost)
}

/// Euler–Maruyama steps of `dx = (A·x − 0.1·x³) dt + σ dW` driven by the noise `ε_t`
/// (`dW = √dt·ε_t`); inputs `A, x_0, dt, ε, σ`.
fn euler_maruyama(v: &[Var]) -> (Vec<Var>, Var) {
    let lp = Loop::new("euler-maruyama", &[&v[3]], &[&v[1]], &[&v[0], &v[2], &v[4]]);
    let out = lp.build(|taps, o| {
        let (eps, x, a, dt, sigma) = (&taps[0], &taps[1], &o[0], &o[1], &o[2]);
        let noise = &(&dt.sqrt() * sigma) * eps;
        Step {
            next: vec![&(x + &(dt * &drift(a, x))) + &noise],
            mapped: vec![],
            until: None,
        }
    });
    let cost = square_sum(&out);
    (out, cost)
}

fn ode_values(rng: &mut Rng, d: usize, steps: usize) -> Vec<Tensor> {
    let mut vals = vec![
        values(rng, &[d, d], 0.8),
        values(rng, &[d], 1.0),
        Tensor::scalar(0.05),
    ];
    if steps > 0 {
        vals.push(values(rng, &[steps, d], 1.0));
        vals.push(Tensor::scalar(0.3));
    }
    vals
}

// ---- Newton iterations ----

/// Newton's method on `x³ + x − a = 0` for a vector `a`, until the largest step is below
/// `1e-13` (at most 100 steps); the cost is the last iterate's sum. Inputs `a, x_0`.
fn newton(v: &[Var]) -> (Vec<Var>, Var) {
    let mut lp = Loop::new("newton", &[], &[&v[1]], &[&v[0]]);
    lp.n_steps = Var::int_constant(100);
    let out = lp.build(|taps, o| {
        let (x, a) = (&taps[0], &o[0]);
        let f = &(&(&(x * x) * x) + x) - a;
        let df = &(&(x * x) * 3.0) + 1.0;
        let dx = &f / &df;
        let done = ops::lt(
            &dx.abs().max(None),
            &Var::scalar_constant(1e-13, DType::F64),
        )
        .expect("until");
        Step {
            next: vec![x - &dx],
            mapped: vec![],
            until: Some(done),
        }
    });
    let cost = last(&out[0]).sum(None);
    (out, cost)
}

/// Newton's square root `x ← (x + a/x)/2` of a scalar until `|x² − a| < 1e-12·a`; inputs
/// `a, x_0`.
fn newton_sqrt(v: &[Var]) -> (Vec<Var>, Var) {
    let mut lp = Loop::new("newton-sqrt", &[], &[&v[1]], &[&v[0]]);
    lp.n_steps = Var::int_constant(100);
    let out = lp.build(|taps, o| {
        let (x, a) = (&taps[0], &o[0]);
        let next = &(x + &(a / x)) * 0.5;
        let done = ops::lt(&(&(&next * &next) - a).abs(), &(a * 1e-12)).expect("until");
        Step {
            next: vec![next],
            mapped: vec![],
            until: Some(done),
        }
    });
    let cost = last(&out[0]);
    (out, cost)
}

// ---- Recurrent cells on a batch ----

/// An LSTM over `X` (steps × batch × inputs), `h` and `c` of shape (batch, hidden), with the
/// four gates in one matrix: `z = x_t W + h U + b`, `i, f, o = σ(z[:, :H]), σ(z[:, H:2H]),
/// σ(z[:, 2H:3H])`, `g = tanh(z[:, 3H:])`, `c ← f·c + i·g`, `h ← o·tanh(c)`. Inputs
/// `X, W, U, b, h_0, c_0`; the cost is the sum of squares of `h`'s trajectory.
fn lstm(v: &[Var]) -> (Vec<Var>, Var) {
    let lp = Loop::new("lstm", &[&v[0]], &[&v[4], &v[5]], &[&v[1], &v[2], &v[3]]);
    let out = lp.build(|taps, o| {
        let (x, h, c) = (&taps[0], &taps[1], &taps[2]);
        let (w, u, b) = (&o[0], &o[1], &o[2]);
        let z = &(&x.matmul(w) + &h.matmul(u)) + b;
        let gate = |k: usize| columns(&z, k * HIDDEN, (k + 1) * HIDDEN);
        let (i, f, og, g) = (
            gate(0).sigmoid(),
            gate(1).sigmoid(),
            gate(2).sigmoid(),
            gate(3).tanh(),
        );
        let c_next = &(&f * c) + &(&i * &g);
        let h_next = &og * &c_next.tanh();
        Step {
            next: vec![h_next, c_next],
            mapped: vec![],
            until: None,
        }
    });
    let cost = square_sum(&out[..1]);
    (out, cost)
}

/// A GRU over `X` (steps × batch × inputs) with `h` of shape (batch, hidden) and its gates
/// in one matrix each: `a = x_t W + b`, `r = h U`, `z = σ(a[:, :H] + r[:, :H])`,
/// `q = σ(a[:, H:2H] + r[:, H:2H])`, `n = tanh(a[:, 2H:] + q·r[:, 2H:])`,
/// `h ← (1 − z)·n + z·h`. Inputs `X, W, U, b, h_0`.
fn gru(v: &[Var]) -> (Vec<Var>, Var) {
    let lp = Loop::new("gru", &[&v[0]], &[&v[4]], &[&v[1], &v[2], &v[3]]);
    let out = lp.build(|taps, o| {
        let (x, h) = (&taps[0], &taps[1]);
        let (w, u, b) = (&o[0], &o[1], &o[2]);
        let a = &x.matmul(w) + b;
        let r = h.matmul(u);
        let part = |m: &Var, k: usize| columns(m, k * HIDDEN, (k + 1) * HIDDEN);
        let z = (&part(&a, 0) + &part(&r, 0)).sigmoid();
        let q = (&part(&a, 1) + &part(&r, 1)).sigmoid();
        let n = (&part(&a, 2) + &(&q * &part(&r, 2))).tanh();
        Step {
            next: vec![&(&(1.0 - &z) * &n) + &(&z * h)],
            mapped: vec![],
            until: None,
        }
    });
    let cost = square_sum(&out);
    (out, cost)
}

/// The hidden width of the recurrent cells.
const HIDDEN: usize = 5;

fn cell_values(rng: &mut Rng, gates: usize, states: usize) -> Vec<Tensor> {
    let (steps, batch, inputs) = (12, 4, 3);
    let mut vals = vec![
        values(rng, &[steps, batch, inputs], 1.0),
        values(rng, &[inputs, gates * HIDDEN], 0.6),
        values(rng, &[HIDDEN, gates * HIDDEN], 0.5),
        values(rng, &[gates * HIDDEN], 0.3),
    ];
    for _ in 0..states {
        vals.push(values(rng, &[batch, HIDDEN], 0.5));
    }
    vals
}

// ---- A map with no state ----

/// A map over the rows of `X` (no state): each row standardised, and the `logsumexp` of
/// `W x_t`; inputs `X, W`.
fn row_map(v: &[Var]) -> (Vec<Var>, Var) {
    let lp = Loop::new("row-map", &[&v[0]], &[], &[&v[1]]);
    let out = lp.build(|taps, o| {
        let (x, w) = (&taps[0], &o[0]);
        let centred = x - &x.mean(None);
        let scale = (&(&centred * &centred).mean(None) + 1e-6).sqrt();
        let lse = ops::logsumexp(&w.matmul(x), None, false).expect("logsumexp");
        Step {
            next: vec![],
            mapped: vec![&centred / &scale, lse],
            until: None,
        }
    });
    let cost = square_sum(&out);
    (out, cost)
}

// ---- PyTensor's documented loops ----

/// Fibonacci numbers: taps `[-2, -1]` from `[f_0, f_1]`, `n` steps; inputs `f` (2), `n`.
fn fibonacci(v: &[Var]) -> (Vec<Var>, Var) {
    let lp = Loop {
        name: "fibonacci",
        sequences: vec![],
        states: vec![(v[0].clone(), vec![-2, -1])],
        others: vec![],
        n_steps: v[1].clone(),
    };
    let out = lp.build(|taps, _| Step {
        next: vec![&taps[0] + &taps[1]],
        mapped: vec![],
        until: None,
    });
    let cost = last(&out[0]);
    (out, cost)
}

/// `A ** k` by repeated multiplication (PyTensor's first scan example): the last of `k`
/// steps `r ← r·A` from ones; inputs `A, k`.
fn power(v: &[Var]) -> (Vec<Var>, Var) {
    let ones = ops::ones_like(&v[0], None).expect("ones");
    let mut lp = Loop::new("power", &[], &[&ones], &[&v[0]]);
    lp.n_steps = v[1].clone();
    let out = lp.build(|taps, o| Step {
        next: vec![&taps[0] * &o[0]],
        mapped: vec![],
        until: None,
    });
    let result = last(&out[0]);
    let cost = result.sum(None);
    (vec![result], cost)
}

/// A polynomial's value at `x` from its coefficients (PyTensor's second example): a map
/// over the coefficients and `arange(n)` computing `c_i · x^i`, then summed; inputs `c, x`.
fn polynomial(v: &[Var]) -> (Vec<Var>, Var) {
    let n = ops::shape_i(&v[0], 0).expect("length");
    let powers =
        ops::arange(&Var::int_constant(0), &n, &Var::int_constant(1), DType::I64).expect("powers");
    let lp = Loop::new("polynomial", &[&v[0], &powers], &[], &[&v[1]]);
    let out = lp.build(|taps, o| Step {
        next: vec![],
        mapped: vec![&taps[0] * &o[0].pow(&taps[1])],
        until: None,
    });
    let cost = out[0].sum(None);
    (out, cost)
}

#[test]
fn garch_likelihood_and_gradient_run_in_c() {
    let mut rng = Rng::new(1);
    check(&Model {
        name: "garch",
        values: garch_values(&mut rng, 200),
        build: &garch,
        wrt: &[1, 2, 3],
        tol: TOL,
    });
}

#[test]
fn stochastic_volatility_runs_in_c() {
    let mut rng = Rng::new(2);
    check(&Model {
        name: "stochastic volatility",
        values: sv_values(&mut rng, 100),
        build: &stochastic_volatility,
        wrt: &[2, 3, 4],
        tol: TOL,
    });
}

#[test]
fn hmm_forward_algorithm_runs_in_c() {
    for (seed, k) in [(3, 3), (4, 5)] {
        let mut rng = Rng::new(seed);
        check(&Model {
            name: "hmm",
            values: hmm_values(&mut rng, 60, k),
            build: &hmm,
            wrt: &[1, 2, 3],
            tol: TOL,
        });
    }
}

#[test]
fn ode_integrators_run_in_c() {
    for d in [2, 4] {
        let mut rng = Rng::new(5 + d as u64);
        check(&Model {
            name: "rk4",
            values: ode_values(&mut rng, d, 0),
            build: &rk4,
            wrt: &[0, 1],
            tol: TOL,
        });
        check(&Model {
            name: "euler-maruyama",
            values: ode_values(&mut rng, d, 50),
            build: &euler_maruyama,
            wrt: &[0, 1, 4],
            tol: TOL,
        });
    }
}

#[test]
fn newton_iterations_stop_on_until_in_c() {
    let mut rng = Rng::new(9);
    let a = values(&mut rng, &[5], 3.0);
    let vals = vec![a.clone(), Tensor::from_slice(&[0.0; 5], &[5]).expect("x0")];
    check(&Model {
        name: "newton",
        values: vals.clone(),
        build: &newton,
        wrt: &[],
        tol: TOL,
    });
    // The iterate solves the equation, and the loop stopped early.
    let inputs = inputs_of(&vals);
    let (out, _) = newton(&inputs);
    let g = FunctionGraph::new(inputs, out).expect("graph");
    let traj = assert_loops_in_c("newton", &g, &vals).remove(0);
    assert!(traj.shape()[0] < 100, "{:?}", traj.shape());
    let x = traj.to_vec_as::<f64>();
    let x = &x[x.len() - 5..];
    for (x, a) in x.iter().zip(a.to_vec_as::<f64>()) {
        assert!((x * x * x + x - a).abs() < 1e-12, "{x} for {a}");
    }
    check(&Model {
        name: "newton-sqrt",
        values: vec![Tensor::scalar(2.0), Tensor::scalar(1.0)],
        build: &newton_sqrt,
        wrt: &[],
        tol: TOL,
    });
}

#[test]
fn lstm_and_gru_on_a_batch_run_in_c() {
    let mut rng = Rng::new(10);
    check(&Model {
        name: "lstm",
        values: cell_values(&mut rng, 4, 2),
        build: &lstm,
        wrt: &[1, 2, 3, 4, 5],
        tol: TOL,
    });
    check(&Model {
        name: "gru",
        values: cell_values(&mut rng, 3, 1),
        build: &gru,
        wrt: &[1, 2, 3, 4],
        tol: TOL,
    });
}

#[test]
fn a_map_with_no_state_runs_in_c() {
    let mut rng = Rng::new(12);
    check(&Model {
        name: "row map",
        values: vec![
            values(&mut rng, &[15, 6], 2.0),
            values(&mut rng, &[4, 6], 0.7),
        ],
        build: &row_map,
        wrt: &[0, 1],
        tol: TOL,
    });
}

#[test]
fn pytensor_documented_loops_run_in_c() {
    check(&Model {
        name: "fibonacci",
        values: vec![
            Tensor::from_slice(&[0i64, 1], &[2]).expect("f"),
            Tensor::scalar(40i64),
        ],
        build: &|v| {
            let (out, cost) = fibonacci(v);
            (out, cost.astype(DType::F64))
        },
        wrt: &[],
        tol: Tol::EXACT,
    });
    check(&Model {
        name: "fibonacci float",
        values: vec![
            Tensor::from_slice(&[0.5, 1.0], &[2]).expect("f"),
            Tensor::scalar(30i64),
        ],
        build: &fibonacci,
        wrt: &[0],
        tol: Tol::EXACT,
    });
    let mut rng = Rng::new(13);
    check(&Model {
        name: "power",
        values: vec![values(&mut rng, &[7], 1.2), Tensor::scalar(5i64)],
        build: &power,
        wrt: &[0],
        tol: Tol::REORDERED,
    });
    check(&Model {
        name: "polynomial",
        values: vec![values(&mut rng, &[9], 1.0), Tensor::scalar(0.7)],
        build: &polynomial,
        wrt: &[0, 1],
        tol: Tol::MATH_LIBRARIES.or_scaled(1e-14),
    });
}

#[test]
fn model_gradients_pass_verify_grad() {
    let mut rng = Rng::new(20);
    let opts = VerifyGradOptions::default();
    let garch_points = garch_values(&mut rng, 30);
    verify_grad(
        |v| {
            let r = Var::constant(garch_points[0].clone());
            Ok(garch(&[r, v[0].clone(), v[1].clone(), v[2].clone(), v[3].clone()]).1)
        },
        &garch_points[1..],
        &opts,
    )
    .expect("garch gradient");
    let hmm_points = hmm_values(&mut rng, 15, 3);
    verify_grad(|v| Ok(hmm(v).1), &hmm_points, &opts).expect("hmm gradient");
    let lstm_points = cell_values(&mut rng, 4, 2);
    verify_grad(|v| Ok(lstm(v).1), &lstm_points, &opts).expect("lstm gradient");
    let gru_points = cell_values(&mut rng, 3, 1);
    verify_grad(|v| Ok(gru(v).1), &gru_points, &opts).expect("gru gradient");
}
