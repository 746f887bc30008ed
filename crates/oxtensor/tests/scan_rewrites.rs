//! The loop rewrites, checked on values and on the rewritten graphs: work every step repeats
//! moves out of the loop, an elementwise map becomes one elementwise op, outputs read only at
//! their last step keep only it, and loops over the same sequences merge.

use crate::scan::{ar1, f64s, modes, scalar_in};
use oxtensor::{DType, ScanSpec, Tensor, TensorType, Var, function, ops, scan, vector};
use oxtensor_testkit::{Tol, assert_close};
fn count_op(outputs: &[Var], op: oxtensor::oxtensor_graph::ScalarOp) -> usize {
    use oxtensor::oxtensor_graph::{Op, toposort};
    toposort(outputs)
        .iter()
        .map(|n| match n.op() {
            Some(Op::Elemwise(e)) => usize::from(*e == op),
            Some(Op::Composite(c)) => count_op(c.outputs(), op),
            _ => 0,
        })
        .sum()
}

#[test]
fn work_every_step_repeats_moves_out_of_the_loop() {
    use oxtensor::oxtensor_graph::{Op, ScalarOp};
    // h[t] = exp(w)·h[t-1] + x[t]: exp(w) reads no sequence or state.
    let (x, h0, w) = (
        oxtensor::matrix("x", DType::F64),
        vector("h0", DType::F64),
        vector("w", DType::F64),
    );
    let row = || Var::input(None, TensorType::of_rank(DType::F64, 1));
    let (xt, hp, wi) = (row(), row(), row());
    let next = &(&wi.exp() * &hp) + &xt;
    let h = scan(ScanSpec {
        tap_inputs: &[xt, hp],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1]],
        other_inputs: std::slice::from_ref(&wi),
        outputs: &[next],
        n_mapped: 0,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(&x),
        initial: &[ops::expand_dims(&h0, 0).expect("init")],
        others: std::slice::from_ref(&w),
        go_backwards: false,
        truncate_gradient: None,
        name: Some("decay"),
    })
    .expect("scan")
    .remove(0);
    let (steps, n) = (6, 3);
    let xs: Vec<f64> = (0..steps * n).map(|i| (i as f64 * 0.7).sin()).collect();
    let (h0v, wv): ([f64; 3], [f64; 3]) = ([0.5, -1.0, 2.0], [-0.1, -0.5, -2.0]);
    let mut want = Vec::new();
    let mut prev = h0v.to_vec();
    for t in 0..steps {
        for j in 0..n {
            prev[j] = wv[j].exp() * prev[j] + xs[t * n + j];
        }
        want.extend_from_slice(&prev);
    }
    let want = Tensor::from_slice(&want, &[steps, n]).expect("want");
    for (mode, rewrites) in modes().into_iter().zip([true, true, false]) {
        let f = function(
            &[x.clone(), h0.clone(), w.clone()],
            std::slice::from_ref(&h),
        )
        .mode(mode)
        .build()
        .expect("f");
        let got = f
            .call(&[
                Tensor::from_slice(&xs, &[steps, n]).expect("x"),
                f64s(&h0v),
                f64s(&wv),
            ])
            .expect("run");
        assert_close("h", &got[0], &want, Tol::ONE_ULP);
        if rewrites {
            let graph = f.graph();
            let scans: Vec<_> = graph
                .toposort()
                .iter()
                .filter_map(|n| match n.op() {
                    Some(Op::Scan(s)) => Some(s.clone()),
                    _ => None,
                })
                .collect();
            assert_eq!(scans.len(), 1);
            assert_eq!(count_op(scans[0].body.outputs(), ScalarOp::Exp), 0);
            assert_eq!(count_op(graph.outputs(), ScalarOp::Exp), 1);
        }
    }
}

