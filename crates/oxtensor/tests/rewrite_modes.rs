//! `Mode`: PyTensor's constructors and predefined modes, rewrite selection by tags, and the
//! rewritten graph compiled by the mode's backend.

use oxtensor::oxtensor_graph::{FunctionGraph, Op, ScalarOp, toposort};
use oxtensor::{DType, Error, Mode, Tensor, Var, function, vector};

fn has_op(graph: &FunctionGraph, s: ScalarOp) -> bool {
    graph
        .toposort()
        .iter()
        .any(|n| n.op() == Some(&Op::Elemwise(s)))
}

/// Rewrites with `mode`, compiles with its backend, runs on `args`.
fn run(mode: &Mode, inputs: &[Var], out: &Var, args: &[Tensor]) -> (FunctionGraph, Vec<f64>) {
    let graph = FunctionGraph::new(inputs.to_vec(), vec![out.clone()]).unwrap();
    let (graph, _) = mode.rewrite(&graph).unwrap();
    let exec = mode.backend().compile(&graph).unwrap();
    let values = exec.run(args.to_vec()).unwrap()[0].to_vec_as::<f64>();
    (graph, values)
}

fn t(v: &[f64]) -> Tensor {
    Tensor::from_slice(v, &[v.len()]).unwrap()
}

#[test]
fn predefined_modes_and_names() {
    // This machine has a C compiler, so FAST_RUN (the default) compiles natively.
    assert_eq!(Mode::default().linker(), "native");
    assert_eq!(Mode::FAST_COMPILE.linker(), "interp");
    assert_eq!(Mode::by_name("interp").map(|m| m.linker()), Some("interp"));
    assert_eq!(
        Mode::new("c", "fast_run").map(|m| m.linker()).ok(),
        Some("native")
    );
    for name in ["FAST_RUN", "FAST_COMPILE", "interp", "py", "native"] {
        assert!(Mode::by_name(name).is_some(), "{name}");
    }
    assert!(Mode::by_name("DEBUG_MODE").is_none());
    assert!(Mode::new("cvm", "fast_run").is_ok());
    assert!(Mode::new("py", "None").is_ok());
    assert!(matches!(
        Mode::new("jax", "fast_run"),
        Err(Error::Option(_))
    ));
    assert!(matches!(Mode::new("py", "o9"), Err(Error::Option(_))));
    assert!(format!("{:?}", Mode::FAST_COMPILE).contains("fast_compile"));
}

#[test]
fn fast_run_stabilizes_and_fast_compile_does_not() {
    let x = vector("x", DType::F64);
    let y = (1.0 + &x).log();
    let (g, v) = run(
        &Mode::FAST_RUN,
        std::slice::from_ref(&x),
        &y,
        &[t(&[1e-300])],
    );
    assert!(has_op(&g, ScalarOp::Log1p));
    assert_eq!(v, [1e-300]);
    let (g, v) = run(
        &Mode::FAST_COMPILE,
        std::slice::from_ref(&x),
        &y,
        &[t(&[1e-300])],
    );
    assert!(!has_op(&g, ScalarOp::Log1p));
    assert_eq!(v, [0.0]);
    let (g, _) = run(
        &Mode::new("py", "None").unwrap(),
        std::slice::from_ref(&x),
        &y,
        &[t(&[1.0])],
    );
    assert!(!has_op(&g, ScalarOp::Log1p));
}

#[test]
fn excluding_including_and_requiring_tags() {
    let x = vector("x", DType::F64);
    let y = (1.0 + &x).log();
    let no_stab = Mode::FAST_RUN.excluding(&["stabilize"]);
    let (g, _) = run(&no_stab, std::slice::from_ref(&x), &y, &[t(&[1.0])]);
    assert!(
        !has_op(&g, ScalarOp::Log1p),
        "excluding(stabilize) keeps log(1 + x)"
    );
    let back = no_stab.including(&["stabilize"]);
    let (g, _) = run(&back, std::slice::from_ref(&x), &y, &[t(&[1.0])]);
    assert!(has_op(&g, ScalarOp::Log1p));
    let only_useless = Mode::FAST_RUN.requiring(&["useless"]);
    let (g, _) = run(
        &only_useless,
        std::slice::from_ref(&x),
        &(&y * 1.0),
        &[t(&[1.0])],
    );
    assert!(!has_op(&g, ScalarOp::Log1p) && !has_op(&g, ScalarOp::Mul));
    // x * 0 keeps its NaN for infinite x when nan_unsafe rules are excluded.
    let z = &x * 0.0;
    let (_, v) = run(
        &Mode::FAST_RUN,
        std::slice::from_ref(&x),
        &z,
        &[t(&[f64::INFINITY])],
    );
    assert_eq!(v, [0.0]);
    let strict = Mode::FAST_RUN.excluding(&["nan_unsafe"]);
    let (_, v) = run(
        &strict,
        std::slice::from_ref(&x),
        &z,
        &[t(&[f64::INFINITY])],
    );
    assert!(v[0].is_nan());
}

