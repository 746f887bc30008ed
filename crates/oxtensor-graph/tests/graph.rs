//! Graph construction: interning, reclamation, type inference and its errors, symbolic shapes,
//! frozen graphs and printing.

use oxtensor_data::{DType, Tensor};
use oxtensor_graph::build::{self, Idx};
use oxtensor_graph::{
    FrozenGraph, FunctionGraph, GraphError, Op, PrintOptions, ScalarOp, TensorType, Var,
    debugprint, interned_count, shape_of, verify,
};

fn vec_in(name: &str) -> Var {
    Var::input(Some(name), TensorType::new(DType::F64, &[None]))
}

#[test]
fn equal_expressions_are_the_same_node() {
    let x = vec_in("x");
    let y = vec_in("y");
    let a = build::add(&build::exp(&x).unwrap(), &y).unwrap();
    let b = build::add(&build::exp(&x).unwrap(), &y).unwrap();
    assert_eq!(a, b);
    assert!(std::sync::Arc::ptr_eq(a.node(), b.node()));
    // Different inputs or ops give different nodes.
    assert_ne!(a, build::add(&build::exp(&y).unwrap(), &x).unwrap());
    assert_ne!(build::exp(&x).unwrap(), build::log(&x).unwrap());
    // Constants are interned by value and type.
    assert_eq!(
        Var::scalar_constant(2.0, DType::F64),
        Var::scalar_constant(2.0, DType::F64)
    );
    assert_ne!(
        Var::scalar_constant(2.0, DType::F64),
        Var::scalar_constant(2.0, DType::F32)
    );
    assert_ne!(
        Var::scalar_constant(0.0, DType::F64),
        Var::scalar_constant(-0.0, DType::F64)
    );
}

#[test]
fn inputs_have_their_own_identity() {
    assert_ne!(vec_in("x"), vec_in("x"));
}

#[test]
fn dropping_a_graph_frees_its_nodes() {
    // Use a unique constant so concurrent tests cannot share these nodes.
    let before_marker = Var::scalar_constant(123456.789, DType::F64);
    let x = vec_in("x");
    let mut y = x.clone();
    for _ in 0..50 {
        y = build::add(&build::sin(&y).unwrap(), &before_marker).unwrap();
    }
    let weak = std::sync::Arc::downgrade(y.node());
    drop(y);
    assert!(
        weak.upgrade().is_none(),
        "the last node must be freed with its last handle"
    );
    // Rebuilding gives fresh nodes that are again shared.
    let z1 = build::sin(&x).unwrap();
    let z2 = build::sin(&x).unwrap();
    assert_eq!(z1, z2);
    assert!(interned_count() > 0);
}

#[test]
fn long_chains_drop_without_overflowing_the_stack() {
    let x = vec_in("x");
    let mut y = x.clone();
    for _ in 0..200_000 {
        y = build::neg(&y).unwrap();
    }
    drop(y);
}

#[test]
fn elemwise_types_follow_numpy_and_static_broadcasting() {
    let a = Var::input(Some("a"), TensorType::new(DType::I32, &[None, Some(1)]));
    let b = Var::input(Some("b"), TensorType::new(DType::F32, &[Some(3), Some(4)]));
    let c = build::add(&a, &b).unwrap();
    assert_eq!(c.ty(), &TensorType::new(DType::F64, &[Some(3), Some(4)]));
    let e = build::exp(&Var::input(None, TensorType::new(DType::I16, &[]))).unwrap();
    assert_eq!(e.dtype(), DType::F32);
    let cmp = build::lt(&a, &b).unwrap();
    assert_eq!(cmp.dtype(), DType::Bool);
    // Rank padding: a vector broadcasts against a matrix from the right.
    let v = Var::input(Some("v"), TensorType::new(DType::F32, &[Some(4)]));
    assert_eq!(
        build::mul(&b, &v).unwrap().ty().shape.as_slice(),
        &[Some(3), Some(4)]
    );
}

#[test]
fn static_shape_mismatch_is_a_named_error() {
    let a = Var::input(Some("alpha"), TensorType::new(DType::F64, &[Some(3)]));
    let b = Var::input(Some("beta"), TensorType::new(DType::F64, &[Some(4)]));
    let err = build::add(&a, &b).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, GraphError::Shape { .. }), "{err:?}");
    assert!(msg.contains("'alpha'") && msg.contains("'beta'"), "{msg}");
    assert!(msg.contains("graph.rs"), "names the creation site: {msg}");
}

