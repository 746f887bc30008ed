//! A Kalman filter's log-likelihood as a `scan` (4-dim state, 2-dim observations, 1,000
//! steps), the loop a state-space model's sampler calls for its value and gradient, through
//! `Function` (FAST_RUN, the native backend): forward, and forward + gradient w.r.t. the
//! transition `A`, its noise `Q`, the observation matrix `H` and its noise `R`. Two updates:
//! `cholesky` + `cho_solve` with `log det S` from the factor's diagonal, and `solve` +
//! `slogdet`. The forward value is checked against the filter written by hand in Rust,
//! which is also timed.
//!
//! Prints the best of `KALMAN_REPS` (default 20) runs each; run two builds alternately to
//! compare them.
//!
//! `cargo run --release -p oxtensor-bench --bin kalman`

use oxtensor::gradient::GradOptions;
use oxtensor::oxtensor_graph::AssumeA;
use oxtensor::{ScanSpec, Tensor, Var, function, grad, linalg, scan};
use oxtensor_bench::{best, f64_input, noise, ok, reps};
use std::hint::black_box;

const N: usize = 4;
const P: usize = 2;
const STEPS: usize = 1000;

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

fn tr(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    (0..n * m).map(|i| a[(i % m) * n + i / m]).collect()
}

/// The filter by hand: its log-likelihood.
fn by_hand(v: &[Vec<f64>]) -> f64 {
    let (y, mut x, mut pm, a, q, h, r) = (
        &v[0],
        v[1].clone(),
        v[2].clone(),
        &v[3],
        &v[4],
        &v[5],
        &v[6],
    );
    let mut ll = 0.0;
    for t in 0..STEPS {
        let xp = mm(a, &x, N, N, 1);
        let pp: Vec<f64> = mm(&mm(a, &pm, N, N, N), &tr(a, N, N), N, N, N)
            .iter()
            .zip(q)
            .map(|(u, w)| u + w)
            .collect();
        let hx = mm(h, &xp, P, N, 1);
        let e: Vec<f64> = (0..P).map(|i| y[t * P + i] - hx[i]).collect();
        let hp = mm(h, &pp, P, N, N);
        let s: Vec<f64> = mm(&hp, &tr(h, P, N), P, N, P)
            .iter()
            .zip(r)
            .map(|(u, w)| u + w)
            .collect();
        // 2 × 2: S⁻¹ in closed form.
        let det = s[0] * s[3] - s[1] * s[2];
        let si = [s[3] / det, -s[1] / det, -s[2] / det, s[0] / det];
        let alpha = mm(&si, &e, P, P, 1);
        let gain = mm(&si, &hp, P, P, N);
        let ht = tr(&hp, P, N);
        let dx = mm(&ht, &alpha, N, P, 1);
        let dp = mm(&ht, &gain, N, P, N);
        x = xp.iter().zip(&dx).map(|(u, w)| u + w).collect();
        pm = pp.iter().zip(&dp).map(|(u, w)| u - w).collect();
        let quad: f64 = e.iter().zip(&alpha).map(|(u, w)| u * w).sum();
        ll -= 0.5 * (det.ln() + quad + P as f64 * (2.0 * std::f64::consts::PI).ln());
    }
    ll
}

/// The log-likelihood of the filter over `inputs` (`y, x0, P0, A, Q, H, R`).
fn filter(inputs: &[Var], cholesky: bool) -> Var {
    let (y, x, pm) = (f64_input(1), f64_input(1), f64_input(2));
    let (a, q, h, r) = (f64_input(2), f64_input(2), f64_input(2), f64_input(2));
    let xp = a.matmul(&x);
    let pp = &a.matmul(&pm).matmul(&a.t()) + &q;
    let v = &y - &h.matmul(&xp);
    let hp = h.matmul(&pp);
    let s = &hp.matmul(&h.t()) + &r;
    let (alpha, gain, logdet) = if cholesky {
        let l = ok(linalg::cholesky(&s, true, false));
        let diag = ok(linalg::diagonal(&l));
        (
            ok(linalg::cho_solve(&l, &v, true, None)),
            ok(linalg::cho_solve(&l, &hp, true, None)),
            &diag.log().sum(None) * 2.0,
        )
    } else {
        let solve = |b: &Var| ok(linalg::solve(&s, b, AssumeA::General, true, false, None));
        (solve(&v), solve(&hp), ok(linalg::slogdet(&s)).1)
    };
    let x_new = &xp + &hp.t().matmul(&alpha);
    let p_new = &pp - &hp.t().matmul(&gain);
    let c = P as f64 * (2.0 * std::f64::consts::PI).ln();
    let ll = &(&(&logdet + &(&v * &alpha).sum(None)) + c) * -0.5;
    let out = ok(scan(ScanSpec {
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
    }));
    out[2].sum(None)
}

fn main() {
    let mut vals = vec![
        noise(STEPS * P, 1),
        vec![0.0; N],
        (0..N * N)
            .map(|i| if i % (N + 1) == 0 { 1.0 } else { 0.0 })
            .collect(),
    ];
    let mut a: Vec<f64> = noise(N * N, 2).iter().map(|v| v * 0.2).collect();
    for i in 0..N {
        a[i * N + i] += 0.6;
    }
    let q: Vec<f64> = (0..N * N)
        .map(|i| if i % (N + 1) == 0 { 0.1 } else { 0.01 })
        .collect();
    let h = noise(P * N, 3);
    let r = vec![0.5, 0.1, 0.1, 0.4];
    vals.extend([a, q, h, r]);
    let shapes: [&[usize]; 7] = [
        &[STEPS, P],
        &[1, N],
        &[1, N, N],
        &[N, N],
        &[N, N],
        &[P, N],
        &[P, P],
    ];
    let args: Vec<Tensor> = vals
        .iter()
        .zip(shapes)
        .map(|(v, s)| ok(Tensor::from_slice(v, s)))
        .collect();
    let want = by_hand(&vals);
    let hand = best(reps("KALMAN_REPS", 20), || {
        black_box(by_hand(&vals));
    });
    println!(
        "Kalman filter, state {N}, observations {P}, {STEPS} steps (best of {})",
        reps("KALMAN_REPS", 20)
    );
    println!(
        "  by hand (Rust, forward)                 {:8.3} ms",
        hand * 1e3
    );
    for cholesky in [true, false] {
        let inputs: Vec<Var> = [2, 2, 3, 2, 2, 2, 2].map(f64_input).to_vec();
        let ll = filter(&inputs, cholesky);
        let grads = ok(grad(&ll, &inputs[3..], &GradOptions::default()));
        let mut both = vec![ll.clone()];
        both.extend(grads.iter().filter_map(|g| g.var().cloned()));
        let forward = ok(function(&inputs, std::slice::from_ref(&ll)).build());
        let backward = ok(function(&inputs, &both).build());
        let got = ok(forward.call(&args))[0].to_vec_as::<f64>()[0];
        assert!(
            (got - want).abs() <= 1e-9 * want.abs(),
            "log-likelihood {got} differs from {want}"
        );
        let name = if cholesky {
            "cholesky + cho_solve"
        } else {
            "solve + slogdet"
        };
        let fwd = best(reps("KALMAN_REPS", 20), || {
            black_box(ok(forward.call(&args)));
        });
        let bwd = best(reps("KALMAN_REPS", 20), || {
            black_box(ok(backward.call(&args)));
        });
        println!("  {name:<22} forward             {:8.3} ms", fwd * 1e3);
        println!("  {name:<22} forward + gradient  {:8.3} ms", bwd * 1e3);
    }
}
