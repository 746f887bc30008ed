//! `function()` and `Function`: argument checking, names, updates, givens, unused inputs.

use oxtensor::{
    DType, Error, OnUnusedInput, Tensor, Var, function, get_value, matrix, ops, scalar, set_value,
    shared, tensor, vector,
};

fn t(v: &[f64]) -> Tensor {
    Tensor::from_slice(v, &[v.len()]).expect("tensor")
}

fn values(t: &Tensor) -> Vec<f64> {
    t.to_vec_as::<f64>()
}

#[test]
fn computes_and_accepts_arguments_by_name() {
    let x = vector("x", DType::F64);
    let y = vector("y", DType::F64);
    let f = function(&[x.clone(), y.clone()], &[&x * &y + 1.0])
        .build()
        .unwrap();
    assert_eq!(
        values(&f.call(&[t(&[1., 2.]), t(&[3., 4.])]).unwrap()[0]),
        vec![4., 9.]
    );
    let named = f
        .call_named(&[t(&[1., 2.])], &[("y", t(&[5., 6.]))])
        .unwrap();
    assert_eq!(values(&named[0]), vec![6., 13.]);
    let err = f
        .call_named(&[t(&[1., 2.])], &[("z", t(&[5., 6.]))])
        .unwrap_err();
    assert!(
        matches!(err, Error::Keyword(_)) && err.to_string().contains("'z'"),
        "{err}"
    );
    let err = f.call_named(&[t(&[1., 2.])], &[]).unwrap_err();
    assert!(
        err.to_string().contains("missing") && err.to_string().contains("'y'"),
        "{err}"
    );
    let err = f
        .call_named(&[t(&[1., 2.]), t(&[1., 2.])], &[("y", t(&[5., 6.]))])
        .unwrap_err();
    assert!(err.to_string().contains("multiple values"), "{err}");
}

#[test]
fn argument_errors_name_the_input_and_its_site() {
    let x = tensor("weights", DType::F32, &[Some(3)]);
    let f = function(std::slice::from_ref(&x), &[x.exp()])
        .build()
        .unwrap();
    let err = f.call(&[t(&[1., 2., 3.])]).unwrap_err();
    assert!(err.is_type_error());
    let msg = err.to_string();
    assert!(
        msg.contains("'weights'") && msg.contains("float32") && msg.contains("float64"),
        "{msg}"
    );
    assert!(msg.contains("function.rs"), "creation site: {msg}");
    let err = f
        .call(&[Tensor::from_slice(&[1f32, 2.], &[2]).unwrap()])
        .unwrap_err();
    assert!(
        matches!(err, Error::InputShape { .. }) && !err.is_type_error(),
        "{err}"
    );
    assert!(err.to_string().contains("(3)"), "{err}");
    let err = f
        .call(&[Tensor::from_slice(&[1f32, 2., 3.], &[3, 1]).unwrap()])
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::InputRank {
                expected: 1,
                got: 2,
                ..
            }
        ),
        "{err}"
    );
    let err = f.call(&[]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Arity {
                expected: 1,
                got: 0,
                ..
            }
        ),
        "{err}"
    );
    // Lossless upcasts are accepted, as in PyTensor.
    let g = function(&[vector("v", DType::F64)], &[])
        .on_unused_input(OnUnusedInput::Ignore)
        .build()
        .unwrap();
    assert!(
        g.call(&[Tensor::from_slice(&[1i32, 2], &[2]).unwrap()])
            .is_ok()
    );
}

#[test]
fn downcast_needs_permission() {
    let x = vector("x", DType::F32);
    let f = function(std::slice::from_ref(&x), &[&x * 2.0])
        .build()
        .unwrap();
    assert!(f.call(&[t(&[1.5])]).unwrap_err().is_type_error());
    let g = function(std::slice::from_ref(&x), &[&x * 2.0])
        .allow_input_downcast(true)
        .build()
        .unwrap();
    assert_eq!(
        g.call(&[t(&[1.5])]).unwrap()[0].to_vec::<f32>().unwrap(),
        vec![3.0]
    );
}

#[test]
fn trust_input_skips_checks() {
    let x = vector("x", DType::F64);
    let f = function(std::slice::from_ref(&x), &[x.sum(None)])
        .trust_input(true)
        .build()
        .unwrap();
    assert!(f.trust_input());
    assert_eq!(f.call(&[t(&[1., 2.])]).unwrap()[0].item::<f64>(), Some(3.0));
    f.set_trust_input(false);
    assert!(!f.trust_input());
}

