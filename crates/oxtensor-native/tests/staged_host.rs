//! Whole loops in C whose step holds linear algebra (`crate::host` in the backend): a Kalman
//! filter's step (predict with matrix products, update with `cholesky` and `cho_solve`, or
//! with `solve` and `slogdet`) runs as one staged C loop that calls the interpreter's
//! linear-algebra kernels back for those nodes. Checked against the interpreter's
//! step-by-step loop and a filter written by hand, with the gradients (whose backward step
//! holds the pullbacks' solves) against the interpreter and `verify_grad`; a matrix that is
//! not positive definite at some step is reported by the interpreter, naming the step. Steps
//! holding triangular and general solves, inverses and determinants (contiguous, strided and
//! batched operands) give the interpreter's values bit for bit, as do steps holding
//! arg-reductions, cumulative sums and products, sorts and vectors of scalars.

use crate::common;

use common::data::Rng;
use common::staged::{
    assert_all_staged, assert_reported_by_the_interpreter, assert_staged_like, inputs_for, typed,
    values,
};
use oxtensor::gradient::{GradOptions, VerifyGradOptions, verify_grad};
use oxtensor::{DType, Idx, Mode, ScanSpec, function, grad, linalg, ops, scan};
use oxtensor_data::Tensor;
use oxtensor_graph::{AssumeA, FunctionGraph, TensorType, Var};
use oxtensor_testkit::{Tol, assert_close};

/// How a step solves with the innovation covariance `S`.
#[derive(Clone, Copy, Debug)]
enum Update {
    /// `L = cholesky(S)` (raising on an indefinite `S`), `cho_solve`, `log det S` from `L`'s
    /// diagonal.
    Cholesky,
    /// `solve(S, ·)` (general), `log det S` from `slogdet`.
    Solve,
}

/// `n × n` values `a·Bᵀ B / n + c·I` for a random `B`: symmetric positive definite.
fn spd(rng: &mut Rng, n: usize, a: f64, c: f64) -> Tensor {
    let b = values(rng, &[n, n], 1.0).to_vec_as::<f64>();
    let mut m = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            let s: f64 = (0..n).map(|k| b[k * n + i] * b[k * n + j]).sum();
            m[i * n + j] = a * s / n as f64 + if i == j { c } else { 0.0 };
        }
    }
    Tensor::from_slice(&m, &[n, n]).expect("spd")
}

/// The inputs of [`kalman`]: observations `y` (steps × p), `x0` (1 × n), `P0` (1 × n × n), the
/// transition `A`, its noise `Q`, the observation matrix `H` (p × n) and its noise `R`.
fn kalman_values(seed: u64, n: usize, p: usize, steps: usize) -> Vec<Tensor> {
    let mut rng = Rng::new(seed);
    let mut a = values(&mut rng, &[n, n], 0.8 / n as f64).to_vec_as::<f64>();
    for i in 0..n {
        a[i * n + i] += 0.5;
    }
    let p0 = spd(&mut rng, n, 0.5, 1.0).to_vec_as::<f64>();
    vec![
        values(&mut rng, &[steps, p], 2.0),
        values(&mut rng, &[1, n], 1.0),
        Tensor::from_slice(&p0, &[1, n, n]).expect("P0"),
        Tensor::from_slice(&a, &[n, n]).expect("A"),
        spd(&mut rng, n, 0.2, 0.1),
        values(&mut rng, &[p, n], 1.0),
        spd(&mut rng, p, 0.3, 0.5),
    ]
}

