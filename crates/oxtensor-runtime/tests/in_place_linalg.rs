//! [`InPlaceLinalg`], the allocation-free linear algebra a staged loop's host call runs,
//! against the interpreter's kernel of the same node: `cholesky` (lower and upper, the
//! unblocked kernels and faer's above order 16, `on_error` raise and NaN), `cho_solve`,
//! `solve_triangular` (vector and matrix right-hand sides, transposed, unit diagonal),
//! `solve` (every `assume_a`, transposed), `inv`, `det` and `slogdet` give the same values bit
//! for bit and the same errors, in `float64` and in `float32`, with and without (broadcast)
//! batch dimensions; operands of mixed dtypes are left to the kernel.

use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{LinalgOp, Op, TensorType};
use oxtensor_runtime::kernels::{InPlaceLinalg, KernelCtx, Real, eval};

/// The interpreter kernel's results of `op` on `inputs`.
fn kernel(op: &LinalgOp, inputs: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let types: Vec<TensorType> = inputs
        .iter()
        .map(|t| TensorType::of_rank(t.dtype(), t.ndim()))
        .collect();
    let ctx = KernelCtx {
        input_types: &types,
        output_types: &types[..1],
    };
    eval(&Op::Linalg(op.clone()), inputs, &ctx).map_err(|e| e.to_string())
}

/// `op` on `inputs` both ways, in `float64` and in `float32` (the inputs rounded): the same
/// values bit for bit, or the same error.
fn agree(what: &str, op: &LinalgOp, inputs: &[&Tensor]) {
    agree_as::<f64>(what, op, inputs);
    let singles: Vec<Tensor> = inputs
        .iter()
        .map(|t| {
            let v: Vec<f32> = t.to_vec_as::<f32>();
            Tensor::from_slice(&v, t.shape()).expect("float32")
        })
        .collect();
    let refs: Vec<&Tensor> = singles.iter().collect();
    agree_as::<f32>(&format!("{what} (float32)"), op, &refs);
}

/// `op` on `inputs` (of `T`'s dtype) both ways: the same values bit for bit, or the same error.
fn agree_as<T: Real>(what: &str, op: &LinalgOp, inputs: &[&Tensor]) {
    let params: Vec<(DType, &[usize])> = inputs.iter().map(|t| (t.dtype(), t.shape())).collect();
    let mut ours = InPlaceLinalg::new(op, &params).unwrap_or_else(|| panic!("{what}: taken"));
    assert_eq!(ours.dtype(), T::DTYPE, "{what}: dtype");
    let data: Vec<Vec<T>> = inputs.iter().map(|t| t.to_vec_as::<T>()).collect();
    let args: Vec<&[T]> = data.iter().map(Vec::as_slice).collect();
    let mut outs: Vec<Vec<T>> = ours
        .out_lens()
        .iter()
        .map(|&n| vec![T::default(); n])
        .collect();
    let bits = |v: &[T]| v.iter().map(|x| x.to_f64().to_bits()).collect::<Vec<_>>();
    // Twice: the kept workspace gives the same result again.
    for round in 0..2 {
        let mut slices: Vec<&mut [T]> = outs.iter_mut().map(Vec::as_mut_slice).collect();
        let got = ours.run(&args, &mut slices).map_err(|e| e.to_string());
        match kernel(op, inputs) {
            Ok(want) => {
                got.unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(outs.len(), want.len(), "{what}: outputs");
                for (k, (o, w)) in outs.iter().zip(&want).enumerate() {
                    assert_eq!(w.dtype(), T::DTYPE, "{what}, output {k} dtype");
                    let w = w.to_vec_as::<T>();
                    assert_eq!(bits(o), bits(&w), "{what}, output {k}, round {round}");
                }
            }
            Err(want) => assert_eq!(got.expect_err(what), want, "{what}, round {round}"),
        }
    }
}

/// A symmetric positive definite `n × n` matrix (`BᵀB/n + I` for a fixed `B`).
fn spd(n: usize) -> Tensor {
    let b: Vec<f64> = (0..n * n)
        .map(|k| ((k * 37 + 11) % 23) as f64 / 23.0 - 0.4)
        .collect();
    let a: Vec<f64> = (0..n * n)
        .map(|k| {
            let (i, j) = (k / n, k % n);
            let dot: f64 = (0..n).map(|l| b[l * n + i] * b[l * n + j]).sum();
            dot / n as f64 + if i == j { 1.0 } else { 0.0 }
        })
        .collect();
    Tensor::from_slice(&a, &[n, n]).expect("spd")
}

fn rhs(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n).map(|k| (k as f64 * 0.7).sin()).collect();
    Tensor::from_slice(&v, shape).expect("b")
}