#[test]
fn updates_apply_after_success_only() {
    let acc = shared(Tensor::scalar(0.0f64), Some("acc"));
    let inc = scalar("inc", DType::F64);
    let v = vector("v", DType::F64);
    // The output indexes v at position inc-as-int: an out-of-range index fails the call.
    let picked = ops::subtensor(&v, &[ops::Idx::At(inc.astype(DType::I64))]).unwrap();
    let f = function(&[inc.clone(), v.clone()], &[picked])
        .updates(&[(acc.clone(), &acc + &inc)])
        .build()
        .unwrap();
    f.call(&[Tensor::scalar(1.0), t(&[7., 8.])]).unwrap();
    f.call(&[Tensor::scalar(1.0), t(&[7., 8.])]).unwrap();
    assert_eq!(get_value(&acc).unwrap().item::<f64>(), Some(2.0));
    let err = f.call(&[Tensor::scalar(5.0), t(&[7., 8.])]).unwrap_err();
    assert!(matches!(err, Error::Runtime(_)), "{err}");
    assert!(err.to_string().contains("out of bounds"), "{err}");
    assert_eq!(
        get_value(&acc).unwrap().item::<f64>(),
        Some(2.0),
        "a failing call changes nothing"
    );
}

#[test]
fn shared_values_are_read_at_call_time() {
    let w = shared(t(&[1., 2., 3.]), Some("w"));
    let x = vector("x", DType::F64);
    let f = function(std::slice::from_ref(&x), &[&x * &w])
        .build()
        .unwrap();
    assert_eq!(
        values(&f.call(&[t(&[1., 1., 1.])]).unwrap()[0]),
        vec![1., 2., 3.]
    );
    set_value(&w, t(&[0., 0., 5.])).unwrap();
    assert_eq!(
        values(&f.call(&[t(&[1., 1., 1.])]).unwrap()[0]),
        vec![0., 0., 5.]
    );
    let err = set_value(&w, Tensor::from_slice(&[1f32], &[1]).unwrap()).unwrap_err();
    assert!(
        err.to_string().contains("'w'") && err.to_string().contains("float32"),
        "{err}"
    );
    let err = set_value(&w, Tensor::scalar(1.0)).unwrap_err();
    assert!(err.is_type_error(), "{err}");
}

#[test]
fn givens_replace_variables() {
    let x = vector("x", DType::F64);
    let y = vector("y", DType::F64);
    let w = shared(t(&[10., 20.]), Some("w"));
    let f = function(std::slice::from_ref(&x), &[&x + &y])
        .givens(&[(y.clone(), &w * 2.0)])
        .build()
        .unwrap();
    assert_eq!(values(&f.call(&[t(&[1., 2.])]).unwrap()[0]), vec![21., 42.]);
    let bad = function(std::slice::from_ref(&x), &[&x + &y])
        .givens(&[(y.clone(), matrix("m", DType::F64))])
        .build();
    assert!(bad.is_err());
}

#[test]
fn unused_inputs_raise_by_default() {
    let x = vector("x", DType::F64);
    let unused = vector("spare", DType::F64);
    let err = function(&[x.clone(), unused.clone()], &[x.exp()])
        .build()
        .err()
        .unwrap();
    assert!(
        matches!(err, Error::UnusedInput(_)) && err.to_string().contains("'spare'"),
        "{err}"
    );
    assert!(
        function(&[x.clone(), unused], &[x.exp()])
            .on_unused_input(OnUnusedInput::Warn)
            .build()
            .is_ok()
    );
}

#[test]
fn missing_inputs_and_bad_updates_are_rejected() {
    let x = vector("x", DType::F64);
    let y = vector("y", DType::F64);
    let err = function(std::slice::from_ref(&x), &[&x + &y])
        .build()
        .err()
        .unwrap();
    assert!(err.to_string().contains("'y'"), "{err}");
    let w = shared(t(&[1.]), Some("w"));
    let err = function(std::slice::from_ref(&x), &[x.exp()])
        .updates(&[(w.clone(), x.astype(DType::F32))])
        .build()
        .err()
        .unwrap();
    assert!(err.to_string().contains("'w'"), "{err}");
    let err = function(std::slice::from_ref(&x), &[x.exp()])
        .updates(&[(x.clone(), x.exp())])
        .build()
        .err()
        .unwrap();
    assert!(err.to_string().contains("not a shared variable"), "{err}");
    let c = Var::scalar_constant(1.0, DType::F64);
    assert!(function(&[c], &[]).build().is_err());
}

#[test]
fn outputs_may_be_inputs_and_constants() {
    let x = vector("x", DType::F64);
    let c = Var::scalar_constant(4.0, DType::F64);
    let f = function(std::slice::from_ref(&x), &[x.clone(), c, x.clone()])
        .build()
        .unwrap();
    let out = f.call(&[t(&[1., 2.])]).unwrap();
    assert_eq!(out.len(), 3);
    assert_eq!(values(&out[1]), vec![4.0]);
    assert_eq!(values(&out[2]), vec![1., 2.]);
}
