//! Helpers shared by the staged-loop tests (`staged_loops.rs`, `staged_stages.rs`).

use super::backend;
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FunctionGraph, TensorType, Var};
use oxtensor_runtime::{Backend, Executable, Interpreter};

use super::data::Rng;

/// A float64 graph input of the given static extents.
pub fn typed(shape: &[Option<usize>]) -> Var {
    Var::input(None, TensorType::new(DType::F64, shape))
}

/// `shape`-shaped float64 values uniform in `[-scale, scale]`.
pub fn values(rng: &mut Rng, shape: &[usize], scale: f64) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n).map(|_| rng.uniform(-scale, scale)).collect();
    Tensor::from_slice(&v, shape).expect("tensor")
}

/// Runs `g` natively on `vals`, checking that every loop ran whole in C (none was handed to
/// the interpreter's loop).
pub fn run_in_c(g: &FunctionGraph, vals: &[Tensor]) -> Vec<Tensor> {
    let (exec, _) = backend().compile_graph(g).expect("native compile");
    let out = exec.run(vals.to_vec()).expect("native run");
    assert_eq!(
        exec.interpreted_loops(),
        0,
        "a loop fell back to the interpreter"
    );
    out
}

/// How many loops of `source` are staged C loops (hold a matrix product).
pub fn staged_loops(source: &str) -> usize {
    source
        .split("OX_EXPORT int32_t ox_s")
        .skip(1)
        .filter(|f| f.contains("ox_mm_double(") || f.contains("ox_mm_float("))
        .count()
}

/// Graph inputs of the ranks of `vals`.
pub fn inputs_for(vals: &[Tensor]) -> Vec<Var> {
    vals.iter()
        .map(|v| Var::input(None, TensorType::of_rank(DType::F64, v.shape().len())))
        .collect()
}

/// Runs `g` on `vals` in both backends: both must fail with the same message, which names
/// `step`, the native backend's after handing its one loop to the interpreter's.
pub fn assert_reported_by_the_interpreter(g: &FunctionGraph, vals: Vec<Tensor>, step: &str) {
    let (native, _) = backend().compile_graph(g).expect("native");
    let want = Interpreter
        .compile(g)
        .expect("interp")
        .run(vals.clone())
        .expect_err("interp fails")
        .to_string();
    let got = native.run(vals).expect_err("native fails").to_string();
    assert_eq!(native.interpreted_loops(), 1);
    assert_eq!(got, want);
    assert!(got.contains(step), "{got}");
}

/// The sum of the squares of every element of `outputs`.
pub fn square_sum(outputs: &[Var]) -> Var {
    outputs
        .iter()
        .map(|o| (o * o).sum(None))
        .reduce(|a, b| &a + &b)
        .expect("cost")
}

/// How many loops of `g` there are, and how many of them its generated C runs whole as
/// staged loops (`ox_sN` functions taking scratch); also checks that running `g` on `vals`
/// hands no loop to the interpreter.
pub fn assert_all_staged(what: &str, g: &FunctionGraph, vals: &[Tensor]) -> Vec<Tensor> {
    let scans = g
        .toposort()
        .iter()
        .filter(|n| matches!(n.op(), Some(oxtensor_graph::Op::Scan(_))))
        .count();
    let source = backend().generate(g);
    let staged = source
        .split("OX_EXPORT int32_t ox_s")
        .skip(1)
        .filter(|f| {
            f.split('{')
                .next()
                .is_some_and(|sig| sig.contains("void *scr"))
        })
        .count();
    assert!(scans > 0, "{what}: no loop");
    assert_eq!(staged, scans, "{what}: not every loop is a staged C loop");
    run_in_c(g, vals)
}

/// Checks that `g` runs every loop as a staged C loop on `vals` and matches `interp` (the same
/// graph compiled for the interpreter) within `tol`, output by output.
pub fn assert_staged_like(
    what: &str,
    g: &FunctionGraph,
    interp: &oxtensor::Function,
    vals: &[Tensor],
    tol: oxtensor_testkit::Tol,
) {
    let in_c = assert_all_staged(what, g, vals);
    let want = interp.call(vals).expect("interp");
    for (k, (c, i)) in in_c.iter().zip(&want).enumerate() {
        oxtensor_testkit::assert_close(&format!("{what}, output {k}"), c, i, tol);
    }
}