/// A Kalman filter over `inputs` (see [`kalman_values`]): the filtered means and covariances
/// and each step's log-likelihood contribution `−½(log det S + vᵀ S⁻¹ v + p log 2π)`.
fn kalman(inputs: &[Var], update: Update) -> Vec<Var> {
    let (y, x, pm) = (typed(&[None]), typed(&[None]), typed(&[None, None]));
    let (a, q, h, r) = (
        typed(&[None, None]),
        typed(&[None, None]),
        typed(&[None, None]),
        typed(&[None, None]),
    );
    let xp = a.matmul(&x);
    let pp = &a.matmul(&pm).matmul(&a.t()) + &q;
    let v = &y - &h.matmul(&xp);
    let hp = h.matmul(&pp);
    let s = &hp.matmul(&h.t()) + &r;
    let (alpha, gain, logdet) = match update {
        Update::Cholesky => {
            let l = linalg::cholesky(&s, true, false).expect("cholesky");
            let alpha = linalg::cho_solve(&l, &v, true, None).expect("cho_solve");
            let gain = linalg::cho_solve(&l, &hp, true, None).expect("cho_solve");
            let diag = linalg::diagonal(&l).expect("diagonal");
            (alpha, gain, &diag.log().sum(None) * 2.0)
        }
        Update::Solve => {
            let solve =
                |b: &Var| linalg::solve(&s, b, AssumeA::General, true, false, None).expect("solve");
            let (_, logdet) = linalg::slogdet(&s).expect("slogdet");
            (solve(&v), solve(&hp), logdet)
        }
    };
    let x_new = &xp + &hp.t().matmul(&alpha);
    let p_new = &pp - &hp.t().matmul(&gain);
    let n_obs = oxtensor_graph::build::shape_i(&y, 0).expect("p");
    let log2pi = &n_obs.astype(oxtensor_data::DType::F64) * (2.0 * std::f64::consts::PI).ln();
    let ll = &(&(&logdet + &(&v * &alpha).sum(None)) + &log2pi) * -0.5;
    scan(ScanSpec {
        tap_inputs: &[y, x, pm],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1], vec![-1]],
        other_inputs: &[a, q, h, r],
        outputs: &[x_new, p_new, ll],
        n_mapped: 1,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(&inputs[0]),
        initial: &[inputs[1].clone(), inputs[2].clone()],
        others: &inputs[3..],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("kalman"),
    })
    .expect("scan")
}

/// Row-major `a (m × k) · b (k × n)`.
fn mm(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
        }
    }
    c
}

/// Row-major transpose of an `m × n` matrix.
fn tr(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    (0..n * m).map(|i| a[(i % m) * n + i / m]).collect()
}