#[test]
fn rewriting_reports_hits_and_keeps_the_inputs() {
    let x = vector("x", DType::F64);
    let unused = vector("unused", DType::F64);
    let graph = FunctionGraph::new(vec![x.clone(), unused], vec![(&x + 0.0).exp().log()]).unwrap();
    let (rewritten, report) = Mode::FAST_RUN.rewrite(&graph).unwrap();
    assert_eq!(rewritten.inputs(), graph.inputs());
    assert_eq!(rewritten.outputs(), std::slice::from_ref(&x));
    assert_eq!(report.hits("add_zero") + report.hits("log_exp"), 2);
    assert!(toposort(rewritten.outputs()).is_empty());
}

#[test]
fn functions_compiled_in_any_mode_agree() {
    let x = vector("x", DType::F64);
    let y = ((&x * 2.0 - 1.0).exp() + 1.0).log() / 3.0;
    let arg = t(&[-2.0, -0.5, 0.0, 0.25, 1.5]);
    let mut results = Vec::new();
    for mode in [
        Mode::FAST_RUN,
        Mode::FAST_COMPILE,
        Mode::new("py", "None").unwrap(),
    ] {
        let f = function(std::slice::from_ref(&x), std::slice::from_ref(&y))
            .mode(mode)
            .build()
            .unwrap();
        results.push(f.call(std::slice::from_ref(&arg)).unwrap()[0].to_vec_as::<f64>());
        let (_, v) = run(
            &Mode::FAST_RUN,
            std::slice::from_ref(&x),
            &y,
            std::slice::from_ref(&arg),
        );
        results.push(v);
    }
    for r in &results[1..] {
        for (a, b) in r.iter().zip(&results[0]) {
            assert!(
                (a - b).abs() <= 1e-14 * (1.0 + b.abs()),
                "{r:?} vs {:?}",
                results[0]
            );
        }
    }
}

#[test]
fn native_targets_compile_for_lower_cpus_and_agree_with_the_interpreter() {
    use oxtensor_testkit::{Tol, assert_close_slices};
    let (x, y) = (vector("x", DType::F64), vector("y", DType::F64));
    let out = (-(&x * &x)).exp() * y.sin() + (&x * &y).abs().log1p();
    let n = 2000;
    let xs: Vec<f64> = (0..n).map(|i| 3.0 * (0.37 * i as f64).sin()).collect();
    let ys: Vec<f64> = (0..n).map(|i| 5.0 * (0.11 * i as f64).cos()).collect();
    let args = [t(&xs), t(&ys)];
    let inputs = [x.clone(), y.clone()];
    let (_, want) = run(&Mode::by_name("interp").unwrap(), &inputs, &out, &args);
    for target in ["x86-64-v2", "x86-64-v3", "native"] {
        let mode = Mode::new(&format!("native:{target}"), "fast_run").unwrap();
        assert_eq!(mode.linker(), "native", "{target}");
        let (_, got) = run(&mode, &inputs, &out, &args);
        // Three functions of the math libraries, each within 8 ulp, then added: the sum
        // may cancel, so the comparison also admits 1e-14 of the largest term.
        assert_close_slices(
            target,
            &got,
            &want,
            Tol::MATH_LIBRARIES.or_scaled(1e-14),
            false,
        );
    }
    for bad in ["native:", "native:x86-64 -O0", "native:$(true)"] {
        match Mode::new(bad, "fast_run") {
            Err(Error::Option(m)) => assert!(m.contains("-march name"), "{bad}: {m}"),
            other => panic!(
                "{bad}: expected an option error, got {:?}",
                other.map(|_| ())
            ),
        }
    }
    // A name the compiler does not know fails when the function is compiled, naming it.
    let mode = Mode::new("native:no-such-cpu", "fast_run").unwrap();
    let graph = FunctionGraph::new(inputs.to_vec(), vec![out.clone()]).unwrap();
    let (graph, _) = mode.rewrite(&graph).unwrap();
    let err = mode.backend().compile(&graph).err().map(|e| e.to_string());
    assert!(
        err.as_deref().is_some_and(|e| e.contains("no-such-cpu")),
        "{err:?}"
    );
}
