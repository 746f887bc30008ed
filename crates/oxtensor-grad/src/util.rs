//! Small graph-building helpers shared by the rules and the driver: gradient dtypes, zeros of a
//! variable's shape, summing a broadcast gradient back to an input's shape, and refining static
//! shapes.

use oxtensor_data::DType;
use oxtensor_graph::build::{self, Built, Scalar};
use oxtensor_graph::{GraphError, Op, ScalarOp, StaticShape, Var};

/// The dtype of gradients with respect to a variable of dtype `dtype`: the same float type for
/// floats, `float64` (our `floatX`) for integers and bools, as PyTensor's `_float_zeros_like`.
pub fn grad_dtype(dtype: DType) -> DType {
    if dtype.is_inexact() {
        dtype
    } else {
        DType::F64
    }
}

/// A weak float constant adopting `like`'s dtype when it is a float (`float64` otherwise), so
/// that gradient arithmetic stays in the precision of the value it differentiates.
pub(crate) fn fconst(value: f64, like: &Var) -> Var {
    build::weak_constant(Scalar::Float(value), like.dtype())
}

/// `a * value` with `value` a weak float constant.
pub(crate) fn scale(a: &Var, value: f64) -> Built {
    build::mul(a, &fconst(value, a))
}

/// `a + value` with `value` a weak float constant.
pub(crate) fn shift(a: &Var, value: f64) -> Built {
    build::add(a, &fconst(value, a))
}

/// `value - a` with `value` a weak float constant.
pub(crate) fn rsub(value: f64, a: &Var) -> Built {
    build::sub(&fconst(value, a), a)
}

/// The extents of `x` as `int64` scalars (constants where static).
pub(crate) fn dims(x: &Var) -> Result<Vec<Var>, GraphError> {
    (0..x.ndim()).map(|d| build::shape_i(x, d)).collect()
}

/// Zeros of `x`'s shape and the given dtype.
pub(crate) fn zeros_like(x: &Var, dtype: DType) -> Built {
    let zero = Var::scalar_constant(0.0, dtype);
    if x.ndim() == 0 {
        return Ok(zero);
    }
    build::alloc(&zero, &dims(x)?)
}

/// `switch(cond, g, 0)`: `g` where `cond` holds, zero elsewhere.
pub(crate) fn keep_where(cond: &Var, g: &Var) -> Built {
    build::switch(cond, g, &fconst(0.0, g))
}

/// `switch(cond, 0, g)`: zero where `cond` holds, `g` elsewhere.
pub(crate) fn drop_where(cond: &Var, g: &Var) -> Built {
    build::switch(cond, &fconst(0.0, g), g)
}

/// Sums a gradient computed for a broadcast value back to the shape of the value it came
/// from: first over the leading dimensions the value was padded with, then (keeping them) over
/// the dimensions where the value has static extent 1 but the gradient does not. This is the
/// adjoint of broadcasting, which in this graph only stretches dimensions of static extent 1.
pub(crate) fn sum_to(g: &Var, target: &[Option<usize>]) -> Built {
    let mut g = g.clone();
    let lead = g.ndim().saturating_sub(target.len());
    if lead > 0 {
        let axes: Vec<i64> = (0..lead as i64).collect();
        g = build::sum(&g, Some(&axes), false)?;
    }
    let axes: Vec<i64> = target
        .iter()
        .zip(&g.ty().shape)
        .enumerate()
        .filter(|(_, (t, have))| **t == Some(1) && **have != Some(1))
        .map(|(d, _)| d as i64)
        .collect();
    if !axes.is_empty() {
        g = build::sum(&g, Some(&axes), true)?;
    }
    Ok(g)
}

/// Makes a rule's gradient term fit `input`: summed back over broadcast dimensions and cast to
/// the input's gradient dtype.
pub(crate) fn fit(term: &Var, input: &Var) -> Built {
    build::cast(&sum_to(term, &input.ty().shape)?, grad_dtype(input.dtype()))
}

/// `v` with the static extents of `shape` asserted where `v`'s own type leaves them unknown, so
/// rules that rely on static extents (dropping a dimension of extent 1) see the exact type of
/// the variable whose gradient `v` is. Returns `v` itself when nothing is to be refined.
pub(crate) fn refine(v: &Var, shape: &StaticShape) -> Built {
    let have = &v.ty().shape;
    if have.len() != shape.len() {
        return Err(GraphError::Invalid {
            op: "grad".into(),
            message: format!(
                "a gradient of rank {} was computed for a variable of rank {}",
                have.len(),
                shape.len()
            ),
        });
    }
    let needed = have
        .iter()
        .zip(shape)
        .any(|(h, s)| h.is_none() && s.is_some());
    if !needed {
        return Ok(v.clone());
    }
    let spec: StaticShape = have.iter().zip(shape).map(|(h, s)| h.or(*s)).collect();
    Var::apply1(Op::SpecifyShape(spec), std::slice::from_ref(v))
}

/// The n-ary sum of `terms` (at least one) as a single `Add` node: accumulating the gradient
/// contributions of one variable costs one node, not a chain.
pub(crate) fn sum_terms(terms: &[Var]) -> Built {
    match terms {
        [one] => Ok(one.clone()),
        _ => Var::apply1(Op::Elemwise(ScalarOp::Add), terms),
    }
}
