//! `profile(true)`: per-call and per-node times, on every backend.

use oxtensor::{DType, Mode, Tensor, function, matrix, vector};

fn profiled(mode: Mode) {
    let x = matrix("x", DType::F64);
    let w = vector("w", DType::F64);
    let z = oxtensor::ops::dot(&x, &w).unwrap();
    let y = (z.exp() + 1.0).log().sum(None);
    let f = function(&[x, w], std::slice::from_ref(&y))
        .mode(mode)
        .name("loss")
        .profile(true)
        .build()
        .unwrap();
    let before = f.profile().unwrap();
    assert_eq!(before.calls, 0);
    assert!(before.nodes.iter().all(|n| n.time.is_zero()));
    let xv = Tensor::from_slice(&vec![0.01f64; 400 * 300], &[400, 300]).unwrap();
    let wv = Tensor::from_slice(&vec![0.5f64; 300], &[300]).unwrap();
    for _ in 0..3 {
        f.call(&[xv.clone(), wv.clone()]).unwrap();
    }
    // A failing call is not counted.
    assert!(f.call(&[wv.clone(), wv.clone()]).is_err());
    let p = f.profile().unwrap();
    assert_eq!(p.calls, 3);
    assert_eq!(p.nodes.len(), f.graph().toposort().len());
    assert!(
        p.nodes
            .iter()
            .any(|n| n.op == "MatMul" && !n.time.is_zero())
    );
    let in_nodes: std::time::Duration = p.nodes.iter().map(|n| n.time).sum();
    assert!(!in_nodes.is_zero() && in_nodes <= p.call_time);
    let text = p.summary();
    assert!(text.contains("Function profile 'loss'"), "{text}");
    assert!(text.contains("3 calls"), "{text}");
    assert!(text.contains("MatMul(x, w)"), "{text}");
}

#[test]
fn the_interpreter_reports_per_node_times() {
    profiled(Mode::by_name("interp").unwrap());
}

#[test]
fn the_native_backend_reports_per_node_times() {
    profiled(Mode::default());
}

#[test]
fn an_unprofiled_function_has_no_profile() {
    let x = vector("x", DType::F64);
    let f = function(std::slice::from_ref(&x), &[x.exp()])
        .build()
        .unwrap();
    assert!(f.profile().is_none());
}
