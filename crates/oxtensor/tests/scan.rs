//! `Scan` loops against plain Rust loops: sequences with taps, states with taps, mapped
//! outputs, `until`, going backwards, errors naming the step; gradients with `verify_grad`;
//! both backends.

use oxtensor::gradient::{VerifyGradOptions, verify_grad};
use oxtensor::{DType, Mode, ScanSpec, Tensor, TensorType, Var, function, ops, scan, vector};
use oxtensor_testkit::{Tol, assert_close, assert_close_slices};

pub(crate) fn f64s(v: &[f64]) -> Tensor {
    Tensor::from_slice(v, &[v.len()]).expect("tensor")
}

pub(crate) fn modes() -> Vec<Mode> {
    vec![
        Mode::FAST_RUN,
        Mode::new("interp", "fast_run").expect("mode"),
        Mode::FAST_COMPILE,
    ]
}

pub(crate) fn scalar_in() -> Var {
    Var::input(None, TensorType::scalar(DType::F64))
}

/// `h[t] = a·h[t-1] + x[t]` (W6, an AR(1) recurrence) over the sequence `x` from `h0`.
pub(crate) fn ar1(a: &Var, x: &Var, h0: &Var, n_steps: i64) -> Var {
    let (xt, hp) = (scalar_in(), scalar_in());
    let next = &(a * &hp) + &xt;
    let init = ops::expand_dims(h0, 0).expect("init");
    scan(ScanSpec {
        tap_inputs: &[xt, hp],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1]],
        other_inputs: &[],
        outputs: &[next],
        n_mapped: 0,
        until: false,
        n_steps: Var::int_constant(n_steps),
        sequences: std::slice::from_ref(x),
        initial: &[init],
        others: &[],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("ar1"),
    })
    .expect("scan")
    .remove(0)
}

#[test]
fn an_ar1_recurrence_equals_a_loop() {
    let (a, h0) = (
        oxtensor::scalar("a", DType::F64),
        oxtensor::scalar("h0", DType::F64),
    );
    let x = vector("x", DType::F64);
    let h = ar1(&a, &x, &h0, -1);
    let xs: Vec<f64> = (0..50).map(|i| (i as f64 * 0.37).sin()).collect();
    let mut want = Vec::new();
    let mut prev = 0.5;
    for &v in &xs {
        prev = 0.9 * prev + v;
        want.push(prev);
    }
    for mode in modes() {
        let f = function(
            &[a.clone(), x.clone(), h0.clone()],
            std::slice::from_ref(&h),
        )
        .mode(mode)
        .build()
        .expect("f");
        let got = f
            .call(&[Tensor::scalar(0.9), f64s(&xs), Tensor::scalar(0.5)])
            .expect("run");
        assert_close("ar1", &got[0], &f64s(&want), Tol::ONE_ULP);
    }
}

#[test]
fn taps_on_sequences_and_states_and_going_backwards() {
    // y[t] = x[t-1]·x[t+1] + y[t-2] - y[t-1], with sequences read backwards or not.
    let x = vector("x", DType::F64);
    let y0 = vector("y0", DType::F64);
    for backwards in [false, true] {
        let (xm, xp, ym2, ym1) = (scalar_in(), scalar_in(), scalar_in(), scalar_in());
        let next = &(&(&xm * &xp) + &ym2) - &ym1;
        let doubled = &xm * 2.0;
        let outs = scan(ScanSpec {
            tap_inputs: &[xm, xp, ym2, ym1],
            sequence_taps: vec![vec![-1, 1]],
            state_taps: vec![vec![-2, -1]],
            other_inputs: &[],
            outputs: &[next, doubled],
            n_mapped: 1,
            until: false,
            n_steps: Var::int_constant(-1),
            sequences: std::slice::from_ref(&x),
            initial: std::slice::from_ref(&y0),
            others: &[],
            go_backwards: backwards,
            truncate_gradient: None,
            name: None,
        })
        .expect("scan");
        let xs: Vec<f64> = (0..9).map(|i| 0.5 + i as f64 * 0.25).collect();
        // Window w reads x[w] (tap -1) and x[w + 2] (tap 1); going backwards, step 0 reads
        // the last window, and taps keep their direction (PyTensor's semantics).
        let windows = xs.len() - 2;
        let mut ys = vec![1.0, -2.0];
        let mut mapped = Vec::new();
        for t in 0..windows {
            let w = if backwards { windows - 1 - t } else { t };
            let v = xs[w] * xs[w + 2] + ys[ys.len() - 2] - ys[ys.len() - 1];
            ys.push(v);
            mapped.push(xs[w] * 2.0);
        }
        for mode in modes() {
            let f = function(&[x.clone(), y0.clone()], &outs)
                .mode(mode)
                .build()
                .expect("f");
            let got = f.call(&[f64s(&xs), f64s(&[1.0, -2.0])]).expect("run");
            assert_close("state", &got[0], &f64s(&ys[2..]), Tol::EXACT);
            assert_close("mapped", &got[1], &f64s(&mapped), Tol::EXACT);
        }
    }
}

