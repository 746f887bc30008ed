//! Reductions through the native backend and the interpreter: every `ReduceOp` on several
//! dtypes, over every subset of axes of inputs laid out contiguous, transposed and reversed,
//! alone and with their elementwise producer fused in.

use crate::common;

use common::data::{Layout, Rng, tensor};
use common::{backend, both, input};
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FunctionGraph, ReduceOp, ScalarOp, TensorType, Var, build};
use oxtensor_testkit::{Tol, assert_close, ulps};

const OPS: [ReduceOp; 6] = ReduceOp::ALL;

/// Every non-empty subset of the axes of a rank-3 array, and the full reduction.
fn axis_sets() -> Vec<Option<Vec<i64>>> {
    let mut sets: Vec<Option<Vec<i64>>> = (1..8u32)
        .map(|m| Some((0..3).filter(|a| m & (1 << a) != 0).collect()))
        .collect();
    sets.push(None);
    sets
}

/// Float sums are combined in another order than the interpreter's: they may differ by a few
/// ulp of the sum of the magnitudes (`scale`, the interpreter's sum of `|x|` there).
fn assert_sum_close(what: &str, got: &Tensor, want: &Tensor, scale: &Tensor) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let f32 = want.dtype() == DType::F32;
    let eps = if f32 {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    for (i, ((a, b), s)) in got
        .to_vec_as::<f64>()
        .into_iter()
        .zip(want.to_vec_as::<f64>())
        .zip(scale.to_vec_as::<f64>())
        .enumerate()
    {
        let ok = ulps(a, b, f32) <= 4 || (a - b).abs() <= 16.0 * eps * s;
        assert!(
            ok,
            "{what}: element {i}: native {a:e} vs interpreter {b:e} (scale {s:e})"
        );
    }
}

/// Every op over every axis set for one dtype and layout (one compile).
fn every_reduction(dtype: DType, layout: Layout, shape: &[usize], seed: u64) {
    let mut rng = Rng::new(seed);
    let x = input("x", dtype, 3);
    // Float products of edge cases (1e300, 1e-300, ∞, 0) depend on the order of the factors
    // (∞·0 or an overflow first): they read `y`, which has none.
    let y = input("y", dtype, 3);
    let mut outputs = Vec::new();
    let mut what = Vec::new();
    for op in OPS {
        let src = if op == ReduceOp::Prod && dtype.is_float() {
            &y
        } else {
            &x
        };
        for axes in axis_sets() {
            let Ok(r) = build::reduce(op, src, axes.as_deref(), false) else {
                continue;
            };
            what.push((op, axes.clone()));
            outputs.push(r);
            if op == ReduceOp::Sum && dtype.is_float() {
                let abs = build::abs(&x).expect("abs");
                outputs.push(build::reduce(op, &abs, axes.as_deref(), false).expect("scale"));
            }
        }
    }
    let values = [
        tensor(&mut rng, dtype, shape, layout, 0.02),
        tensor(&mut rng, dtype, shape, layout, 0.0),
    ];
    let (native, interp) = both(&[x, y], &outputs, &values);
    let mut k = 0;
    for (op, axes) in what {
        let name = format!("{dtype} {layout:?} {shape:?} {op:?} over {axes:?}");
        if op == ReduceOp::Sum && dtype.is_float() {
            assert_sum_close(&name, &native[k], &interp[k], &interp[k + 1]);
            k += 2;
        } else {
            // Products of floats round at every step (thousands of factors here), in another
            // order than the interpreter's, and subnormal products keep few significant bits.
            let tol = Tol {
                ulps: 1024,
                scale: 0.0,
                abs: 1e-300,
            };
            assert_close(
                &name,
                &native[k],
                &interp[k],
                if dtype.is_float() { tol } else { Tol::EXACT },
            );
            k += 1;
        }
    }
}

#[test]
fn every_reduction_on_floats() {
    for (k, layout) in [Layout::Contiguous, Layout::Transposed, Layout::Reversed]
        .into_iter()
        .enumerate()
    {
        every_reduction(DType::F64, layout, &[5, 13, 37], 1 + k as u64);
        every_reduction(DType::F32, layout, &[9, 3, 70], 11 + k as u64);
    }
}

#[test]
fn every_reduction_on_integers_and_bools() {
    for (k, d) in [
        DType::I8,
        DType::I32,
        DType::U8,
        DType::I64,
        DType::U64,
        DType::Bool,
    ]
    .into_iter()
    .enumerate()
    {
        let layout = [Layout::Contiguous, Layout::Transposed, Layout::Reversed][k % 3];
        every_reduction(d, layout, &[4, 17, 9], 30 + k as u64);
    }
}

