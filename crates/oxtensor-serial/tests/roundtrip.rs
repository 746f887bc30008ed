//! Round trips through the format: random graphs, every inner-graph op (an einsum planned
//! late among them), linear algebra,
//! random draws, the extra tensor ops, fused matrix products and run-time checks encode, decode to the same structure (re-encoding gives the same text) and
//! compile to functions giving the same numbers; corrupt, hostile and newer documents are
//! refused with an error naming the field.

use oxtensor::random::{normal, shared_rng};
use oxtensor::{
    DType, Mode, OnUnusedInput, OpFromGraph, ScanSpec, Tensor, TensorType, Var, function, ifelse,
    linalg, ops, scan, shared, vector,
};
use oxtensor_serial::{Bundle, SerialError, decode, encode};
use proptest::prelude::*;
use random_graphs::{expr, pseudo_random};
use std::sync::Arc;

#[path = "../../oxtensor/tests/random_graphs/mod.rs"]
mod random_graphs;

fn f64s(v: &[f64]) -> Tensor {
    Tensor::from_slice(v, &[v.len()]).expect("tensor")
}

fn bundle(inputs: &[Var], outputs: &[Var]) -> Bundle {
    Bundle {
        inputs: inputs.to_vec(),
        outputs: outputs.to_vec(),
        ..Bundle::default()
    }
}

/// Encodes, decodes and checks that re-encoding the decoded bundle gives the same text.
fn round_trip(b: &Bundle) -> Bundle {
    let text = encode(b);
    let back = decode(&text).expect("decode");
    assert_eq!(encode(&back), text, "re-encoding changes the document");
    back
}

/// The outputs of `b` compiled in `mode` on `args` (updates applied).
fn run(b: &Bundle, mode: &Mode, args: &[Tensor]) -> Vec<Tensor> {
    function(&b.inputs, &b.outputs)
        .updates(&b.updates)
        .givens(&b.givens)
        .on_unused_input(OnUnusedInput::Ignore)
        .mode(mode.clone())
        .build()
        .expect("compile")
        .call(args)
        .expect("call")
}

