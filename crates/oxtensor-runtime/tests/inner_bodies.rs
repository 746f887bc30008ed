//! Inner graphs are compiled once per distinct body and backend: every call site of one
//! `OpFromGraph` in a function shares one executable, and so do functions compiled while it
//! is alive (the `BodyCache`).

use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FunctionGraph, OpFromGraph, TensorType, Var};
use oxtensor_runtime::{Backend, BodyCache, Executable, InnerBodies, Interpreter, RuntimeError};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The interpreter, counting the graphs it compiles.
#[derive(Default)]
struct Counting(AtomicUsize);

impl Backend for Counting {
    fn name(&self) -> &'static str {
        "counting"
    }

    fn compile(&self, graph: &FunctionGraph) -> Result<Arc<dyn Executable>, RuntimeError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Interpreter.compile(graph)
    }
}

fn vector(name: &str) -> Var {
    Var::input(Some(name), TensorType::of_rank(DType::F64, 1))
}

/// `x·y + x` as an op, built afresh each time (equal bodies are one op).
fn op() -> Arc<OpFromGraph> {
    let (x, y) = (vector("x"), vector("y"));
    let xy = Var::apply1(
        oxtensor_graph::Op::Elemwise(oxtensor_graph::ScalarOp::Mul),
        &[x.clone(), y.clone()],
    )
    .expect("mul");
    let out = Var::apply1(
        oxtensor_graph::Op::Elemwise(oxtensor_graph::ScalarOp::Add),
        &[xy, x.clone()],
    )
    .expect("add");
    Arc::new(OpFromGraph::new(&[x, y], &[out], None).expect("op"))
}

/// A function calling the op three times at two call sites' worth of distinct arguments.
fn graph() -> FunctionGraph {
    let (u, v) = (vector("u"), vector("v"));
    let first = op().call(&[u.clone(), v.clone()]).expect("call").remove(0);
    let second = op()
        .call(&[first.clone(), v.clone()])
        .expect("call")
        .remove(0);
    let third = op().call(&[v.clone(), second]).expect("call").remove(0);
    FunctionGraph::new(vec![u, v], vec![third]).expect("graph")
}

#[test]
fn every_call_site_shares_one_compiled_body() {
    let backend = Counting::default();
    let cache = BodyCache::default();
    let g = graph();
    let bodies = InnerBodies::compile(&backend, &cache, &g).expect("compile");
    assert_eq!(
        backend.0.load(Ordering::SeqCst),
        1,
        "three call sites, one body"
    );
    // A second function while the first is alive reuses it; once it is gone, it compiles again.
    let again = InnerBodies::compile(&backend, &cache, &graph()).expect("compile");
    assert_eq!(backend.0.load(Ordering::SeqCst), 1);
    drop((bodies, again));
    let _third = InnerBodies::compile(&backend, &cache, &g).expect("compile");
    assert_eq!(backend.0.load(Ordering::SeqCst), 2);
}

#[test]
fn the_shared_body_computes_each_call_site() {
    let exec = Interpreter.compile(&graph()).expect("compile");
    let u = Tensor::from_slice(&[1.0, 2.0], &[2]).expect("u");
    let v = Tensor::from_slice(&[3.0, -1.0], &[2]).expect("v");
    let out = exec.run(vec![u, v]).expect("run");
    // first = u·v + u; second = first·v + first; third = v·second + v.
    let want: Vec<f64> = [(1.0, 3.0), (2.0, -1.0)]
        .iter()
        .map(|&(u, v): &(f64, f64)| {
            let first = u * v + u;
            let second = first * v + first;
            v * second + v
        })
        .collect();
    assert_eq!(out[0].to_vec::<f64>().expect("f64"), want);
}
