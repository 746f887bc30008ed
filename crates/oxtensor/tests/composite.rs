//! `Op::Composite`: a fused elementwise program gives the values and gradients of the unfused
//! graph it was built from.

use oxtensor::{DType, Tensor, TensorType, Var, function, grad_vars, matrix, ops, vector};

fn program(x: &Var, y: &Var) -> Var {
    // exp(-x²)·sin(y) + log1p(|x·y|)
    (-(x * x)).exp() * y.sin() + (x * y).abs().log1p()
}

#[test]
fn composite_matches_unfused_values_and_gradients() {
    let (a, b) = (
        Var::input(Some("a"), TensorType::scalar(DType::F64)),
        Var::input(Some("b"), TensorType::scalar(DType::F64)),
    );
    let x = matrix("x", DType::F64);
    let y = vector("y", DType::F64);
    let fused = ops::composite(
        &[a.clone(), b.clone()],
        &[program(&a, &b)],
        &[x.clone(), y.clone()],
    )
    .unwrap()[0]
        .clone();
    assert!(format!("{}", fused.owner().unwrap().0).starts_with("Composite{"));
    let plain = program(&x, &ops::pad_rank(&y, 2).unwrap());
    let cost_f = fused.sum(None);
    let cost_p = plain.sum(None);
    let gf = grad_vars(&cost_f, &[x.clone(), y.clone()]).unwrap();
    let gp = grad_vars(&cost_p, &[x.clone(), y.clone()]).unwrap();
    let mut outs = vec![fused, plain];
    outs.extend(gf);
    outs.extend(gp);
    let f = function(&[x, y], &outs).build().unwrap();
    let xs: Vec<f64> = (0..12).map(|i| (i as f64 - 6.0) * 0.37).collect();
    let out = f
        .call(&[
            Tensor::from_slice(&xs, &[3, 4]).unwrap(),
            Tensor::from_slice(&[0.3, -1.2, 2.0, 0.0], &[4]).unwrap(),
        ])
        .unwrap();
    for (k, (u, v)) in [(0, 1), (2, 4), (3, 5)]
        .into_iter()
        .map(|(i, j)| (out[i].to_vec_as::<f64>(), out[j].to_vec_as::<f64>()))
        .enumerate()
    {
        assert_eq!(u.len(), v.len());
        for (p, q) in u.iter().zip(&v) {
            assert!(
                (p - q).abs() <= 1e-12 * (1.0 + q.abs()),
                "pair {k}: {p} vs {q}"
            );
        }
    }
}

#[test]
fn composite_broadcasts_constants_and_passes_inputs_through() {
    let a = Var::input(Some("a"), TensorType::scalar(DType::F32));
    let x = vector("x", DType::F32);
    let outs = ops::composite(
        std::slice::from_ref(&a),
        &[&a * 2.0, a.clone()],
        std::slice::from_ref(&x),
    )
    .unwrap();
    let f = function(std::slice::from_ref(&x), &outs).build().unwrap();
    let r = f
        .call(&[Tensor::from_slice(&[1f32, -2.5], &[2]).unwrap()])
        .unwrap();
    assert_eq!(r[0].to_vec::<f32>().unwrap(), vec![2.0, -5.0]);
    assert_eq!(r[1].to_vec::<f32>().unwrap(), vec![1.0, -2.5]);
}