fn assert_same(a: &[Tensor], b: &[Tensor]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!(x.bits_eq(y), "{x:?} != {y:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, rng_seed: proptest::test_runner::RngSeed::Fixed(16), ..ProptestConfig::default() })]

    #[test]
    fn random_graphs_round_trip_in_structure_and_values(codes in proptest::collection::vec(any::<u8>(), 1..12), seed in 0u64..1000) {
        let (x, y) = (vector("x", DType::F64), vector("y", DType::F64));
        let e = expr(&x, &y, &codes);
        let outs = [e.clone(), e.sum(None), ops::cast(&e, DType::F32).expect("cast")];
        let b = bundle(&[x, y], &outs);
        let back = round_trip(&b);
        let args = [f64s(&pseudo_random(7, seed)), f64s(&pseudo_random(7, seed + 1))];
        assert_same(&run(&b, &Mode::FAST_COMPILE, &args), &run(&back, &Mode::FAST_COMPILE, &args));

        // The rewritten graph (Composites, fused reductions) round-trips too, and the decoded
        // copy, compiled without further rewrites, computes what the original function does.
        let f = function(&b.inputs, &b.outputs)
            .on_unused_input(OnUnusedInput::Ignore)
            .mode(Mode::FAST_RUN)
            .build()
            .expect("compile");
        let g = f.graph();
        let rewritten = round_trip(&bundle(g.inputs(), g.outputs()));
        let plain = Mode::new("interp", "None").expect("mode");
        let want = f.call(&args).expect("call");
        let got = run(&rewritten, &plain, &args);
        for (w, g) in want.iter().zip(&got) {
            let (w, g) = (w.to_vec_as::<f64>(), g.to_vec_as::<f64>());
            for (a, b) in w.iter().zip(&g) {
                prop_assert!((a - b).abs() <= 1e-12 * (1.0 + a.abs()) || (a.is_nan() && b.is_nan()), "{a} vs {b}");
            }
        }
    }
}

#[test]
fn a_matrix_product_with_a_fused_epilogue_round_trips() {
    let (x, w, b) = (
        oxtensor::matrix("x", DType::F64),
        oxtensor::matrix("w", DType::F64),
        vector("b", DType::F64),
    );
    let zero = ops::weak_constant(0.0.into(), DType::F64);
    let h = ops::maximum(&(&x.matmul(&w) + &b), &zero).expect("relu");
    let f = function(&[x, w, b], &[h])
        .mode(Mode::FAST_RUN)
        .build()
        .expect("compile");
    let g = f.graph();
    let fused = |outs: &[Var]| {
        oxtensor::oxtensor_graph::toposort(outs).iter().any(|n| {
            matches!(
                n.op(),
                Some(oxtensor::oxtensor_graph::Op::FusedMatMul { .. })
            )
        })
    };
    assert!(fused(g.outputs()));
    let back = round_trip(&bundle(g.inputs(), g.outputs()));
    assert!(fused(&back.outputs));
    let args = [
        Tensor::from_slice(&pseudo_random(12, 1), &[3, 4]).expect("x"),
        Tensor::from_slice(&pseudo_random(20, 2), &[4, 5]).expect("w"),
        f64s(&pseudo_random(5, 3)),
    ];
    let plain = Mode::new("interp", "None").expect("mode");
    assert_same(&f.call(&args).expect("call"), &run(&back, &plain, &args));
}

#[test]
fn shared_values_updates_and_names_survive() {
    let w = shared(f64s(&[1.0, 2.0, 3.0]), Some("w"));
    let x = vector("x", DType::F64);
    let y = &w * &x;
    y.set_name("y");
    let b = Bundle {
        inputs: vec![x.clone()],
        outputs: vec![y.clone()],
        updates: vec![(w.clone(), &w + 1.0)],
        meta: serde_json::json!({"mode": "FAST_RUN"}),
        ..Bundle::default()
    };
    let back = round_trip(&b);
    assert_eq!(back.meta["mode"], "FAST_RUN");
    assert_eq!(back.outputs[0].name().as_deref(), Some("y"));
    assert_eq!(back.inputs[0].name().as_deref(), Some("x"));
    let w2 = &back.updates[0].0;
    assert_ne!(w2, &w, "a decoded shared variable is a new variable");
    assert_eq!(w2.name().as_deref(), Some("w"));
    let args = [f64s(&[1.0, 1.0, 2.0])];
    let mode = Mode::FAST_COMPILE;
    assert_same(&run(&b, &mode, &args), &run(&back, &mode, &args));
    // Both updated their own variable once.
    assert_same(
        &[oxtensor::get_value(&w).expect("w")],
        &[oxtensor::get_value(w2).expect("w2")],
    );
}

#[test]
fn inner_graph_ops_round_trip() {
    let (a, b) = (vector("a", DType::F64), vector("b", DType::F64));
    let s = shared(f64s(&[0.5, -0.5, 2.0]), Some("s"));
    let body = (&a * &b).exp() + &s;
    let op =
        Arc::new(OpFromGraph::new(&[a.clone(), b.clone()], &[body], Some("bump")).expect("op"));
    let (u, v) = (vector("u", DType::F64), vector("v", DType::F64));
    let called = op.call(&[u.clone(), v.clone()]).expect("call").remove(0);
    let c = oxtensor::scalar("c", DType::F64);
    let cond = ops::elemwise(
        oxtensor::oxtensor_graph::ScalarOp::Gt,
        &[c.clone(), Var::scalar_constant(0.0, DType::F64)],
    )
    .expect("gt");
    let branched = ifelse(&cond, &[&called * 2.0], &[u.sin()])
        .expect("ifelse")
        .remove(0);

    // An AR(1) loop whose step reads a non-sequence.
    let (xt, hp) = (
        Var::input(None, TensorType::scalar(DType::F64)),
        Var::input(None, TensorType::scalar(DType::F64)),
    );
    let next = &(&c * &hp) + &xt;
    let h0 = ops::expand_dims(&Var::scalar_constant(0.25, DType::F64), 0).expect("h0");
    let looped = scan(ScanSpec {
        tap_inputs: &[xt, hp],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1]],
        other_inputs: &[],
        outputs: &[next],
        n_mapped: 0,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(&u),
        initial: &[h0],
        others: &[],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("ar1"),
    })
    .expect("scan")
    .remove(0);

    let bnd = bundle(&[u, v, c], &[branched, looped]);
    let back = round_trip(&bnd);
    let args = [
        f64s(&[0.1, 0.2, 0.3]),
        f64s(&[1.0, -1.0, 0.5]),
        Tensor::scalar(0.7f64),
    ];
    for mode in [Mode::FAST_COMPILE, Mode::FAST_RUN] {
        assert_same(&run(&bnd, &mode, &args), &run(&back, &mode, &args));
    }
}