/// The lower Cholesky factor of an `n × n` SPD matrix, by hand.
fn chol(s: &[f64], n: usize) -> Vec<f64> {
    let mut l = vec![0.0; n * n];
    for j in 0..n {
        let d = s[j * n + j] - (0..j).map(|k| l[j * n + k] * l[j * n + k]).sum::<f64>();
        l[j * n + j] = d.sqrt();
        for i in j + 1..n {
            let o = s[i * n + j] - (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum::<f64>();
            l[i * n + j] = o / l[j * n + j];
        }
    }
    l
}

/// `S⁻¹ B` for `B` of `n × c` by the factor `l` of `S`, by hand.
fn chol_solve(l: &[f64], b: &[f64], n: usize, c: usize) -> Vec<f64> {
    let mut x = b.to_vec();
    for col in 0..c {
        for i in 0..n {
            let s: f64 = (0..i).map(|k| l[i * n + k] * x[k * c + col]).sum();
            x[i * c + col] = (x[i * c + col] - s) / l[i * n + i];
        }
        for i in (0..n).rev() {
            let s: f64 = (i + 1..n).map(|k| l[k * n + i] * x[k * c + col]).sum();
            x[i * c + col] = (x[i * c + col] - s) / l[i * n + i];
        }
    }
    x
}

/// [`kalman`]'s filter by hand: the trajectories of the mean, the covariance and the
/// log-likelihood contributions.
fn kalman_by_hand(vals: &[Tensor]) -> Vec<Vec<f64>> {
    let f = |t: &Tensor| t.to_vec_as::<f64>();
    let (y, mut x, mut pm, a, q, h, r) = (
        f(&vals[0]),
        f(&vals[1]),
        f(&vals[2]),
        f(&vals[3]),
        f(&vals[4]),
        f(&vals[5]),
        f(&vals[6]),
    );
    let (steps, p, n) = (vals[0].shape()[0], vals[0].shape()[1], x.len());
    let mut out = vec![Vec::new(); 3];
    for t in 0..steps {
        let xp = mm(&a, &x, n, n, 1);
        let pp: Vec<f64> = mm(&mm(&a, &pm, n, n, n), &tr(&a, n, n), n, n, n)
            .iter()
            .zip(&q)
            .map(|(u, w)| u + w)
            .collect();
        let hx = mm(&h, &xp, p, n, 1);
        let v: Vec<f64> = (0..p).map(|i| y[t * p + i] - hx[i]).collect();
        let hp = mm(&h, &pp, p, n, n);
        let s: Vec<f64> = mm(&hp, &tr(&h, p, n), p, n, p)
            .iter()
            .zip(&r)
            .map(|(u, w)| u + w)
            .collect();
        let l = chol(&s, p);
        let alpha = chol_solve(&l, &v, p, 1);
        let gain = chol_solve(&l, &hp, p, n);
        let logdet: f64 = (0..p).map(|i| 2.0 * l[i * p + i].ln()).sum();
        let quad: f64 = v.iter().zip(&alpha).map(|(u, w)| u * w).sum();
        let ht = tr(&hp, p, n);
        let dx = mm(&ht, &alpha, n, p, 1);
        let dp = mm(&ht, &gain, n, p, n);
        x = xp.iter().zip(&dx).map(|(u, w)| u + w).collect();
        pm = pp.iter().zip(&dp).map(|(u, w)| u - w).collect();
        out[0].extend(&x);
        out[1].extend(&pm);
        out[2].push(-0.5 * (logdet + quad + p as f64 * (2.0 * std::f64::consts::PI).ln()));
    }
    out
}

/// The whole log-likelihood of [`kalman`]'s loop.
fn log_likelihood(outputs: &[Var]) -> Var {
    outputs[2].sum(None)
}

#[test]
fn kalman_filter_steps_with_linear_algebra_run_as_staged_c_loops() {
    // C's products sum in another order than the interpreter's; the solves are the same
    // kernel on nearly the same operands.
    let tol = Tol::MATH_LIBRARIES.or_scaled(1e-10);
    for (seed, update) in [(0, Update::Cholesky), (1, Update::Solve)]
        .into_iter()
        .chain((2..5).map(|s| (s, [Update::Cholesky, Update::Solve][s as usize % 2])))
    {
        let mut rng = Rng::new(1000 + seed);
        let (n, p, steps) = (1 + rng.below(6), 1 + rng.below(4), 1 + rng.below(12));
        let vals = kalman_values(seed, n, p, steps);
        let inputs = inputs_for(&vals);
        let outputs = kalman(&inputs, update);
        let what = format!("case {seed} ({update:?}, n={n}, p={p}, {steps} steps)");
        let g = FunctionGraph::new(inputs.clone(), outputs.clone()).expect("graph");
        let in_c = assert_all_staged(&what, &g, &vals);
        let build = |mode: Mode, outs: &[Var]| {
            function(&inputs, outs)
                .mode(mode)
                .build()
                .expect("function")
        };
        let interp = build(Mode::new("interp", "fast_run").expect("mode"), &outputs);
        let want = interp.call(&vals).expect("interp");
        for (k, (c, i)) in in_c.iter().zip(&want).enumerate() {
            assert_close(&format!("{what}, output {k}"), c, i, tol);
            let hand = Tensor::from_slice(&kalman_by_hand(&vals)[k], c.shape()).expect("hand");
            assert_close(&format!("{what}, output {k} by hand"), c, &hand, tol);
        }
        // Optimized, with the gradients w.r.t. every float input: the backward step holds the
        // pullbacks of the solves and the factorisation.
        let cost = log_likelihood(&outputs);
        let grads = grad(&cost, &inputs[1..], &GradOptions::default()).expect("grad");
        let mut all = vec![cost];
        all.extend(grads.iter().filter_map(|g| g.var().cloned()));
        let fast = build(Mode::FAST_RUN, &all);
        let interp = build(Mode::new("interp", "fast_run").expect("mode"), &all);
        assert_staged_like(
            &format!("{what} with gradients"),
            fast.graph(),
            &interp,
            &vals,
            tol,
        );
    }
}

#[test]
fn gradients_through_kalman_filter_steps_pass_verify_grad() {
    for (seed, update) in [(40, Update::Cholesky), (41, Update::Solve)] {
        let vals = kalman_values(seed, 3, 2, 4);
        verify_grad(
            |v| Ok(log_likelihood(&kalman(v, update))),
            &vals,
            &VerifyGradOptions::default(),
        )
        .unwrap_or_else(|e| panic!("case {seed}: {e}"));
    }
}

#[test]
fn an_indefinite_matrix_at_some_step_is_reported_by_the_interpreter() {
    // A large initial covariance and `R` with a negative entry on its diagonal: `S` is
    // positive definite at first and stops being so once the filtered covariance shrinks.
    let mut vals = kalman_values(7, 3, 2, 6);
    let p0: Vec<f64> = (0..9)
        .map(|i| if i % 4 == 0 { 40.0 } else { 0.0 })
        .collect();
    vals[2] = Tensor::from_slice(&p0, &[1, 3, 3]).expect("P0");
    let mut r = vals[6].to_vec_as::<f64>();
    r[3] = -4.0;
    vals[6] = Tensor::from_slice(&r, &[2, 2]).expect("R");
    // The step whose factorisation fails, by hand (its square root of a negative number).
    let step = kalman_by_hand(&vals)[2]
        .iter()
        .position(|ll| ll.is_nan())
        .expect("an indefinite step");
    assert!(step > 0, "the loop should run some steps first");
    let inputs = inputs_for(&vals);
    let outputs = kalman(&inputs, Update::Cholesky);
    let g = FunctionGraph::new(inputs, outputs).expect("graph");
    assert_reported_by_the_interpreter(&g, vals, &format!("step {step} of"));
}

#[test]
fn triangular_solves_with_strided_and_batched_operands_match_the_interpreter_bit_for_bit() {
    // `x ← solve_triangular(T, x + y_t)`, the same with `Tᵀ` (a transposed view of a loop
    // invariant) as an upper triangle, `cho_solve` with `T` as the factor, and `cho_solve`
    // with a batch of two factors broadcast against the step's vector: each step's operands
    // are the interpreter's, so are the results, bit for bit.
    let (y, x, t, ts) = (
        typed(&[None]),
        typed(&[None]),
        typed(&[None, None]),
        typed(&[None, None, None]),
    );
    let b = &x + &y;
    let lower = linalg::solve_triangular(&t, &b, false, true, false, None).expect("lower");
    let upper = linalg::solve_triangular(&t.t(), &lower, false, false, false, None).expect("upper");
    let chol = linalg::cho_solve(&t, &upper, true, None).expect("cho_solve");
    let batched = linalg::cho_solve(&ts, &chol, true, None).expect("batched");
    let x_new = &(&chol * 0.5) + &batched.sum(Some(&[0]));
    let mut rng = Rng::new(77);
    let tri = |rng: &mut Rng| {
        let v: Vec<f64> = (0..9)
            .map(|k| match (k / 3, k % 3) {
                (i, j) if i == j => 1.5 + rng.uniform(0.0, 1.0),
                (i, j) if j < i => rng.uniform(-0.5, 0.5),
                _ => 0.0,
            })
            .collect();
        v
    };
    let mut both = tri(&mut rng);
    both.extend(tri(&mut rng));
    let vals = vec![
        values(&mut rng, &[6, 3], 1.0),
        values(&mut rng, &[1, 3], 1.0),
        Tensor::from_slice(&tri(&mut rng), &[3, 3]).expect("T"),
        Tensor::from_slice(&both, &[2, 3, 3]).expect("Ts"),
    ];
    let inputs = inputs_for(&vals);
    let outs = scan(ScanSpec {
        tap_inputs: &[y, x],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1]],
        other_inputs: &[t, ts],
        outputs: &[x_new],
        n_mapped: 0,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(&inputs[0]),
        initial: std::slice::from_ref(&inputs[1]),
        others: &inputs[2..],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("triangular"),
    })
    .expect("scan");
    assert_bit_for_bit("triangular solves", &inputs, &outs, &vals);
}

