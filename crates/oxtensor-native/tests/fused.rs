//! Random fused programs (`Composite` nodes) through the native backend and the interpreter:
//! random scalar programs over inputs of random dtypes, applied to random shapes with
//! broadcasting and contiguous, transposed and reversed inputs.

use crate::common;

use common::both;
use common::data::{Rng, any_layout, tensor};
use oxtensor_data::DType;
use oxtensor_graph::{ScalarOp, TensorType, Var, build};
use oxtensor_testkit::{Tol, assert_close};

/// Float programs chain transcendental functions, each within a few ulp of the interpreter's,
/// and the differences can grow through the chain (30 seeds stayed within 25 ulp).
const FUSED_FLOAT_TOL: Tol = Tol {
    ulps: 256,
    scale: 1e-13,
    abs: 0.0,
};

/// Ops that are continuous where defined: a few ulp in, a few ulp out.
const SMOOTH: [ScalarOp; 20] = [
    ScalarOp::Add,
    ScalarOp::Sub,
    ScalarOp::Mul,
    ScalarOp::TrueDiv,
    ScalarOp::Neg,
    ScalarOp::Abs,
    ScalarOp::Sqr,
    ScalarOp::Sqrt,
    ScalarOp::Exp,
    ScalarOp::Log1p,
    ScalarOp::Sin,
    ScalarOp::Cos,
    ScalarOp::Tanh,
    ScalarOp::Sigmoid,
    ScalarOp::Softplus,
    ScalarOp::Maximum,
    ScalarOp::Minimum,
    ScalarOp::Arctan,
    ScalarOp::Erf,
    ScalarOp::Log,
];

/// Ops that jump (a last-ulp difference in the argument can change the result by a lot):
/// only applied to the program's inputs, which both backends read identically.
const STEPS: [ScalarOp; 8] = [
    ScalarOp::Floor,
    ScalarOp::RoundHalfEven,
    ScalarOp::Lt,
    ScalarOp::Ge,
    ScalarOp::Sign,
    ScalarOp::IntDiv,
    ScalarOp::Mod,
    ScalarOp::Trunc,
];

/// Integer ops: everything exact.
const INTEGER: [ScalarOp; 14] = [
    ScalarOp::Add,
    ScalarOp::Sub,
    ScalarOp::Mul,
    ScalarOp::IntDiv,
    ScalarOp::Mod,
    ScalarOp::Neg,
    ScalarOp::Abs,
    ScalarOp::Maximum,
    ScalarOp::Minimum,
    ScalarOp::And,
    ScalarOp::Xor,
    ScalarOp::Invert,
    ScalarOp::Sign,
    ScalarOp::Sqr,
];

/// A random scalar program over placeholders of `dtypes`: its inner inputs and outputs.
fn program(rng: &mut Rng, dtypes: &[DType], float: bool) -> (Vec<Var>, Vec<Var>) {
    let inner: Vec<Var> = dtypes
        .iter()
        .enumerate()
        .map(|(i, &d)| Var::input(Some(&format!("s{i}")), TensorType::scalar(d)))
        .collect();
    let mut pool = inner.clone();
    let steps = 3 + rng.below(10);
    let mut made = 0;
    while made < steps {
        let pick = |rng: &mut Rng, from: &[Var]| from[rng.below(from.len())].clone();
        let (op, from): (ScalarOp, &[Var]) = if float {
            if rng.chance(0.15) {
                (STEPS[rng.below(STEPS.len())], &inner)
            } else {
                (SMOOTH[rng.below(SMOOTH.len())], &pool)
            }
        } else if rng.chance(0.1) {
            let to = [DType::I8, DType::I16, DType::I64, DType::U8, DType::U32][rng.below(5)];
            (ScalarOp::Cast(to), &pool)
        } else {
            (INTEGER[rng.below(INTEGER.len())], &pool)
        };
        let n = match op.arity() {
            oxtensor_graph::Arity::Fixed(k) => k,
            oxtensor_graph::Arity::Variadic => 2 + rng.below(2),
        };
        let mut args: Vec<Var> = (0..n).map(|_| pick(rng, from)).collect();
        if rng.chance(0.2) {
            // A weak constant operand, inlined as a literal.
            let c = if float {
                rng.uniform(-2.0, 2.0)
            } else {
                rng.below(7) as f64 - 3.0
            };
            let like = args[0].dtype();
            args[n - 1] = if like.is_float() {
                build::weak_constant(build::Scalar::Float(c), like)
            } else {
                build::weak_constant(build::Scalar::Int(c as i64), like)
            };
        }
        if let Ok(v) = build::elemwise(op, &args) {
            pool.push(v);
            made += 1;
        }
    }
    let mut outputs = vec![pool[pool.len() - 1].clone()];
    if rng.chance(0.4) {
        outputs.push(pool[inner.len() + rng.below(pool.len() - inner.len())].clone());
    }
    if rng.chance(0.1) {
        // An output that is an input, broadcast to the output shape.
        outputs.push(inner[0].clone());
    }
    (inner, outputs)
}