/// An einsum built on operands of unknown shape (one `OpFromGraph` holding its subscripts,
/// which the compiler re-plans once shapes are static) keeps its subscripts.
#[test]
fn an_unplanned_einsum_keeps_its_subscripts() {
    let spec = "ij,jk,kl->il";
    let xs: Vec<Var> = (0..3)
        .map(|k| Var::input(Some(&format!("x{k}")), TensorType::of_rank(DType::F64, 2)))
        .collect();
    let e = ops::einsum(spec, &xs).expect("einsum");
    let bnd = bundle(&xs, &[e]);
    let back = round_trip(&bnd);
    let Some((oxtensor::oxtensor_graph::Op::OpFromGraph(o), _)) = back.outputs[0].owner() else {
        panic!("not one einsum node");
    };
    assert_eq!(o.einsum.as_deref(), Some(spec));
    let m = |v: &[f64]| Tensor::from_slice(v, &[2, 2]).expect("tensor");
    let args = [
        m(&[1.0, 2.0, 3.0, 4.0]),
        m(&[0.5, -1.0, 2.0, 0.0]),
        m(&[1.0, 1.0, -2.0, 3.0]),
    ];
    for mode in [Mode::FAST_COMPILE, Mode::FAST_RUN] {
        assert_same(&run(&bnd, &mode, &args), &run(&back, &mode, &args));
    }
}

#[test]
fn linear_algebra_and_random_draws_round_trip() {
    let m = oxtensor::matrix("m", DType::F64);
    let spd = &ops::matmul(&m, &m.t()).expect("mm")
        + &ops::eye(
            &Var::int_constant(3),
            &Var::int_constant(3),
            &Var::int_constant(0),
            DType::F64,
        )
        .expect("eye");
    let l = linalg::cholesky(&spd, true, false).expect("chol");
    let x = linalg::solve(
        &spd,
        &m,
        oxtensor::AssumeA::PositiveDefinite,
        true,
        false,
        None,
    )
    .expect("solve");
    let rng = shared_rng(42, Some("rng"));
    let (next, draw) = normal(
        &rng,
        &Var::scalar_constant(1.0, DType::F64),
        &Var::scalar_constant(2.0, DType::F64),
        Some(&oxtensor::random::size_vector(Some(&[Var::int_constant(4)])).expect("size")),
    )
    .expect("normal");
    let b = Bundle {
        inputs: vec![m],
        outputs: vec![l, x, draw],
        updates: vec![(rng.clone(), next.clone())],
        generators: vec![(rng, Some(next))],
        ..Bundle::default()
    };
    let back = round_trip(&b);
    assert_eq!(back.generators.len(), 1);
    let args =
        [Tensor::from_slice(&[2.0, 0.5, 0.0, 0.1, 1.5, 0.3, 0.0, 0.2, 1.0], &[3, 3]).expect("m")];
    let mode = Mode::FAST_COMPILE;
    // Same values, and the generator state advanced identically (the second call draws anew).
    for _ in 0..2 {
        assert_same(&run(&b, &mode, &args), &run(&back, &mode, &args));
    }
}

#[test]
fn extra_ops_round_trip() {
    use oxtensor::ops::extra;
    let x = vector("x", DType::F64);
    let n = vector("n", DType::I64);
    let mut outputs = vec![
        extra::cumsum(&x, None).expect("cumsum"),
        extra::cumprod(&x, Some(0)).expect("cumprod"),
        extra::sort(&x, None).expect("sort"),
        extra::argsort(&x, Some(-1)).expect("argsort"),
        extra::searchsorted(&x, &x, true, None).expect("searchsorted"),
        extra::repeat(&x, &Var::int_constant(2), None).expect("repeat"),
        extra::bincount(&n, Some(&x), 5).expect("bincount"),
    ];
    outputs.extend(extra::unique(&x, true, true, true).expect("unique"));
    let b = bundle(&[x, n], &outputs);
    let back = round_trip(&b);
    let args = [
        f64s(&[3.0, 1.0, 2.0, 1.0]),
        Tensor::from_slice(&[0i64, 3, 3, 1], &[4]).expect("n"),
    ];
    for mode in [Mode::FAST_COMPILE, Mode::FAST_RUN] {
        assert_same(&run(&b, &mode, &args), &run(&back, &mode, &args));
    }
}