/// Long rows and columns: several blocks per row, the pairwise cascade, the column path's
/// row leaves, and work split across threads.
#[test]
fn large_reductions() {
    let mut rng = Rng::new(5);
    let x = input("x", DType::F64, 2);
    let abs = build::abs(&x).expect("abs");
    let mut outputs = Vec::new();
    for axes in [Some(vec![0i64]), Some(vec![1]), None] {
        outputs.push(build::sum(&x, axes.as_deref(), false).expect("sum"));
        outputs.push(build::sum(&abs, axes.as_deref(), false).expect("scale"));
        outputs.push(build::max(&x, axes.as_deref(), false).expect("max"));
    }
    for layout in [Layout::Contiguous, Layout::Transposed] {
        let values = [tensor(&mut rng, DType::F64, &[333, 1501], layout, 0.0)];
        let (native, interp) = both(std::slice::from_ref(&x), &outputs, &values);
        for k in (0..outputs.len()).step_by(3) {
            let name = format!("{layout:?} output {k}");
            assert_sum_close(&name, &native[k], &interp[k], &interp[k + 1]);
            assert_close(&name, &native[k + 2], &interp[k + 2], Tol::EXACT);
        }
    }
}

/// Full reductions of large integer and bool arrays (split into pieces across threads, then
/// combined) are exact.
#[test]
fn large_full_reductions_split_across_threads() {
    let mut rng = Rng::new(6);
    let y = input("y", DType::I32, 2);
    let b = input("b", DType::Bool, 2);
    let mut outputs = Vec::new();
    for op in [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min] {
        outputs.push(build::reduce(op, &y, None, false).expect("reduce"));
        outputs.push(build::reduce(op, &y, Some(&[1]), false).expect("reduce"));
    }
    for op in [ReduceOp::All, ReduceOp::Any, ReduceOp::Sum] {
        outputs.push(build::reduce(op, &b, None, false).expect("reduce"));
    }
    let values = [
        tensor(&mut rng, DType::I32, &[2, 200_001], Layout::Reversed, 0.01),
        tensor(&mut rng, DType::Bool, &[300, 999], Layout::Transposed, 0.0),
    ];
    let (native, interp) = both(&[y, b], &outputs, &values);
    for (k, (n, i)) in native.iter().zip(&interp).enumerate() {
        assert_close(&format!("output {k}"), n, i, Tol::EXACT);
    }
}

/// A `FusedReduce` (the fusion pass's decision for a reduction of an elementwise node used
/// nowhere else) computes its program inside its loop (the generated code has a fused value
/// function), with broadcasting operands; results equal the
/// interpreter's. Row-wise logsumexp (W3) is the example.
#[test]
fn fused_producers() {
    let mut rng = Rng::new(8);
    let x = input("x", DType::F64, 2);
    let m = build::max(&x, Some(&[1]), true).expect("max");
    let d = build::sub(&x, &m).expect("sub");
    let e = build::exp(&d).expect("exp");
    let s = build::sum(&e, Some(&[1]), false).expect("sum");
    let m0 = build::max(&x, Some(&[1]), false).expect("max0");
    let lse = build::add(&build::log(&s).expect("log"), &m0).expect("lse");
    // A Composite producer with a row-broadcast operand, reduced over both axes and over
    // columns; and an integer producer (exact).
    let si: Vec<Var> = (0..2)
        .map(|i| Var::input(Some(&format!("s{i}")), TensorType::scalar(DType::F64)))
        .collect();
    let inner = build::mul(&build::sigmoid(&si[0]).expect("sig"), &si[1]).expect("mul");
    let r = Var::input(Some("r"), TensorType::new(DType::F64, &[Some(1), None]));
    let c = build::composite(&si, &[inner], &[x.clone(), r.clone()]).expect("composite");
    let csum = build::sum(&c[0], None, false).expect("csum");
    let c2 = build::composite(
        &si,
        &[build::mul(&build::sigmoid(&si[0]).expect("s"), &si[1]).expect("m")],
        &[r.clone(), x.clone()],
    )
    .expect("composite");
    let cmax = build::max(&c2[0], Some(&[0]), false).expect("cmax");
    let k = input("k", DType::I16, 2);
    let kprod = build::prod(
        &build::elemwise(ScalarOp::Add, &[k.clone(), k.clone()]).expect("add"),
        Some(&[0]),
        false,
    )
    .expect("prod");
    // The fusion pass decides which reductions compute their producer.
    let (outputs, _) =
        oxtensor_rewrite::rules::fuse(&[lse, csum, cmax, kprod]).expect("the fusion pass");
    let fused_reduces = outputs
        .iter()
        .flat_map(|o| oxtensor_graph::toposort(std::slice::from_ref(o)))
        .filter(|n| matches!(n.op(), Some(oxtensor_graph::Op::FusedReduce { .. })))
        .count();
    assert_eq!(fused_reduces, 4);
    let g =
        FunctionGraph::new(vec![x.clone(), r.clone(), k.clone()], outputs.to_vec()).expect("graph");
    let source = backend().generate(&g);
    // Four reductions compute their producer's block (an `ox_red` whose last field, the
    // producer's block function, is not null).
    let fused = source
        .lines()
        .filter(|l| l.starts_with("static const ox_red ") && !l.ends_with(", 0 };"))
        .count();
    assert_eq!(fused, 4, "{source}");
    let values = [
        tensor(&mut rng, DType::F64, &[700, 900], Layout::Contiguous, 0.0),
        tensor(&mut rng, DType::F64, &[1, 900], Layout::Reversed, 0.0),
        tensor(&mut rng, DType::I16, &[6, 900], Layout::Transposed, 0.1),
    ];
    let (native, interp) = both(&[x, r, k], &outputs, &values);
    let tol = Tol {
        ulps: 64,
        scale: 1e-13,
        abs: 0.0,
    };
    assert_close("logsumexp", &native[0], &interp[0], tol);
    assert_close("composite sum", &native[1], &interp[1], tol);
    // The max is exact; the sigmoid inside is within a few ulp.
    assert_close("composite max", &native[2], &interp[2], tol);
    assert_close("integer prod", &native[3], &interp[3], Tol::EXACT);
}