#[test]
fn until_stops_after_the_step_where_it_holds() {
    // Doubling from 1 until the value exceeds the limit: at most 100 steps.
    let limit = oxtensor::scalar("limit", DType::F64);
    let prev = scalar_in();
    let next = &prev * 2.0;
    let stop = ops::gt(&next, &limit).expect("gt");
    let outs = scan(ScanSpec {
        tap_inputs: &[prev],
        sequence_taps: vec![],
        state_taps: vec![vec![-1]],
        other_inputs: &[],
        outputs: &[next, stop],
        n_mapped: 0,
        until: true,
        n_steps: Var::int_constant(100),
        sequences: &[],
        initial: &[ops::expand_dims(&Var::scalar_constant(1.0, DType::F64), 0).expect("init")],
        others: &[],
        go_backwards: false,
        truncate_gradient: None,
        name: None,
    })
    .expect("scan");
    for mode in modes() {
        let f = function(std::slice::from_ref(&limit), &outs)
            .mode(mode)
            .build()
            .expect("f");
        let got = f.call(&[Tensor::scalar(40.0)]).expect("run");
        assert_eq!(
            got[0].to_vec::<f64>().expect("f64"),
            vec![2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
        );
    }
}

#[test]
fn errors_name_the_step_and_the_sequence() {
    let (a, h0) = (
        oxtensor::scalar("a", DType::F64),
        oxtensor::scalar("h0", DType::F64),
    );
    let x = vector("x", DType::F64);
    let h = ar1(&a, &x, &h0, 10);
    let f = function(&[a, x, h0], &[h]).build().expect("f");
    let err = f
        .call(&[Tensor::scalar(0.9), f64s(&[1.0, 2.0]), Tensor::scalar(0.0)])
        .expect_err("too short");
    assert!(
        err.to_string()
            .contains("n_steps is 10 but sequence 0 (length 2"),
        "{err}"
    );
    // A step whose value changes shape: the state is a vector, the step appends to it.
    let v = vector("v", DType::F64);
    let prev = Var::input(None, TensorType::new(DType::F64, &[None]));
    let grown = ops::concatenate(&[prev.clone(), prev.clone()], 0).expect("concat");
    let out = scan(ScanSpec {
        tap_inputs: &[prev],
        sequence_taps: vec![],
        state_taps: vec![vec![-1]],
        other_inputs: &[],
        outputs: &[grown],
        n_mapped: 0,
        until: false,
        n_steps: Var::int_constant(3),
        sequences: &[],
        initial: &[ops::expand_dims(&v, 0).expect("init")],
        others: &[],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("grow"),
    })
    .expect("scan")
    .remove(0);
    let f = function(&[v], &[out]).build().expect("f");
    let err = f.call(&[f64s(&[1.0])]).expect_err("shape changes");
    let text = err.to_string();
    assert!(text.contains("step 0 of Scan{grow} failed"), "{text}");
    assert!(
        text.contains("output 0 has shape [2], but its earlier values have shape [1]"),
        "{text}"
    );
}

#[test]
fn gradients_through_time_pass_verify_grad() {
    verify_grad(
        |xs| {
            let h = ar1(&xs[0], &xs[1], &xs[2], -1);
            Ok((&h * &h).sum(None))
        },
        &[
            Tensor::scalar(0.7),
            f64s(&[0.3, -0.5, 1.1, 0.8, -0.2]),
            Tensor::scalar(0.4),
        ],
        &VerifyGradOptions::default(),
    )
    .expect("ar1");
    // Taps on both sides and a mapped output, reading a non-sequence.
    for backwards in [false, true] {
        verify_grad(
            |xs| {
                let (xm, xp, ym2, ym1, w) = (
                    scalar_in(),
                    scalar_in(),
                    scalar_in(),
                    scalar_in(),
                    scalar_in(),
                );
                let next = (&(&(&xm * &xp) + &ym2) - &(&ym1 * &w)).tanh();
                let mapped = (&xm * &w).sin();
                let outs = scan(ScanSpec {
                    tap_inputs: &[xm, xp, ym2, ym1],
                    sequence_taps: vec![vec![-1, 1]],
                    state_taps: vec![vec![-2, -1]],
                    other_inputs: std::slice::from_ref(&w),
                    outputs: &[next, mapped],
                    n_mapped: 1,
                    until: false,
                    n_steps: Var::int_constant(-1),
                    sequences: std::slice::from_ref(&xs[0]),
                    initial: std::slice::from_ref(&xs[1]),
                    others: std::slice::from_ref(&xs[2]),
                    go_backwards: backwards,
                    truncate_gradient: None,
                    name: None,
                })?;
                Ok(&outs[0].sum(None) + &(&outs[1] * &outs[1]).sum(None))
            },
            &[
                f64s(&[0.3, -0.5, 1.1, 0.8, -0.2, 0.6]),
                f64s(&[0.2, -0.4]),
                Tensor::scalar(0.9),
            ],
            &VerifyGradOptions::default(),
        )
        .expect("taps");
    }
}

/// `h ← tanh(W h + x_t)` over `x` from `h0`, truncating the gradient to `truncate` steps.
fn tanh_rnn(
    w: &Var,
    x: &Var,
    h0: &Var,
    truncate: Option<usize>,
) -> Result<Var, oxtensor::GraphError> {
    let row = TensorType::new(DType::F64, &[None]);
    let (xt, hp) = (Var::input(None, row.clone()), Var::input(None, row));
    let wi = Var::input(None, w.ty().clone());
    let next = (&ops::matmul(&wi, &hp)? + &xt).tanh();
    let outs = scan(ScanSpec {
        tap_inputs: &[xt, hp],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1]],
        other_inputs: &[wi],
        outputs: &[next],
        n_mapped: 0,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(x),
        initial: &[ops::expand_dims(h0, 0)?],
        others: std::slice::from_ref(w),
        go_backwards: false,
        truncate_gradient: truncate,
        name: Some("rnn"),
    })?;
    Ok(outs[0].clone())
}

