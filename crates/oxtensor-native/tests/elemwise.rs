//! Every scalar op, on every dtype it accepts, through the native backend and the
//! interpreter: equal for integers and bools, within a few ulp for floats. Inputs mix edge
//! cases (NaN, ±∞, ±0, integer extremes, zero divisors) with ordinary values, and are read
//! contiguous, transposed, reversed and broadcast.

use crate::common;

use common::data::{Layout, Rng, tensor};
use common::{both, input};
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{ScalarOp, TensorType, Var, build};
use oxtensor_testkit::{Tol, assert_close};

/// Floats: libmvec's vector functions are within 4 ulp of glibc's scalar ones, and erf,
/// erfc, lgamma and the inverse hyperbolic functions come from glibc here and from the `libm`
/// crate in the interpreter; near a root of lgamma only an absolute comparison makes sense.
const FLOAT_TOL: Tol = Tol::MATH_LIBRARIES.or_scaled(1e-15);

/// One graph holding every op applicable to inputs of `dtype`, unary, binary and ternary, on
/// contiguous, transposed, reversed and row-broadcast operands; returns the number of outputs.
fn every_op(dtype: DType, seed: u64) -> usize {
    let mut rng = Rng::new(seed);
    let (rows, cols) = (6, 37);
    let a = input("a", dtype, 2);
    let b = input("b", dtype, 2);
    let c = input("c", dtype, 2);
    let r = Var::input(Some("r"), TensorType::new(dtype, &[Some(1), None]));
    // Small non-negative exponents, so that integer `pow` is defined (NumPy rejects negative
    // ones: tested separately).
    let e = input("e", dtype, 2);
    let mut outputs = Vec::new();
    let mut names = Vec::new();
    let mut push = |name: String, v: Result<Var, oxtensor_graph::GraphError>| {
        if let Ok(v) = v {
            names.push(name);
            outputs.push(v);
        }
    };
    let mut ops: Vec<ScalarOp> = ScalarOp::ALL_BUT_CAST.to_vec();
    ops.extend(DType::REAL.iter().map(|&d| ScalarOp::Cast(d)));
    for op in ops {
        let args: Vec<Vec<&Var>> = match op {
            ScalarOp::Add | ScalarOp::Mul => vec![vec![&a, &b], vec![&c, &r, &a], vec![&b]],
            ScalarOp::Pow => vec![vec![&a, &e], vec![&r, &e]],
            _ => match op.arity() {
                oxtensor_graph::Arity::Fixed(1) => vec![vec![&a], vec![&b], vec![&c]],
                oxtensor_graph::Arity::Fixed(2) => vec![vec![&a, &b], vec![&b, &r], vec![&r, &c]],
                _ => vec![vec![&a, &b, &c], vec![&c, &r, &a]],
            },
        };
        for (k, xs) in args.into_iter().enumerate() {
            let xs: Vec<Var> = xs.into_iter().cloned().collect();
            push(format!("{op} #{k}"), build::elemwise(op, &xs));
        }
    }
    let values = [
        tensor(&mut rng, dtype, &[rows, cols], Layout::Contiguous, 0.3),
        tensor(&mut rng, dtype, &[rows, cols], Layout::Transposed, 0.3),
        tensor(&mut rng, dtype, &[rows, cols], Layout::Reversed, 0.3),
        tensor(&mut rng, dtype, &[1, cols], Layout::Contiguous, 0.3),
        Tensor::from_slice(
            &(0..rows * cols).map(|i| (i % 9) as i64).collect::<Vec<_>>(),
            &[rows, cols],
        )
        .expect("exponents")
        .cast(dtype),
    ];
    let (native, interp) = both(&[a, b, c, r, e], &outputs, &values);
    for ((name, n), i) in names.iter().zip(&native).zip(&interp) {
        assert_close(&format!("{dtype} {name}"), n, i, FLOAT_TOL);
    }
    outputs.len()
}

#[test]
fn every_op_on_floats() {
    assert!(every_op(DType::F64, 1) > 150);
    assert!(every_op(DType::F32, 2) > 150);
}