#[test]
fn dtype_errors_name_the_input() {
    let b = Var::input(Some("flag"), TensorType::new(DType::Bool, &[None]));
    let err = build::sub(&b, &b).unwrap_err();
    assert!(matches!(err, GraphError::DType { .. }));
    assert!(err.to_string().contains("'flag'"), "{err}");
    let f = vec_in("f");
    let err = build::and(&f, &f).unwrap_err();
    assert!(err.to_string().contains("integer or bool"), "{err}");
}

#[test]
fn reductions_axes_and_keepdims() {
    let x = Var::input(
        Some("x"),
        TensorType::new(DType::I8, &[Some(2), None, Some(5)]),
    );
    let s = build::sum(&x, Some(&[0, -1]), false).unwrap();
    assert_eq!(s.ty(), &TensorType::new(DType::I64, &[None]));
    let k = build::sum(&x, Some(&[1]), true).unwrap();
    assert_eq!(k.ty().shape.as_slice(), &[Some(2), Some(1), Some(5)]);
    let err = build::sum(&x, Some(&[3]), false).unwrap_err();
    assert!(err.to_string().contains("axis 3 is out of bounds"), "{err}");
    assert!(
        build::sum(&x, Some(&[1, -2]), false)
            .unwrap_err()
            .to_string()
            .contains("duplicate")
    );
    let m = build::mean(&x, None, false).unwrap();
    assert_eq!(m.dtype(), DType::F64);
    assert_eq!(
        build::argmax(&x, Some(1), false)
            .unwrap()
            .ty()
            .shape
            .as_slice(),
        &[Some(2), Some(5)]
    );
}

#[test]
fn reshape_and_indexing_static_shapes() {
    let x = Var::input(Some("x"), TensorType::new(DType::F64, &[Some(6), Some(4)]));
    assert_eq!(
        build::reshape(&x, &[3, -1]).unwrap().ty().shape.as_slice(),
        &[Some(3), Some(8)]
    );
    assert!(build::reshape(&x, &[5, -1]).is_err());
    assert!(build::reshape(&x, &[-1, -1]).is_err());
    let s = build::subtensor(&x, &[Idx::range(Some(1), None, Some(2)), Idx::int(-1)]).unwrap();
    assert_eq!(s.ty().shape.as_slice(), &[Some(3)]);
    let r = build::subtensor(&x, &[Idx::range(None, None, Some(-1))]).unwrap();
    assert_eq!(r.ty().shape.as_slice(), &[Some(6), Some(4)]);
    let n = build::subtensor(&x, &[Idx::full(), Idx::NewAxis, Idx::int(0)]).unwrap();
    assert_eq!(n.ty().shape.as_slice(), &[Some(6), Some(1)]);
    assert!(
        build::subtensor(&x, &[Idx::int(6)])
            .unwrap_err()
            .to_string()
            .contains("out of bounds")
    );
    let e = build::subtensor(&x, &[Idx::Ellipsis, Idx::int(0)]).unwrap();
    assert_eq!(e.ty().shape.as_slice(), &[Some(6)]);
    let idx = Var::input(Some("i"), TensorType::new(DType::I64, &[Some(7)]));
    let t = build::subtensor(&x, &[Idx::full(), Idx::At(idx)]).unwrap();
    assert_eq!(t.ty().shape.as_slice(), &[Some(6), Some(7)]);
    let set = build::set_subtensor(&s, &Var::scalar_constant(0.0, DType::F64)).unwrap();
    assert_eq!(set.ty(), x.ty());
    assert!(matches!(
        set.owner(),
        Some((Op::IncSubtensor { set: true, .. }, _))
    ));
}

#[test]
fn matmul_shapes() {
    let a = Var::input(
        Some("a"),
        TensorType::new(DType::F32, &[Some(5), Some(1), Some(3), Some(4)]),
    );
    let b = Var::input(
        Some("b"),
        TensorType::new(DType::F64, &[Some(2), Some(4), Some(6)]),
    );
    let c = build::matmul(&a, &b).unwrap();
    assert_eq!(
        c.ty(),
        &TensorType::new(DType::F64, &[Some(5), Some(2), Some(3), Some(6)])
    );
    let v = Var::input(Some("v"), TensorType::new(DType::F64, &[Some(4)]));
    assert_eq!(
        build::matmul(&a, &v).unwrap().ty().shape.as_slice(),
        &[Some(5), Some(1), Some(3)]
    );
    let bad = Var::input(
        Some("bad"),
        TensorType::new(DType::F64, &[Some(5), Some(2)]),
    );
    assert!(
        build::matmul(&a, &bad)
            .unwrap_err()
            .to_string()
            .contains("contracted")
    );
}