#[test]
fn an_elementwise_map_becomes_one_elementwise_op() {
    use oxtensor::oxtensor_graph::Op;
    let (x, w) = (oxtensor::matrix("x", DType::F64), vector("w", DType::F64));
    let row = || Var::input(None, TensorType::of_rank(DType::F64, 1));
    let (xt, wi) = (row(), row());
    let bumped = &(&(-(&xt * &xt)).exp() * &wi) + &xt;
    // A mapped output that reads no sequence is one value for all steps: it stays a loop.
    let same = &wi * 2.0;
    let outs = scan(ScanSpec {
        tap_inputs: std::slice::from_ref(&xt),
        sequence_taps: vec![vec![0]],
        state_taps: vec![],
        other_inputs: std::slice::from_ref(&wi),
        outputs: &[bumped, same],
        n_mapped: 2,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(&x),
        initial: &[],
        others: std::slice::from_ref(&w),
        go_backwards: false,
        truncate_gradient: None,
        name: Some("bump"),
    })
    .expect("scan");
    let (steps, n) = (5, 3);
    let xs: Vec<f64> = (0..steps * n).map(|i| (i as f64 * 0.3).cos()).collect();
    let wv = [0.5, -1.0, 2.0];
    let mut want = Vec::new();
    let mut twice = Vec::new();
    for t in 0..steps {
        for j in 0..n {
            let v = xs[t * n + j];
            want.push((-(v * v)).exp() * wv[j] + v);
            twice.push(wv[j] * 2.0);
        }
    }
    for (mode, rewrites) in modes().into_iter().zip([true, true, false]) {
        let count_scans = |outputs: &[Var]| {
            oxtensor::oxtensor_graph::toposort(outputs)
                .iter()
                .filter(|n| matches!(n.op(), Some(Op::Scan(_))))
                .count()
        };
        let f = function(&[x.clone(), w.clone()], &outs[..1])
            .mode(mode.clone())
            .build()
            .expect("f");
        let xt = Tensor::from_slice(&xs, &[steps, n]).expect("x");
        let got = f.call(&[xt.clone(), f64s(&wv)]).expect("run");
        let want_t = Tensor::from_slice(&want, &[steps, n]).expect("want");
        assert_close("bumped", &got[0], &want_t, Tol::MATH_LIBRARIES);
        assert_eq!(count_scans(f.graph().outputs()), usize::from(!rewrites));
        let g = function(&[x.clone(), w.clone()], &outs[1..])
            .mode(mode)
            .build()
            .expect("g");
        let got = g.call(&[xt, f64s(&wv)]).expect("run");
        let twice_t = Tensor::from_slice(&twice, &[steps, n]).expect("twice");
        assert_close("same", &got[0], &twice_t, Tol::EXACT);
    }
}

#[test]
fn outputs_read_only_at_their_last_step_keep_only_it() {
    use oxtensor::Idx;
    use oxtensor::oxtensor_graph::Op;
    let (a, h0) = (
        oxtensor::scalar("a", DType::F64),
        oxtensor::scalar("h0", DType::F64),
    );
    let x = vector("x", DType::F64);
    let h = ar1(&a, &x, &h0, -1);
    let last = ops::subtensor(&h, &[Idx::int(-1)]).expect("h[-1]");
    // The gradient's backward loop reads its carries only at their last step too.
    let da = oxtensor::grad_vars(&h.sum(None), std::slice::from_ref(&a)).expect("grad");
    let xs: Vec<f64> = (0..40).map(|i| (i as f64 * 0.37).sin()).collect();
    let (mut hs, mut prev) = (Vec::new(), 0.5);
    for &v in &xs {
        prev = 0.9 * prev + v;
        hs.push(prev);
    }
    // d Σh / d a = Σ_t g_t h[t-1], g_t = 1 + a g_{t+1}.
    let (mut g, mut want_da) = (0.0, 0.0);
    for t in (0..xs.len()).rev() {
        g = 1.0 + 0.9 * g;
        want_da += g * if t > 0 { hs[t - 1] } else { 0.5 };
    }
    let marked = |f: &oxtensor::Function| -> Vec<Vec<bool>> {
        f.graph()
            .toposort()
            .iter()
            .filter_map(|n| match n.op() {
                Some(Op::Scan(s)) => Some(s.last_only.clone()),
                _ => None,
            })
            .collect()
    };
    for (mode, rewrites) in modes().into_iter().zip([true, true, false]) {
        let inputs = [a.clone(), x.clone(), h0.clone()];
        let args = [Tensor::scalar(0.9), f64s(&xs), Tensor::scalar(0.5)];
        let f = function(&inputs, std::slice::from_ref(&last))
            .mode(mode.clone())
            .build()
            .expect("f");
        let got = f.call(&args).expect("run");
        assert_close(
            "h[-1]",
            &got[0],
            &Tensor::scalar(hs[hs.len() - 1]),
            Tol::ONE_ULP,
        );
        let fd = function(&inputs, &da)
            .mode(mode.clone())
            .build()
            .expect("fd");
        let got = fd.call(&args).expect("run");
        assert_close("da", &got[0], &Tensor::scalar(want_da), Tol::ulps(4));
        if rewrites {
            assert_eq!(marked(&f), vec![vec![true]]);
            // The forward trajectory feeds the backward loop; the backward loop's outputs are
            // read at their last step (the sum for `a`) or not at all.
            let mut marks = marked(&fd);
            marks.sort();
            assert_eq!(marks, vec![vec![], vec![true, true, true]], "{marks:?}");
        }
        // Returned whole, the trajectory stays whole.
        let whole = function(&inputs, &[h.clone(), last.clone()])
            .mode(mode)
            .build()
            .expect("whole");
        assert!(marked(&whole).iter().all(|m| !m.contains(&true)));
        let got = whole.call(&args).expect("run");
        assert_close("h", &got[0], &f64s(&hs), Tol::ONE_ULP);
    }
}