#[test]
fn cholesky_and_solves_in_place_are_the_kernels_bit_for_bit() {
    for n in [1, 4, 20] {
        let a = spd(n);
        for (lower, nan_on_error) in [(true, false), (false, false), (true, true)] {
            let op = LinalgOp::Cholesky {
                lower,
                nan_on_error,
            };
            agree(&format!("cholesky n={n} lower={lower}"), &op, &[&a]);
            let c = kernel(&op, &[&a]).expect("factor").remove(0);
            for b in [rhs(&[n]), rhs(&[n, 3])] {
                let b_ndim = b.ndim();
                let what = format!("cho_solve n={n} lower={lower} b {:?}", b.shape());
                agree(&what, &LinalgOp::ChoSolve { lower, b_ndim }, &[&c, &b]);
                for (trans, unit_diagonal) in [(false, false), (true, false), (false, true)] {
                    let op = LinalgOp::SolveTriangular {
                        lower,
                        trans,
                        unit_diagonal,
                        b_ndim,
                    };
                    let what =
                        format!("{what}, solve_triangular trans={trans} unit={unit_diagonal}");
                    agree(&what, &op, &[&c, &b]);
                }
            }
        }
    }
}

#[test]
fn solves_inverses_and_determinants_in_place_are_the_kernels_bit_for_bit() {
    use oxtensor_graph::AssumeA;
    for n in [1, 4, 20] {
        // Not symmetric: `a` plus a skew part, so `solve`'s triangle and transpose matter.
        let mut v = spd(n).to_vec_as::<f64>();
        for (k, x) in v.iter_mut().enumerate() {
            *x += if k / n < k % n { 0.3 } else { -0.1 };
        }
        let a = Tensor::from_slice(&v, &[n, n]).expect("a");
        agree(&format!("inv n={n}"), &LinalgOp::Inv, &[&a]);
        agree(&format!("det n={n}"), &LinalgOp::Det, &[&a]);
        agree(&format!("slogdet n={n}"), &LinalgOp::SLogDet, &[&a]);
        let spd = spd(n);
        for assume_a in [
            AssumeA::General,
            AssumeA::Symmetric,
            AssumeA::PositiveDefinite,
            AssumeA::Tridiagonal,
            AssumeA::Banded,
        ] {
            for (lower, transposed) in [(true, false), (false, true)] {
                for b in [rhs(&[n]), rhs(&[n, 2])] {
                    let op = LinalgOp::Solve {
                        assume_a,
                        lower,
                        transposed,
                        b_ndim: b.ndim(),
                    };
                    let what = format!("solve {assume_a:?} n={n} lower={lower} b {:?}", b.shape());
                    agree(&what, &op, &[&spd, &b]);
                }
            }
        }
    }
    // A singular matrix: `det` 0, `slogdet` (0, -inf), `inv` and `solve` the kernel's error.
    let singular = Tensor::from_slice(&[1.0, 2.0, 2.0, 4.0], &[2, 2]).expect("a");
    agree("a singular det", &LinalgOp::Det, &[&singular]);
    agree("a singular slogdet", &LinalgOp::SLogDet, &[&singular]);
    agree("a singular inv", &LinalgOp::Inv, &[&singular]);
    let op = LinalgOp::Solve {
        assume_a: AssumeA::General,
        lower: false,
        transposed: false,
        b_ndim: 1,
    };
    agree("a singular solve", &op, &[&singular, &rhs(&[2])]);
}

#[test]
fn errors_in_place_are_the_kernels() {
    let indefinite = Tensor::from_slice(&[1.0, 2.0, 2.0, 1.0], &[2, 2]).expect("a");
    for nan_on_error in [false, true] {
        let op = LinalgOp::Cholesky {
            lower: true,
            nan_on_error,
        };
        agree("an indefinite matrix", &op, &[&indefinite]);
    }
    let singular = Tensor::from_slice(&[1.0, 0.0, 3.0, 0.0], &[2, 2]).expect("c");
    let b = rhs(&[2]);
    let op = LinalgOp::ChoSolve {
        lower: true,
        b_ndim: 1,
    };
    agree("a zero on the factor's diagonal", &op, &[&singular, &b]);
    let op = LinalgOp::SolveTriangular {
        lower: true,
        trans: false,
        unit_diagonal: false,
        b_ndim: 1,
    };
    agree("a singular triangle", &op, &[&singular, &b]);
}