#[test]
fn the_backward_step_reads_the_states_it_would_recompute() {
    use oxtensor::gradient::GradOptions;
    use oxtensor::oxtensor_graph::{Op, toposort};
    // The pullback of `tanh` reads its result, the next state: the backward loop reads it
    // from the trajectory, so its step holds the pullback's two products (Wᵀ·g, g·hᵀ) and
    // neither the forward product nor `tanh`.
    let (w, x, h0) = (
        oxtensor::matrix("W", DType::F64),
        oxtensor::matrix("X", DType::F64),
        vector("h0", DType::F64),
    );
    let h = tanh_rnn(&w, &x, &h0, None).expect("rnn");
    let g = oxtensor::grad(
        &h.sum(None),
        std::slice::from_ref(&w),
        &GradOptions::default(),
    )
    .expect("grad");
    let g = g[0].var().expect("connected").clone();
    let backward = toposort(std::slice::from_ref(&g))
        .iter()
        .find_map(|n| match n.op() {
            Some(Op::Scan(s)) if s.name.as_deref() == Some("rnn_grad") => Some(s.clone()),
            _ => None,
        })
        .expect("a backward loop");
    let body = toposort(backward.body.outputs());
    let count = |f: &dyn Fn(&Op) -> bool| body.iter().filter(|n| n.op().is_some_and(f)).count();
    assert_eq!(
        count(&|op| matches!(op, Op::MatMul)),
        2,
        "products in the backward step"
    );
    let tanh = |op: &Op| matches!(op, Op::Elemwise(oxtensor::oxtensor_graph::ScalarOp::Tanh));
    assert_eq!(count(&tanh), 0, "tanh recomputed in the backward step");
    // The gradient is the derivative; truncated to the last 2 steps, it is backpropagation
    // through those steps only (by hand).
    let (wv, xv, hv) = (
        [0.3, -0.6, 0.2, 0.5, 0.1, -0.4, 0.7, 0.2, -0.3],
        [
            0.5, -0.2, 0.1, 0.3, 0.8, -0.7, -0.1, 0.4, 0.6, 0.2, -0.5, 0.9,
        ],
        [0.1, -0.2, 0.3],
    );
    let vals = [
        Tensor::from_slice(&wv, &[3, 3]).expect("W"),
        Tensor::from_slice(&xv, &[4, 3]).expect("X"),
        f64s(&hv),
    ];
    let cost =
        |v: &[Var], truncate| Ok((&tanh_rnn(&v[0], &v[1], &v[2], truncate)? * 1.5).sum(None));
    verify_grad(|v| cost(v, None), &vals, &VerifyGradOptions::default()).expect("gradient");
    let mut hs = vec![hv.to_vec()];
    for t in 0..4 {
        let prev = &hs[t];
        let next: Vec<f64> = (0..3)
            .map(|i| ((0..3).map(|j| wv[i * 3 + j] * prev[j]).sum::<f64>() + xv[t * 3 + i]).tanh())
            .collect();
        hs.push(next);
    }
    let (mut gw, mut gh) = (vec![0.0; 9], vec![0.0; 3]);
    for t in (2..4).rev() {
        let gz: Vec<f64> = (0..3)
            .map(|i| (gh[i] + 1.5) * (1.0 - hs[t + 1][i].powi(2)))
            .collect();
        for i in 0..3 {
            for j in 0..3 {
                gw[i * 3 + j] += gz[i] * hs[t][j];
            }
        }
        gh = (0..3)
            .map(|j| (0..3).map(|i| wv[i * 3 + j] * gz[i]).sum())
            .collect();
    }
    let inputs = [
        oxtensor::matrix("W", DType::F64),
        oxtensor::matrix("X", DType::F64),
        vector("h0", DType::F64),
    ];
    let c = cost(&inputs, Some(2)).expect("cost");
    let g = oxtensor::grad(&c, &inputs[..1], &GradOptions::default()).expect("grad");
    for mode in modes() {
        let f = function(&inputs, &[g[0].var().expect("connected").clone()])
            .mode(mode)
            .build()
            .expect("f");
        let got = f.call(&vals).expect("run");
        assert_close_slices(
            "truncated gradient",
            &got[0].to_vec_as::<f64>(),
            &gw,
            Tol::MATH_LIBRARIES.or_scaled(1e-13),
            false,
        );
    }
}