#[test]
fn solves_inverses_and_determinants_in_steps_match_the_interpreter_bit_for_bit() {
    // `x ← solve(M, x + y_t)` (general, and with `M` taken as symmetric), and, mapped, the
    // inverse, the determinant and `slogdet` of `x₀·M`: a matrix that changes every step.
    let (y, x, m) = (typed(&[None]), typed(&[None]), typed(&[None, None]));
    let b = &x + &y;
    let general = linalg::solve(&m, &b, AssumeA::General, true, false, None).expect("solve");
    let x_new = linalg::solve(&m, &general, AssumeA::Symmetric, true, false, None).expect("sym");
    let first = x.at(&[oxtensor::Idx::At(Var::int_constant(0))]);
    let scaled = &m * &first;
    let inverse = linalg::inv(&scaled).expect("inv");
    let det = linalg::det(&scaled).expect("det");
    let (sign, logabs) = linalg::slogdet(&scaled).expect("slogdet");
    let mut rng = Rng::new(78);
    let mut mv = spd(&mut rng, 3, 0.5, 1.0).to_vec_as::<f64>();
    mv[1] += 0.4;
    let vals = vec![
        values(&mut rng, &[5, 3], 1.0),
        Tensor::from_slice(&[0.5, -0.7, 0.2], &[1, 3]).expect("x0"),
        Tensor::from_slice(&mv, &[3, 3]).expect("M"),
    ];
    let inputs = inputs_for(&vals);
    let outs = scan(ScanSpec {
        tap_inputs: &[y, x],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1]],
        other_inputs: std::slice::from_ref(&m),
        outputs: &[x_new, inverse, det, sign, logabs],
        n_mapped: 4,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(&inputs[0]),
        initial: std::slice::from_ref(&inputs[1]),
        others: &inputs[2..],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("solves"),
    })
    .expect("scan");
    assert_bit_for_bit("solves, inverses and determinants", &inputs, &outs, &vals);
}