#[test]
fn batched_operands_in_place_are_the_kernels_bit_for_bit() {
    use oxtensor_graph::AssumeA;
    // Two factors and a third matrix stacked: `[3, n, n]`, and the batch broadcast against a
    // right-hand side without batch dimensions or with its own of extent 1.
    let n = 3;
    let stack = |ms: &[Tensor]| {
        let v: Vec<f64> = ms.iter().flat_map(|m| m.to_vec_as::<f64>()).collect();
        Tensor::from_slice(&v, &[ms.len(), n, n]).expect("stack")
    };
    let mut skew = spd(n).to_vec_as::<f64>();
    skew[1] += 0.5;
    let skew = Tensor::from_slice(&skew, &[n, n]).expect("skew");
    let a = stack(&[spd(n), skew.clone(), spd(n)]);
    for lower in [true, false] {
        let op = LinalgOp::Cholesky {
            lower,
            nan_on_error: false,
        };
        agree(&format!("batched cholesky lower={lower}"), &op, &[&a]);
        let c = kernel(&op, &[&stack(&[spd(n), spd(n)])])
            .expect("factors")
            .remove(0);
        for b in [rhs(&[n]), rhs(&[1, n, 2])] {
            let b_ndim = if b.ndim() == 1 { 1 } else { 2 };
            let what = format!("batched cho_solve lower={lower} b {:?}", b.shape());
            agree(&what, &LinalgOp::ChoSolve { lower, b_ndim }, &[&c, &b]);
            let op = LinalgOp::SolveTriangular {
                lower,
                trans: true,
                unit_diagonal: false,
                b_ndim,
            };
            agree(&format!("{what}, solve_triangular"), &op, &[&c, &b]);
        }
    }
    let op = LinalgOp::Solve {
        assume_a: AssumeA::General,
        lower: false,
        transposed: false,
        b_ndim: 2,
    };
    agree("batched solve", &op, &[&a, &rhs(&[3, n, 2])]);
    agree(
        "solve of a batch of right-hand sides",
        &op,
        &[&skew, &rhs(&[2, n, 2])],
    );
    agree("batched inv", &LinalgOp::Inv, &[&a]);
    agree("batched det", &LinalgOp::Det, &[&a]);
    agree("batched slogdet", &LinalgOp::SLogDet, &[&a]);
    // An indefinite matrix and a singular one in the middle of a batch: the kernel's errors.
    let indefinite = Tensor::from_slice(&[1.0, 2.0, 2.0, 1.0], &[2, 2]).expect("a");
    let singular = Tensor::from_slice(&[1.0, 2.0, 2.0, 4.0], &[2, 2]).expect("a");
    let eye = Tensor::from_slice(&[2.0, 0.0, 0.0, 2.0], &[2, 2]).expect("a");
    let mixed = |m: &Tensor| {
        let v: Vec<f64> = [&eye, m, &eye]
            .iter()
            .flat_map(|t| t.to_vec_as::<f64>())
            .collect();
        Tensor::from_slice(&v, &[3, 2, 2]).expect("batch")
    };
    for nan_on_error in [false, true] {
        let op = LinalgOp::Cholesky {
            lower: true,
            nan_on_error,
        };
        agree(
            "an indefinite matrix in a batch",
            &op,
            &[&mixed(&indefinite)],
        );
    }
    agree(
        "a singular matrix in a batch",
        &LinalgOp::Inv,
        &[&mixed(&singular)],
    );
}

#[test]
fn mixed_dtypes_and_extents_that_do_not_fit_are_left_to_the_kernel() {
    let op = LinalgOp::Cholesky {
        lower: true,
        nan_on_error: false,
    };
    assert!(InPlaceLinalg::new(&op, &[(DType::I64, &[3, 3])]).is_none());
    assert!(InPlaceLinalg::new(&op, &[(DType::F64, &[3, 2])]).is_none());
    assert!(InPlaceLinalg::new(&op, &[(DType::F64, &[3])]).is_none());
    let op = LinalgOp::ChoSolve {
        lower: true,
        b_ndim: 1,
    };
    assert!(InPlaceLinalg::new(&op, &[(DType::F64, &[3, 3]), (DType::F64, &[2])]).is_none());
    assert!(InPlaceLinalg::new(&op, &[(DType::F64, &[3, 3]), (DType::F64, &[2, 3])]).is_some());
    assert!(InPlaceLinalg::new(&op, &[(DType::F32, &[3, 3]), (DType::F64, &[3])]).is_none());
    let batches = [(DType::F64, &[2, 3, 3][..]), (DType::F64, &[4, 3][..])];
    assert!(
        InPlaceLinalg::new(&op, &batches).is_none(),
        "batches that do not broadcast"
    );
    assert!(InPlaceLinalg::new(&LinalgOp::Eig, &[(DType::F64, &[3, 3])]).is_none());
}