#[test]
fn jacobians_and_hessians_of_run_time_sizes_loop() {
    use oxtensor::gradient::{GradOptions, hessian, jacobian};
    let x = vector("x", DType::F64);
    let y = &x.exp() * &x.sum(None);
    let j = jacobian(&y, std::slice::from_ref(&x), &GradOptions::default()).expect("jacobian");
    let cost = (&x * &x * &x).sum(None);
    let h = hessian(&cost, std::slice::from_ref(&x), &GradOptions::default()).expect("hessian");
    let xs = [0.5, -1.0, 2.0];
    let s: f64 = xs.iter().sum();
    // ∂(e^{x_i}·Σx)/∂x_j = δ_ij e^{x_i} Σx + e^{x_i}; the Hessian of Σx³ is diag(6x).
    let mut jw = Vec::new();
    let mut hw = Vec::new();
    for (i, &xi) in xs.iter().enumerate() {
        for k in 0..xs.len() {
            let e = xi.exp();
            jw.push(e + if i == k { e * s } else { 0.0 });
            hw.push(if i == k { 6.0 * xi } else { 0.0 });
        }
    }
    for mode in modes() {
        let f = function(std::slice::from_ref(&x), &[j[0].clone(), h[0].clone()])
            .mode(mode)
            .build()
            .expect("f");
        let got = f.call(&[f64s(&xs)]).expect("run");
        assert_eq!(got[0].shape(), &[3, 3]);
        assert_close(
            "jacobian",
            &got[0],
            &Tensor::from_slice(&jw, &[3, 3]).expect("t"),
            Tol::MATH_LIBRARIES,
        );
        assert_close(
            "hessian",
            &got[1],
            &Tensor::from_slice(&hw, &[3, 3]).expect("t"),
            Tol::ONE_ULP,
        );
    }
}