#[test]
fn checks_round_trip_with_their_kind_and_message() {
    use oxtensor::ops::check::check_and_raise;
    use oxtensor::oxtensor_graph::Check;
    let (x, c) = (vector("x", DType::F64), oxtensor::scalar("c", DType::Bool));
    let kind = "pymc.logprob.utils.ParameterValueError";
    let out = check_and_raise(
        &x,
        std::slice::from_ref(&c),
        Check::new(kind, "sigma > 0, \"quoted\"\n"),
    )
    .expect("check");
    let b = bundle(&[x, c], std::slice::from_ref(&out));
    let back = round_trip(&b);
    assert_eq!(
        back.outputs[0].owner().map(|(op, _)| op.clone()),
        out.owner().map(|(op, _)| op.clone())
    );
    let args = [f64s(&[1.0, 2.0]), Tensor::scalar(true)];
    assert_same(
        &run(&b, &Mode::FAST_RUN, &args),
        &run(&back, &Mode::FAST_RUN, &args),
    );
}

fn err(text: &str) -> String {
    match decode(text) {
        Ok(_) => panic!("decoded {text}"),
        Err(e) => e.to_string(),
    }
}

fn sample() -> String {
    let x = vector("x", DType::F64);
    encode(&bundle(std::slice::from_ref(&x), &[x.exp() + 1.0]))
}

#[test]
fn corrupt_hostile_and_newer_documents_are_refused() {
    let good = sample();
    assert!(err(&good[..good.len() / 2]).contains("invalid JSON"));
    assert!(err("[1, 2]").contains("not an oxtensor graph"));
    assert!(err(r#"{"format": "other"}"#).contains("not an oxtensor graph"));
    let newer = good.replace(r#""version":1"#, r#""version":7"#);
    let e = decode(&newer).err().expect("newer");
    assert!(
        matches!(
            e,
            SerialError::NewerVersion {
                found: 7,
                supported: 1
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("upgrade"));
    assert!(
        err(&good.replace(r#""scalar":"Exp""#, r#""scalar":"Frob""#))
            .contains("unknown scalar op \"Frob\"")
    );
    assert!(
        err(&good.replace(r#""op":"Elemwise""#, r#""op":"Mystery""#))
            .contains("unknown op \"Mystery\"")
    );
    assert!(err(&good.replace("float64", "float128")).contains("unknown dtype"));
    // The constant 1.0 is 8 bytes: a shortened payload is refused.
    let v: serde_json::Value = serde_json::from_str(&good).expect("json");
    let nodes = v["nodes"].as_array().expect("nodes");
    let k = nodes
        .iter()
        .position(|n| n["kind"] == "constant")
        .expect("constant");
    let data = nodes[k]["value"]["data"]
        .as_str()
        .expect("data")
        .to_string();
    assert!(err(&good.replace(&data, "AAAA")).contains("bytes for a float64 tensor"));
    assert!(err(&good.replace(&data, "@@@@")).contains("corrupt base64"));
    // Wrong arity: Exp given its input twice.
    let mut bad = v.clone();
    let exp = nodes
        .iter()
        .position(|n| n["op"]["scalar"] == "Exp")
        .expect("exp");
    let input = bad["nodes"][exp]["inputs"][0].clone();
    bad["nodes"][exp]["inputs"] = serde_json::json!([input.clone(), input]);
    assert!(err(&bad.to_string()).contains(&format!("nodes[{exp}]")));
    // A reference to a later node (a cycle).
    let mut cyc = v.clone();
    cyc["nodes"][exp]["inputs"][0] = serde_json::json!([99, 0]);
    assert!(err(&cyc.to_string()).contains("not defined before it is used"));
    // A declared output type that the op does not compute.
    let mut lie = v.clone();
    lie["nodes"][exp]["types"][0]["dtype"] = serde_json::json!("float32");
    assert!(err(&lie.to_string()).contains("declared"));
}