#[test]
fn symbolic_shapes_lift_through_ops() {
    let x = Var::input(Some("x"), TensorType::new(DType::F64, &[None, Some(3)]));
    let y = Var::input(Some("y"), TensorType::new(DType::F64, &[None, Some(3)]));
    let z = build::concatenate(&[build::exp(&x).unwrap(), y.clone()], 0).unwrap();
    let dims = shape_of(&z).unwrap();
    assert_eq!(dims[1].const_int(), Some(3));
    // dim 0 = shape_i(x, 0) + shape_i(y, 0): a graph of the inputs' shapes, not of z.
    let printed = debugprint(&dims[..1], PrintOptions::default());
    assert!(
        printed.contains("Shape_i{0}") && printed.contains("Add"),
        "{printed}"
    );
    assert!(!printed.contains("Join"), "{printed}");
}

#[test]
fn frozen_graphs_compare_by_structure() {
    let (a, b) = (vec_in("a"), vec_in("b"));
    let (c, d) = (vec_in("c"), vec_in("d"));
    let f1 = FrozenGraph::freeze(
        &[a.clone(), b.clone()],
        &[build::mul(&build::exp(&a).unwrap(), &b).unwrap()],
    )
    .unwrap();
    let f2 = FrozenGraph::freeze(
        &[c.clone(), d.clone()],
        &[build::mul(&build::exp(&c).unwrap(), &d).unwrap()],
    )
    .unwrap();
    let f3 = FrozenGraph::freeze(
        &[d.clone(), c.clone()],
        &[build::mul(&build::exp(&c).unwrap(), &d).unwrap()],
    )
    .unwrap();
    assert_eq!(f1, f2);
    assert_ne!(f1, f3);
    let inlined = f1.instantiate(&[c.clone(), d.clone()]).unwrap();
    assert_eq!(
        inlined[0],
        build::mul(&build::exp(&c).unwrap(), &d).unwrap()
    );
    let err =
        FrozenGraph::freeze(std::slice::from_ref(&a), &[build::add(&a, &b).unwrap()]).unwrap_err();
    assert!(err.to_string().contains("'b'"), "{err}");
}

#[test]
fn function_graph_requires_all_inputs() {
    let (x, y) = (vec_in("x"), vec_in("y"));
    let z = build::add(&x, &y).unwrap();
    let err = FunctionGraph::new(vec![x.clone()], vec![z.clone()])
        .err()
        .unwrap();
    assert!(err.to_string().contains("'y'"), "{err}");
    let fg = FunctionGraph::new(vec![x.clone(), y.clone()], vec![z.clone()]).unwrap();
    assert_eq!(fg.toposort().len(), 1);
    assert_eq!(fg.clients(&x), &[(0, 0)]);
    verify(&[z]).unwrap();
}

#[test]
fn debugprint_matches_pytensor_layout() {
    let x = vec_in("x");
    let e = build::exp(&x).unwrap();
    let y = build::sum(&build::mul(&e, &e).unwrap(), None, false).unwrap();
    let text = debugprint(&[y], PrintOptions::default());
    let expected = "\
Sum{axes=(0)} [id A]
 └─ Mul [id B]
    ├─ Exp [id C]
    │  └─ x [id D]
    └─ Exp [id C]
";
    assert_eq!(text, expected);
    let typed = debugprint(
        &[x],
        PrintOptions {
            print_type: true,
            depth: None,
        },
    );
    assert_eq!(typed, "x [id A] <Vector(float64, shape=(?,))>\n");
}

#[test]
fn constants_render_and_cast_weakly() {
    let x = Var::input(Some("x"), TensorType::new(DType::F32, &[None]));
    let y = build::with_scalar(ScalarOp::Mul, &x, 2.0, false).unwrap();
    assert_eq!(y.dtype(), DType::F32, "a float literal adopts float32");
    let i = Var::input(Some("i"), TensorType::new(DType::I16, &[None]));
    assert_eq!(
        build::with_scalar(ScalarOp::Add, &i, 3, false)
            .unwrap()
            .dtype(),
        DType::I16
    );
    assert_eq!(
        build::with_scalar(ScalarOp::Add, &i, 0.5, false)
            .unwrap()
            .dtype(),
        DType::F64
    );
    let c = Var::constant(Tensor::from_slice(&[1.5f64, 2.0], &[2]).unwrap());
    assert_eq!(
        debugprint(&[c], PrintOptions::default()),
        "[1.5 2.0] [id A]\n"
    );
}