#[test]
fn forward_mode_through_a_loop() {
    let (a, h0) = (
        oxtensor::scalar("a", DType::F64),
        oxtensor::scalar("h0", DType::F64),
    );
    let x = vector("x", DType::F64);
    let h = ar1(&a, &x, &h0, -1);
    let da = oxtensor::scalar("da", DType::F64);
    let jvp = oxtensor::gradient::pushforward(
        std::slice::from_ref(&h),
        std::slice::from_ref(&a),
        std::slice::from_ref(&da),
    )
    .expect("pushforward")
    .remove(0);
    // h_t = a·h_{t-1} + x_t ⇒ ∂h_t/∂a = h_{t-1} + a·∂h_{t-1}/∂a.
    let xs = [0.3, -0.5, 1.1, 0.8];
    let (av, h0v, dav) = (0.7, 0.4, 2.0);
    let (mut prev, mut dprev, mut want) = (h0v, 0.0, Vec::new());
    for &xv in &xs {
        let d = prev + av * dprev;
        prev = av * prev + xv;
        dprev = d;
        want.push(d * dav);
    }
    for mode in modes() {
        let f = function(
            &[a.clone(), x.clone(), h0.clone(), da.clone()],
            std::slice::from_ref(&jvp),
        )
        .mode(mode)
        .build()
        .expect("f");
        let got = f
            .call(&[
                Tensor::scalar(av),
                f64s(&xs),
                Tensor::scalar(h0v),
                Tensor::scalar(dav),
            ])
            .expect("run");
        assert_close("jvp", &got[0], &f64s(&want), Tol::REORDERED);
    }
}

/// Truncated backpropagation by hand for `y[t] = c1·y[t-1] + c2·y[t-2] + x[t]`, cost `Σ y²`:
/// run back through the last `g` steps only. Returns the cotangents of `x`, of the initial
/// values `[y[-2], y[-1]]`, and of `c1`.
fn truncated_by_hand(
    c: (f64, f64),
    x: &[f64],
    init: [f64; 2],
    g: usize,
) -> (Vec<f64>, [f64; 2], f64) {
    let n = x.len();
    let mut y = init.to_vec();
    for t in 0..n {
        let v = c.0 * y[t + 1] + c.1 * y[t] + x[t];
        y.push(v);
    }
    // y[t] is at buffer row t + 2.
    let first = n - g.min(n);
    let mut delta = vec![0.0; n + 2];
    for t in (first..n).rev() {
        delta[t] = 2.0 * y[t + 2] + c.0 * delta[t + 1] + c.1 * delta[t + 2];
    }
    let gx: Vec<f64> = (0..n)
        .map(|t| if t >= first { delta[t] } else { 0.0 })
        .collect();
    let live = |t: usize| if t >= first && t < n { delta[t] } else { 0.0 };
    let g_init = [c.1 * live(0), c.0 * live(0) + c.1 * live(1)];
    let gc1 = (first..n).map(|t| delta[t] * y[t + 1]).sum();
    (gx, g_init, gc1)
}

#[test]
fn truncated_gradients_run_back_through_the_last_steps_only() {
    let (x, y0, c1) = (
        vector("x", DType::F64),
        vector("y0", DType::F64),
        oxtensor::scalar("c1", DType::F64),
    );
    let xs = [0.3, -0.5, 1.1, 0.8, -0.2, 0.6];
    let init = [0.2, -0.4];
    let c = (0.7, -0.3);
    for g in [1, 2, 4, 5, 6, 9] {
        let (ym2, ym1, xt, w) = (scalar_in(), scalar_in(), scalar_in(), scalar_in());
        let next = &(&(&ym1 * &w) + &(&ym2 * c.1)) + &xt;
        let y = scan(ScanSpec {
            tap_inputs: &[xt, ym2, ym1],
            sequence_taps: vec![vec![0]],
            state_taps: vec![vec![-2, -1]],
            other_inputs: std::slice::from_ref(&w),
            outputs: &[next],
            n_mapped: 0,
            until: false,
            n_steps: Var::int_constant(-1),
            sequences: std::slice::from_ref(&x),
            initial: std::slice::from_ref(&y0),
            others: std::slice::from_ref(&c1),
            go_backwards: false,
            truncate_gradient: Some(g),
            name: None,
        })
        .expect("scan")
        .remove(0);
        let cost = (&y * &y).sum(None);
        let grads = oxtensor::grad_vars(&cost, &[x.clone(), y0.clone(), c1.clone()]).expect("grad");
        let (gx, g_init, gc1) = truncated_by_hand(c, &xs, init, g);
        for mode in modes() {
            let f = function(&[x.clone(), y0.clone(), c1.clone()], &grads)
                .mode(mode)
                .build()
                .expect("f");
            let got = f
                .call(&[f64s(&xs), f64s(&init), Tensor::scalar(c.0)])
                .expect("run");
            let tol = Tol::ulps(4).or_abs(1e-13);
            assert_close(&format!("g={g}: x"), &got[0], &f64s(&gx), tol);
            assert_close(&format!("g={g}: y0"), &got[1], &f64s(&g_init), tol);
            assert_close(&format!("g={g}: c1"), &got[2], &Tensor::scalar(gc1), tol);
        }
    }
}