#[test]
fn float32_factorisations_solves_and_determinants_in_steps_match_the_interpreter_bit_for_bit() {
    // In `float32`: `L = cholesky(M)`, `x ← cho_solve(L, x + y_t)` then `solve(M, ·)` and
    // `solve_triangular(L, ·)`, and, mapped, the inverse, the determinant and `slogdet` of
    // `x₀·M`.
    let f32_input = |rank: usize| Var::input(None, TensorType::of_rank(DType::F32, rank));
    let (y, x, m) = (f32_input(1), f32_input(1), f32_input(2));
    let l = linalg::cholesky(&m, true, false).expect("cholesky");
    let b = &x + &y;
    let c = linalg::cho_solve(&l, &b, true, None).expect("cho_solve");
    let s = linalg::solve(&m, &c, AssumeA::General, true, false, None).expect("solve");
    let x_new = linalg::solve_triangular(&l, &s, false, true, false, None).expect("triangular");
    let first = x.at(&[Idx::At(Var::int_constant(0))]);
    let scaled = &m * &first;
    let inverse = linalg::inv(&scaled).expect("inv");
    let det = linalg::det(&scaled).expect("det");
    let (sign, logabs) = linalg::slogdet(&scaled).expect("slogdet");
    let mut rng = Rng::new(80);
    let single = |t: Tensor| Tensor::from_slice(&t.to_vec_as::<f32>(), t.shape()).expect("float32");
    let vals = vec![
        single(values(&mut rng, &[5, 3], 1.0)),
        single(Tensor::from_slice(&[0.5, -0.7, 0.2], &[1, 3]).expect("x0")),
        single(spd(&mut rng, 3, 0.5, 1.5)),
    ];
    let inputs: Vec<Var> = vals.iter().map(|v| f32_input(v.ndim())).collect();
    let outs = scan(ScanSpec {
        tap_inputs: &[y, x],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1]],
        other_inputs: std::slice::from_ref(&m),
        outputs: &[x_new, inverse, det, sign, logabs],
        n_mapped: 4,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(&inputs[0]),
        initial: std::slice::from_ref(&inputs[1]),
        others: &inputs[2..],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("float32 solves"),
    })
    .expect("scan");
    assert_bit_for_bit("float32 linear algebra", &inputs, &outs, &vals);
}