#[test]
fn loops_over_the_same_sequences_merge_into_one() {
    use oxtensor::oxtensor_graph::Op;
    let (a, b, h0) = (
        oxtensor::scalar("a", DType::F64),
        oxtensor::scalar("b", DType::F64),
        oxtensor::scalar("h0", DType::F64),
    );
    let x = vector("x", DType::F64);
    // Two recurrences over x (sharing a non-sequence), and a running maximum of the first's
    // output, which depends on it and so stays a loop of its own.
    let h = ar1(&a, &x, &h0, -1);
    let k = ar1(&b, &x, &h0, -1);
    let (ht, mp) = (scalar_in(), scalar_in());
    let running = ops::maximum(&ht, &mp).expect("max");
    let m = scan(ScanSpec {
        tap_inputs: &[ht, mp],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1]],
        other_inputs: &[],
        outputs: &[running],
        n_mapped: 0,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(&h),
        initial: &[ops::expand_dims(&h0, 0).expect("init")],
        others: &[],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("runmax"),
    })
    .expect("scan")
    .remove(0);
    let xs: Vec<f64> = (0..30).map(|i| (i as f64 * 0.37).sin()).collect();
    let run = |c: f64| -> Vec<f64> {
        let mut prev = 0.5;
        xs.iter()
            .map(|v| {
                prev = c * prev + v;
                prev
            })
            .collect()
    };
    let (hw, kw) = (run(0.9), run(-0.4));
    let mut best = 0.5f64;
    let mw: Vec<f64> = hw
        .iter()
        .map(|&v| {
            best = best.max(v);
            best
        })
        .collect();
    for (mode, rewrites) in modes().into_iter().zip([true, true, false]) {
        let f = function(
            &[a.clone(), b.clone(), x.clone(), h0.clone()],
            &[h.clone(), k.clone(), m.clone()],
        )
        .mode(mode)
        .build()
        .expect("f");
        let got = f
            .call(&[
                Tensor::scalar(0.9),
                Tensor::scalar(-0.4),
                f64s(&xs),
                Tensor::scalar(0.5),
            ])
            .expect("run");
        assert_close("h", &got[0], &f64s(&hw), Tol::ONE_ULP);
        assert_close("k", &got[1], &f64s(&kw), Tol::ONE_ULP);
        assert_close("m", &got[2], &f64s(&mw), Tol::ONE_ULP);
        let loops = f
            .graph()
            .toposort()
            .iter()
            .filter(|n| matches!(n.op(), Some(Op::Scan(_))))
            .count();
        assert_eq!(loops, if rewrites { 2 } else { 3 });
    }
}