/// `count` random Composite nodes in one graph (one compile), checked against the
/// interpreter.
fn random_composites(seed: u64, count: usize, float: bool, dtypes: &[DType], tol: Tol) {
    let mut rng = Rng::new(seed);
    let mut inputs = Vec::new();
    let mut values = Vec::new();
    let mut outputs = Vec::new();
    for c in 0..count {
        let n_in = 1 + rng.below(4);
        let ds: Vec<DType> = (0..n_in).map(|_| dtypes[rng.below(dtypes.len())]).collect();
        let (inner, inner_out) = program(&mut rng, &ds, float);
        let rank = 1 + rng.below(3);
        let shape: Vec<usize> = (0..rank).map(|_| 1 + rng.below(70)).collect();
        let mut outer = Vec::new();
        for (i, &d) in ds.iter().enumerate() {
            let bcast: Vec<bool> = (0..rank).map(|_| rng.chance(0.25)).collect();
            let ty: Vec<Option<usize>> = bcast
                .iter()
                .map(|&b| if b { Some(1) } else { None })
                .collect();
            let v = Var::input(Some(&format!("c{c}_{i}")), TensorType::new(d, &ty));
            let sh: Vec<usize> = shape
                .iter()
                .zip(&bcast)
                .map(|(&s, &b)| if b { 1 } else { s })
                .collect();
            let layout = any_layout(&mut rng);
            values.push(tensor(&mut rng, d, &sh, layout, 0.05));
            inputs.push(v.clone());
            outer.push(v);
        }
        let outs = build::composite(&inner, &inner_out, &outer).expect("composite");
        outputs.extend(outs);
    }
    let (native, interp) = both(&inputs, &outputs, &values);
    for (k, (n, i)) in native.iter().zip(&interp).enumerate() {
        assert_close(&format!("seed {seed} output {k}"), n, i, tol);
    }
}

#[test]
fn random_float64_composites() {
    random_composites(1, 12, true, &[DType::F64], FUSED_FLOAT_TOL);
}

#[test]
fn random_mixed_float_composites() {
    random_composites(
        2,
        12,
        true,
        &[DType::F32, DType::F64, DType::I32, DType::U8, DType::Bool],
        FUSED_FLOAT_TOL,
    );
}

#[test]
fn random_integer_composites() {
    random_composites(
        3,
        12,
        false,
        &[DType::I8, DType::I16, DType::I32, DType::I64],
        Tol::EXACT,
    );
    random_composites(
        4,
        12,
        false,
        &[DType::U8, DType::U16, DType::U64, DType::I32],
        Tol::EXACT,
    );
}

/// The W2 workload as one Composite, against the same program as separate nodes.
#[test]
fn w2_fused_and_unfused_agree() {
    let s: Vec<Var> = (0..2)
        .map(|i| Var::input(Some(&format!("s{i}")), TensorType::scalar(DType::F64)))
        .collect();
    let w2 = |x: &Var, y: &Var| {
        let e = build::exp(&build::neg(&build::sqr(x)?)?)?;
        let l = build::log1p(&build::abs(&build::mul(x, y)?)?)?;
        build::add(&build::mul(&e, &build::sin(y)?)?, &l)
    };
    let inner = w2(&s[0], &s[1]).expect("inner");
    let x = common::input("x", DType::F64, 1);
    let y = common::input("y", DType::F64, 1);
    let fused = build::composite(&s, &[inner], &[x.clone(), y.clone()]).expect("composite");
    let plain = w2(&x, &y).expect("plain");
    let mut rng = Rng::new(7);
    let n = 200_000;
    let vals = [
        tensor(
            &mut rng,
            DType::F64,
            &[n],
            common::data::Layout::Contiguous,
            0.01,
        ),
        tensor(
            &mut rng,
            DType::F64,
            &[n],
            common::data::Layout::Reversed,
            0.01,
        ),
    ];
    let (native, interp) = both(&[x, y], &[fused[0].clone(), plain], &vals);
    assert_close(
        "fused",
        &native[0],
        &interp[0],
        Tol {
            ulps: 8,
            scale: 1e-15,
            abs: 0.0,
        },
    );
    assert_close(
        "plain",
        &native[1],
        &interp[1],
        Tol {
            ulps: 8,
            scale: 1e-15,
            abs: 0.0,
        },
    );
}