#[test]
fn arg_reductions_sorts_cumulations_and_vectors_in_steps_match_the_interpreter_bit_for_bit() {
    // A step of the extra ops C does not compute, each on the loop's buffers: `argmax` along
    // axis 0 and flattened, `argmin` of a transposed view, `cumsum` (float64 and float32)
    // and `cumprod`, `sort` and `argsort` along either axis, and a vector of the step's
    // scalars of three dtypes (a `MakeVector`), mapped and feeding the next state.
    let (y, x, m) = (typed(&[None]), typed(&[None]), typed(&[None, None]));
    let scores = &m * &ops::expand_dims(&(&x + &y), 0).expect("row");
    let best = ops::argmax(&scores, Some(0), false).expect("argmax");
    let flat = ops::argmax(&scores, None, false).expect("flat argmax");
    let worst = ops::argmin(&scores.t(), Some(1), false).expect("argmin");
    let running = ops::extra::cumsum(&scores, Some(1)).expect("cumsum");
    let single = ops::extra::cumsum(&x.astype(DType::F32), Some(0)).expect("cumsum f32");
    let product = ops::extra::cumprod(&(&x * 0.5), Some(0)).expect("cumprod");
    let sorted = ops::extra::sort(&running, Some(0)).expect("sort");
    let order = ops::extra::argsort(&(&x + &y), Some(0)).expect("argsort");
    let at = |v: &Var, i: i64| v.at(&[Idx::At(Var::int_constant(i))]);
    let vector = ops::make_vector(&[at(&x, 0), at(&best, 1), at(&single, 2)], DType::F64)
        .expect("make_vector");
    // Products and sums of two operands only, which C rounds as the interpreter does.
    let x_new = &(&(&at(&sorted, 0) * 0.1) + &(&product * 0.5)) + &(&at(&vector, 2) * 0.01);
    let mut rng = Rng::new(79);
    let vals = vec![
        values(&mut rng, &[6, 4], 1.0),
        values(&mut rng, &[1, 4], 1.0),
        values(&mut rng, &[3, 4], 1.0),
    ];
    let inputs = inputs_for(&vals);
    let outs = scan(ScanSpec {
        tap_inputs: &[y, x],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1]],
        other_inputs: std::slice::from_ref(&m),
        outputs: &[x_new, best, flat, worst, single, order, vector],
        n_mapped: 6,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(&inputs[0]),
        initial: std::slice::from_ref(&inputs[1]),
        others: &inputs[2..],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("extras"),
    })
    .expect("scan");
    assert_bit_for_bit("extra ops", &inputs, &outs, &vals);
}

/// Runs the loop `outs` of `inputs` as staged C loops and in the interpreter on `vals`, and
/// checks every output is the interpreter's, bit for bit.
fn assert_bit_for_bit(what: &str, inputs: &[Var], outs: &[Var], vals: &[Tensor]) {
    let g = FunctionGraph::new(inputs.to_vec(), outs.to_vec()).expect("graph");
    let in_c = assert_all_staged(what, &g, vals);
    let interp = function(inputs, outs)
        .mode(Mode::new("interp", "fast_run").expect("mode"))
        .build()
        .expect("function");
    let want = interp.call(vals).expect("interp");
    let bits = |t: &Tensor| {
        t.to_vec_as::<f64>()
            .iter()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>()
    };
    for (k, (c, i)) in in_c.iter().zip(&want).enumerate() {
        assert_eq!(bits(c), bits(i), "{what}, output {k}");
    }
}