/// How many nodes computing `op` a graph holds, inside Composites too.
/// PyTensor's polynomial example: a map over the coefficients (of a length known only when
/// called) and `arange(10000)`, whose steps are the fewer the sequences allow.
fn polynomial_terms(c: &Var, x: &Var, powers: &Var, n_steps: &Var) -> Var {
    let (ci, pi, xi) = (
        scalar_in(),
        Var::input(None, TensorType::scalar(DType::I64)),
        scalar_in(),
    );
    let term = &ci * &xi.pow(&pi);
    scan(ScanSpec {
        tap_inputs: &[ci, pi],
        sequence_taps: vec![vec![0], vec![0]],
        state_taps: vec![],
        other_inputs: std::slice::from_ref(&xi),
        outputs: &[term],
        n_mapped: 1,
        until: false,
        n_steps: n_steps.clone(),
        sequences: &[c.clone(), powers.clone()],
        initial: &[],
        others: std::slice::from_ref(x),
        go_backwards: false,
        truncate_gradient: None,
        name: Some("polynomial"),
    })
    .expect("scan")
    .remove(0)
}

#[test]
fn a_loop_has_a_static_length_only_when_its_step_count_is_known() {
    let (c, x) = (vector("c", DType::F64), scalar_in());
    let powers = ops::arange(
        &Var::int_constant(0),
        &Var::int_constant(10000),
        &Var::int_constant(1),
        DType::I64,
    )
    .expect("arange");
    let terms = polynomial_terms(&c, &x, &powers, &Var::int_constant(-1));
    // `c` may be shorter than 10000: the length is not static.
    assert_eq!(terms.ty().shape[0], None);
    // A symbolic step count may be negative (as many as the sequences allow) or not.
    let n = Var::input(None, TensorType::scalar(DType::I64));
    let all_of = powers.astype(DType::F64);
    let counted = polynomial_terms(&all_of, &x, &powers, &n);
    assert_eq!(counted.ty().shape[0], None);
    // A constant count, or sequences all of static length, make it static.
    let fixed = polynomial_terms(&c, &x, &powers, &Var::int_constant(3));
    assert_eq!(fixed.ty().shape[0], Some(3));
    let both = polynomial_terms(&all_of, &x, &powers, &Var::int_constant(-1));
    assert_eq!(both.ty().shape[0], Some(10000));
    // The gradient's loops run as many steps as the forward one did (the length of `c`).
    let value = terms.sum(None);
    let g = oxtensor::grad(&value, &[c.clone(), x.clone()], &Default::default()).expect("grad");
    let outputs: Vec<Var> = std::iter::once(value)
        .chain(g.iter().map(|g| g.var().expect("connected").clone()))
        .collect();
    let (cs, xv) = ([1.0, 0.0, 2.0], 3.0);
    for mode in modes() {
        let f = function(&[c.clone(), x.clone()], &outputs)
            .mode(mode)
            .build()
            .expect("f");
        let got = f.call(&[f64s(&cs), Tensor::scalar(xv)]).expect("run");
        let want = [19.0, 1.0, 3.0, 9.0, 12.0];
        let got: Vec<f64> = got.iter().flat_map(|t| t.to_vec_as::<f64>()).collect();
        assert_close_slices("value, d/dc, d/dx", &got, &want, Tol::MATH_LIBRARIES, false);
    }
}