#[test]
fn every_op_on_signed_integers() {
    for (k, d) in [DType::I8, DType::I16, DType::I32, DType::I64]
        .into_iter()
        .enumerate()
    {
        assert!(every_op(d, 10 + k as u64) > 100);
    }
}

#[test]
fn every_op_on_unsigned_integers_and_bools() {
    for (k, d) in [DType::U8, DType::U16, DType::U32, DType::U64, DType::Bool]
        .into_iter()
        .enumerate()
    {
        assert!(every_op(d, 20 + k as u64) > 40);
    }
}

/// Ops whose inputs have different dtypes: the computation dtype is the promoted one
/// (comparisons of int64 with uint64 in float64, `switch` on a float condition, …).
#[test]
fn mixed_dtypes_promote_as_the_interpreter() {
    let mut rng = Rng::new(99);
    let pairs = [
        (DType::I64, DType::U64),
        (DType::I8, DType::U8),
        (DType::I32, DType::F32),
        (DType::U16, DType::F64),
        (DType::Bool, DType::I16),
        (DType::F32, DType::F64),
        (DType::U32, DType::I8),
    ];
    let ops = [
        ScalarOp::Add,
        ScalarOp::Sub,
        ScalarOp::Mul,
        ScalarOp::TrueDiv,
        ScalarOp::IntDiv,
        ScalarOp::Mod,
        ScalarOp::Maximum,
        ScalarOp::Lt,
        ScalarOp::Ge,
        ScalarOp::Eq,
        ScalarOp::Neq,
        ScalarOp::And,
        ScalarOp::Arctan2,
    ];
    let mut inputs = Vec::new();
    let mut values = Vec::new();
    let mut outputs = Vec::new();
    for (k, &(da, db)) in pairs.iter().enumerate() {
        let a = input(&format!("a{k}"), da, 1);
        let b = input(&format!("b{k}"), db, 1);
        for op in ops {
            if let Ok(v) = build::elemwise(op, &[a.clone(), b.clone()]) {
                outputs.push(v);
            }
        }
        let cond = build::elemwise(ScalarOp::Switch, &[b.clone(), a.clone(), b.clone()]);
        outputs.extend(cond);
        values.push(tensor(&mut rng, da, &[50], Layout::Contiguous, 0.3));
        values.push(tensor(&mut rng, db, &[50], Layout::Reversed, 0.3));
        inputs.push(a);
        inputs.push(b);
    }
    let (native, interp) = both(&inputs, &outputs, &values);
    for (k, (n, i)) in native.iter().zip(&interp).enumerate() {
        assert_close(&format!("output {k}"), n, i, FLOAT_TOL);
    }
}

/// Shape errors and NumPy's negative-integer-power error come out of the native backend as
/// they do out of the interpreter.
#[test]
fn errors_are_the_interpreters() {
    use oxtensor_graph::FunctionGraph;
    use oxtensor_runtime::{Backend, Interpreter};
    let a = input("a", DType::I32, 1);
    let b = input("b", DType::I32, 1);
    let p = build::elemwise(ScalarOp::Pow, &[a.clone(), b.clone()]).expect("pow");
    let g = FunctionGraph::new(vec![a, b], vec![p]).expect("graph");
    let native = common::backend().compile(&g).expect("compile");
    let interp = Interpreter.compile(&g).expect("compile");
    let run = |vals: &[Tensor]| {
        let n = native.run(vals.to_vec()).map_err(|e| e.to_string());
        let i = interp.run(vals.to_vec()).map_err(|e| e.to_string());
        (n, i)
    };
    let x = Tensor::from_slice(&[2i32, 3, 4], &[3]).expect("x");
    let neg = Tensor::from_slice(&[1i32, -1, 2], &[3]).expect("neg");
    let short = Tensor::from_slice(&[1i32, 2], &[2]).expect("short");
    for vals in [[x.clone(), neg], [x.clone(), short]] {
        let (n, i) = run(&vals);
        assert!(i.is_err(), "the interpreter fails here");
        assert_eq!(n.err(), i.err());
    }
    let empty = Tensor::zeros(DType::I32, &[0]).expect("empty");
    let (n, i) = run(&[empty.clone(), empty]);
    assert_eq!(n.expect("empty")[0].shape(), i.expect("empty")[0].shape());
}