/// Empty reductions (NumPy's identity, or its error for max/min) and zero-size outputs go
/// through the interpreter and behave as it does.
#[test]
fn empty_reductions_match_the_interpreter() {
    use oxtensor_runtime::{Backend, Interpreter};
    let x = input("x", DType::F32, 2);
    let outputs = vec![
        build::sum(&x, Some(&[0]), false).expect("sum"),
        build::prod(&x, None, false).expect("prod"),
    ];
    let g = FunctionGraph::new(vec![x.clone()], outputs).expect("graph");
    let empty = Tensor::zeros(DType::F32, &[0, 3]).expect("empty");
    let n = backend()
        .compile(&g)
        .expect("compile")
        .run(vec![empty.clone()])
        .expect("run");
    let i = Interpreter
        .compile(&g)
        .expect("compile")
        .run(vec![empty.clone()])
        .expect("run");
    for (a, b) in n.iter().zip(&i) {
        assert_close("empty", a, b, Tol::EXACT);
    }
    let g = FunctionGraph::new(
        vec![x.clone()],
        vec![build::max(&x, Some(&[0]), false).expect("max")],
    )
    .expect("graph");
    let n = backend()
        .compile(&g)
        .expect("compile")
        .run(vec![empty.clone()]);
    let i = Interpreter
        .compile(&g)
        .expect("compile")
        .run(vec![empty.clone()]);
    assert_eq!(
        n.map_err(|e| e.to_string()).err(),
        i.map_err(|e| e.to_string()).err()
    );
}

/// One compiled function called again and again with operands whose shapes, strides and
/// broadcasting change between calls (and from two threads at once): each reduction keeps the
/// layout of its last call, which must never be used for operands laid out differently.
#[test]
fn a_kept_layout_serves_only_operands_laid_out_the_same() {
    use oxtensor_runtime::{Backend, Interpreter};
    let x = input("x", DType::F64, 2);
    let r = Var::input(Some("r"), TensorType::new(DType::F64, &[Some(1), None]));
    let prod = build::mul(&build::sqr(&x).expect("sqr"), &r).expect("mul");
    let rows = build::sum(&prod, Some(&[1]), false).expect("rows");
    let cols = build::max(&x, Some(&[0]), false).expect("cols");
    let g = FunctionGraph::new(vec![x, r], vec![rows, cols]).expect("graph");
    let native = backend().compile(&g).expect("native");
    let interp = Interpreter.compile(&g).expect("interp");
    let mut rng = Rng::new(11);
    let layouts = [Layout::Contiguous, Layout::Transposed, Layout::Reversed];
    let cases: Vec<[Tensor; 2]> = [[3, 4], [3, 4], [5, 2], [1, 7], [3, 4], [40, 3]]
        .iter()
        .enumerate()
        .map(|(i, shape)| {
            let layout = layouts[i % layouts.len()];
            [
                tensor(&mut rng, DType::F64, shape, layout, 0.0),
                tensor(
                    &mut rng,
                    DType::F64,
                    &[1, shape[1]],
                    Layout::Contiguous,
                    0.0,
                ),
            ]
        })
        .collect();
    let tol = Tol {
        ulps: 16,
        scale: 1e-14,
        abs: 0.0,
    };
    let check = |values: &[Tensor; 2]| {
        let got = native.run(values.to_vec()).expect("native run");
        let want = interp.run(values.to_vec()).expect("interp run");
        assert_close("row sums", &got[0], &want[0], tol);
        assert_close("column maxima", &got[1], &want[1], Tol::EXACT);
    };
    for _ in 0..3 {
        for values in &cases {
            check(values);
        }
        let (a, b) = cases.split_at(cases.len() / 2);
        std::thread::scope(|s| {
            s.spawn(|| a.iter().for_each(check));
            s.spawn(|| b.iter().rev().for_each(check));
        });
    }
}
