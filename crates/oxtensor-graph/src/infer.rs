//! Output type inference: one exhaustive `match` over [`Op`], checking inputs and computing the
//! dtype and static shape of every output. Errors name the offending input.

use crate::infer_index::{check_fits, subtensor_shape, take_shape};
use crate::scalar_op::Arity;
use crate::{FrozenGraph, GraphError, Op, ReduceOp, ScalarOp, StaticShape, TensorType, Var};
use oxtensor_data::{DType, result_type};
use smallvec::{SmallVec, smallvec};

type Types = SmallVec<[TensorType; 1]>;

fn one(t: TensorType) -> Result<Types, GraphError> {
    Ok(smallvec![t])
}

/// An arity error naming `op` unless it got exactly `n` inputs.
pub(crate) fn arity(op: &Op, inputs: &[Var], n: usize) -> Result<(), GraphError> {
    if inputs.len() == n {
        Ok(())
    } else {
        Err(GraphError::Arity {
            op: op.to_string(),
            expected: n.to_string(),
            got: inputs.len(),
        })
    }
}

pub(crate) fn int_scalar(op: &Op, v: &Var) -> Result<(), GraphError> {
    if v.ndim() != 0 {
        return Err(GraphError::rank(op, v, "0 (an integer scalar)"));
    }
    if !v.dtype().is_int() {
        return Err(GraphError::dtype(op, v, "an integer type"));
    }
    Ok(())
}

fn int_vector(op: &Op, v: &Var, len: Option<usize>) -> Result<(), GraphError> {
    if v.ndim() != 1 {
        return Err(GraphError::rank(op, v, "1 (an integer vector)"));
    }
    if !v.dtype().is_int() {
        return Err(GraphError::dtype(op, v, "an integer type"));
    }
    if let (Some(want), Some(got)) = (len, v.ty().shape[0])
        && want != got
    {
        return Err(GraphError::shape(
            op,
            format!("{} has length {got}, expected {want}", v.describe()),
        ));
    }
    Ok(())
}

fn axis_in(op: &Op, axis: usize, ndim: usize) -> Result<(), GraphError> {
    if axis < ndim {
        Ok(())
    } else {
        Err(GraphError::invalid(
            op,
            format!("axis {axis} is out of bounds for a tensor of rank {ndim}"),
        ))
    }
}

/// The constant entries of an integer vector built from constants or a `MakeVector` of scalars.
pub(crate) fn const_entries(v: &Var) -> Option<Vec<Option<i64>>> {
    if let Some(t) = v.constant_value() {
        return (!t.dtype().is_float())
            .then(|| t.to_vec_as::<i64>().into_iter().map(Some).collect());
    }
    match v.owner() {
        Some((Op::MakeVector(_), items)) => Some(items.iter().map(Var::const_int).collect()),
        _ => None,
    }
}

/// Static shape of elementwise inputs under the static-1 broadcasting rule.
pub(crate) fn broadcast_static(op: &Op, inputs: &[Var]) -> Result<StaticShape, GraphError> {
    let ndim = inputs[0].ndim();
    if let Some(bad) = inputs.iter().find(|v| v.ndim() != ndim) {
        return Err(GraphError::rank(
            op,
            bad,
            format!(
                "{ndim} (inputs of an elementwise op must have equal rank; expand_dims or dimshuffle first)"
            ),
        ));
    }
    (0..ndim)
        .map(|d| {
            broadcast_dim(
                op,
                inputs.iter().map(|v| (v.ty().shape[d], v)),
                |w, m, v, n| {
                    format!(
                        "dimension {d} does not broadcast: {} has extent {m}, {} has extent {n}",
                        w.describe(),
                        v.describe()
                    )
                },
            )
        })
        .collect()
}

/// The static extent of one broadcast dimension from each input's extent there (`None`:
/// unknown): a known extent other than 1 wins over unknown ones (anything else fails at run
/// time), two different ones are an error worded by `clash(first, its extent, other, its
/// extent)`, and all 1 gives 1.
pub(crate) fn broadcast_dim<'a>(
    op: &Op,
    extents: impl IntoIterator<Item = (Option<usize>, &'a Var)>,
    clash: impl Fn(&Var, usize, &Var, usize) -> String,
) -> Result<Option<usize>, GraphError> {
    let mut known: Option<(usize, &Var)> = None;
    let mut any_none = false;
    for (extent, v) in extents {
        match extent {
            Some(1) => {}
            Some(n) => match known {
                Some((m, w)) if m != n => return Err(GraphError::shape(op, clash(w, m, v, n))),
                _ => known = Some((n, v)),
            },
            None => any_none = true,
        }
    }
    Ok(match known {
        Some((n, _)) => Some(n),
        None if any_none => None,
        None => Some(1),
    })
}

fn elemwise(op: &Op, s: ScalarOp, inputs: &[Var]) -> Result<Types, GraphError> {
    match s.arity() {
        Arity::Fixed(n) => arity(op, inputs, n)?,
        Arity::Variadic => {
            if inputs.is_empty() {
                return Err(GraphError::Arity {
                    op: op.to_string(),
                    expected: "at least 1".into(),
                    got: 0,
                });
            }
        }
    }
    let dtypes: SmallVec<[DType; 3]> = inputs.iter().map(Var::dtype).collect();
    let dtype = s.output_dtype(&dtypes).map_err(|m| {
        let culprit = inputs
            .iter()
            .find(|v| v.dtype().is_bool() || v.dtype().is_float())
            .unwrap_or(&inputs[0]);
        GraphError::dtype(op, culprit, m)
    })?;
    let shape = broadcast_static(op, inputs)?;
    one(TensorType { dtype, shape })
}

fn matmul(op: &Op, a: &Var, b: &Var) -> Result<Types, GraphError> {
    if a.ndim() == 0 {
        return Err(GraphError::rank(op, a, "at least 1 (use mul for scalars)"));
    }
    if b.ndim() == 0 {
        return Err(GraphError::rank(op, b, "at least 1 (use mul for scalars)"));
    }
    let dtype = result_type(a.dtype(), b.dtype());
    let (sa, sb) = (&a.ty().shape, &b.ty().shape);
    let ka = sa[sa.len() - 1];
    let kb = if sb.len() == 1 {
        sb[0]
    } else {
        sb[sb.len() - 2]
    };
    if let (Some(x), Some(y)) = (ka, kb)
        && x != y
    {
        return Err(GraphError::shape(
            op,
            format!(
                "contracted dimensions differ: {} has {x}, {} has {y}",
                a.describe(),
                b.describe()
            ),
        ));
    }
    let batch_a: StaticShape = if sa.len() > 2 {
        sa[..sa.len() - 2].into()
    } else {
        StaticShape::new()
    };
    let batch_b: StaticShape = if sb.len() > 2 {
        sb[..sb.len() - 2].into()
    } else {
        StaticShape::new()
    };
    let n = batch_a.len().max(batch_b.len());
    let mut shape = StaticShape::new();
    for i in 0..n {
        let pick = |s: &StaticShape| {
            if i + s.len() >= n {
                s[i + s.len() - n]
            } else {
                Some(1)
            }
        };
        let (x, y) = (pick(&batch_a), pick(&batch_b));
        shape.push(match (x, y) {
            (Some(1), o) | (o, Some(1)) => o,
            (Some(p), Some(q)) if p != q => {
                return Err(GraphError::shape(
                    op,
                    format!(
                        "batch dimensions do not broadcast: {} and {}",
                        a.describe(),
                        b.describe()
                    ),
                ));
            }
            (Some(p), _) | (_, Some(p)) => Some(p),
            (None, None) => None,
        });
    }
    if sa.len() >= 2 {
        shape.push(sa[sa.len() - 2]);
    }
    if sb.len() >= 2 {
        shape.push(sb[sb.len() - 1]);
    }
    one(TensorType { dtype, shape })
}

/// The type of `r` over `axes` of a value of type `x`.
fn reduce_type(
    op: &Op,
    r: ReduceOp,
    axes: &[usize],
    x: &TensorType,
) -> Result<TensorType, GraphError> {
    for (i, &a) in axes.iter().enumerate() {
        axis_in(op, a, x.ndim())?;
        if i > 0 && axes[i - 1] >= a {
            return Err(GraphError::invalid(op, "axes must be sorted and unique"));
        }
    }
    let shape = x
        .shape
        .iter()
        .enumerate()
        .filter(|(d, _)| !axes.contains(d))
        .map(|(_, s)| *s)
        .collect();
    Ok(TensorType {
        dtype: r.output_dtype(x.dtype),
        shape,
    })
}

/// The output types of the elementwise program `g` (a Composite's inner graph) on `inputs`.
fn composite_types(op: &Op, g: &FrozenGraph, inputs: &[Var]) -> Result<Types, GraphError> {
    arity(op, inputs, g.input_types().len())?;
    for (v, t) in inputs.iter().zip(g.input_types()) {
        if t.ndim() != 0 {
            return Err(GraphError::invalid(op, "inner graph inputs must be 0-d"));
        }
        if v.dtype() != t.dtype {
            return Err(GraphError::dtype(op, v, t.dtype.to_string()));
        }
    }
    for node in crate::fgraph::toposort(g.outputs()) {
        if !matches!(node.op(), Some(Op::Elemwise(_))) {
            return Err(GraphError::invalid(
                op,
                "inner graphs may only hold elementwise ops",
            ));
        }
    }
    let shape = broadcast_static(op, inputs)?;
    Ok(g.outputs()
        .iter()
        .map(|o| TensorType {
            dtype: o.dtype(),
            shape: shape.clone(),
        })
        .collect())
}

/// The type of `Op::FusedMatMul`: the epilogue's over the product of two matrices and the
/// other inputs, which must keep the product's dtype and not broadcast it to a larger shape.
fn fused_matmul(op: &Op, body: &FrozenGraph, inputs: &[Var]) -> Result<Types, GraphError> {
    if inputs.len() < 2 {
        return Err(GraphError::Arity {
            op: op.to_string(),
            expected: "at least 2 (the matrices)".into(),
            got: inputs.len(),
        });
    }
    for m in &inputs[..2] {
        if m.ndim() != 2 {
            return Err(GraphError::rank(op, m, "2 (a matrix)"));
        }
    }
    let product = matmul(op, &inputs[0], &inputs[1])?;
    let [p] = product.as_slice() else {
        return Err(GraphError::invalid(op, "a matrix product has one output"));
    };
    let mut program_inputs = vec![Var::input(None, p.clone())];
    program_inputs.extend_from_slice(&inputs[2..]);
    let program = composite_types(op, body, &program_inputs)?;
    let [value] = program.as_slice() else {
        return Err(GraphError::invalid(op, "the epilogue must have one output"));
    };
    if value.dtype != p.dtype {
        return Err(GraphError::invalid(
            op,
            "the epilogue must keep the product's dtype",
        ));
    }
    if value
        .shape
        .iter()
        .zip(&p.shape)
        .any(|(v, p)| *p == Some(1) && *v != Some(1))
    {
        return Err(GraphError::invalid(
            op,
            "the epilogue's inputs must broadcast to the product's shape",
        ));
    }
    one(value.clone())
}

/// Infers the output types of `op` applied to `inputs`, or explains why it cannot apply.
pub fn infer_types(op: &Op, inputs: &[Var]) -> Result<Types, GraphError> {
    match op {
        Op::Elemwise(s) => elemwise(op, *s, inputs),
        Op::Reduce { op: r, axes } => {
            arity(op, inputs, 1)?;
            one(reduce_type(op, *r, axes, inputs[0].ty())?)
        }
        Op::ArgReduce { axis, .. } => {
            arity(op, inputs, 1)?;
            let x = &inputs[0];
            let shape = match axis {
                Some(a) => {
                    axis_in(op, *a, x.ndim())?;
                    x.ty()
                        .shape
                        .iter()
                        .enumerate()
                        .filter(|(d, _)| d != a)
                        .map(|(_, s)| *s)
                        .collect()
                }
                None => StaticShape::new(),
            };
            one(TensorType {
                dtype: DType::I64,
                shape,
            })
        }
        Op::DimShuffle { order } => {
            arity(op, inputs, 1)?;
            let x = &inputs[0];
            let mut seen: SmallVec<[bool; 4]> = smallvec![false; x.ndim()];
            for &a in order.iter().flatten() {
                axis_in(op, a, x.ndim())?;
                if std::mem::replace(&mut seen[a], true) {
                    return Err(GraphError::invalid(op, format!("axis {a} appears twice")));
                }
            }
            for (d, s) in seen.iter().enumerate() {
                if !s && x.ty().shape[d] != Some(1) {
                    return Err(GraphError::invalid(
                        op,
                        format!(
                            "cannot drop dimension {d} of {}: only dimensions of static extent 1 can be dropped",
                            x.describe()
                        ),
                    ));
                }
            }
            let shape = order
                .iter()
                .map(|o| o.map_or(Some(1), |a| x.ty().shape[a]))
                .collect();
            one(TensorType {
                dtype: x.dtype(),
                shape,
            })
        }
        Op::Reshape { ndim } => {
            arity(op, inputs, 2)?;
            let (x, s) = (&inputs[0], &inputs[1]);
            int_vector(op, s, Some(*ndim))?;
            if s.ty().shape[0].is_none() {
                return Err(GraphError::shape(
                    op,
                    format!("the shape {} must have a static length", s.describe()),
                ));
            }
            let mut shape: StaticShape = smallvec![None; *ndim];
            if let Some(entries) = const_entries(s) {
                let total: Option<usize> = x.ty().shape.iter().copied().product();
                if entries.iter().filter(|e| **e == Some(-1)).count() > 1 {
                    return Err(GraphError::invalid(
                        op,
                        "can only specify one unknown dimension (-1)",
                    ));
                }
                for (d, e) in entries.iter().enumerate() {
                    shape[d] = match e {
                        Some(v) if *v >= 0 => Some(*v as usize),
                        Some(-1) => None,
                        Some(v) => {
                            return Err(GraphError::invalid(
                                op,
                                format!("negative extent {v} in the new shape"),
                            ));
                        }
                        None => None,
                    };
                }
                let known: Option<usize> = entries
                    .iter()
                    .map(|e| e.filter(|v| *v >= 0).map(|v| v as usize))
                    .product();
                let minus = entries.iter().position(|e| *e == Some(-1));
                match (total, known, minus) {
                    (Some(t), Some(k), None) if t != k => {
                        return Err(GraphError::shape(
                            op,
                            format!(
                                "cannot reshape {} of size {t} into a shape of size {k}",
                                x.describe()
                            ),
                        ));
                    }
                    (Some(t), _, Some(m)) => {
                        let rest: Option<usize> = entries
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| *i != m)
                            .map(|(_, e)| e.map(|v| v as usize))
                            .product();
                        if let Some(r) = rest {
                            if r == 0 || t % r != 0 {
                                return Err(GraphError::shape(
                                    op,
                                    format!(
                                        "cannot reshape {} of size {t} into a shape with -1 and known size {r}",
                                        x.describe()
                                    ),
                                ));
                            }
                            shape[m] = Some(t / r);
                        }
                    }
                    _ => {}
                }
            }
            one(TensorType {
                dtype: x.dtype(),
                shape,
            })
        }
        Op::Shape => {
            arity(op, inputs, 1)?;
            one(TensorType::new(DType::I64, &[Some(inputs[0].ndim())]))
        }
        Op::ShapeI(i) => {
            arity(op, inputs, 1)?;
            axis_in(op, *i, inputs[0].ndim())?;
            one(TensorType::scalar(DType::I64))
        }
        Op::SpecifyShape(spec) => {
            arity(op, inputs, 1)?;
            let x = &inputs[0];
            if spec.len() != x.ndim() {
                return Err(GraphError::rank(op, x, spec.len().to_string()));
            }
            let mut shape = x.ty().shape.clone();
            for (d, (have, want)) in shape.iter_mut().zip(spec).enumerate() {
                match (*have, *want) {
                    (Some(h), Some(w)) if h != w => {
                        return Err(GraphError::shape(
                            op,
                            format!(
                                "{} has static extent {h} in dimension {d}, specified {w}",
                                x.describe()
                            ),
                        ));
                    }
                    (None, w) => *have = w,
                    _ => {}
                }
            }
            one(TensorType {
                dtype: x.dtype(),
                shape,
            })
        }
        Op::Alloc { ndim } => {
            arity(op, inputs, ndim + 1)?;
            let v = &inputs[0];
            if v.ndim() > *ndim {
                return Err(GraphError::rank(op, v, format!("at most {ndim}")));
            }
            for d in &inputs[1..] {
                int_scalar(op, d)?;
            }
            let shape: StaticShape = inputs[1..]
                .iter()
                .map(|d| d.const_int().map(|n| n.max(0) as usize))
                .collect();
            if let Some(d) = inputs[1..]
                .iter()
                .find(|d| d.const_int().is_some_and(|n| n < 0))
            {
                return Err(GraphError::invalid(
                    op,
                    format!("negative extent {}", d.describe()),
                ));
            }
            let lead = ndim - v.ndim();
            for (i, vs) in v.ty().shape.iter().enumerate() {
                if let (Some(a), Some(b)) = (*vs, shape[lead + i])
                    && a != 1
                    && a != b
                {
                    return Err(GraphError::shape(
                        op,
                        format!(
                            "{} cannot be broadcast to extent {b} in dimension {}",
                            v.describe(),
                            lead + i
                        ),
                    ));
                }
            }
            one(TensorType {
                dtype: v.dtype(),
                shape,
            })
        }
        Op::Arange(dt) => {
            arity(op, inputs, 3)?;
            for v in inputs {
                if v.ndim() != 0 {
                    return Err(GraphError::rank(op, v, "0"));
                }
            }
            let c = |v: &Var| v.constant_value().and_then(|t| t.item::<f64>());
            let len = match (c(&inputs[0]), c(&inputs[1]), c(&inputs[2])) {
                (_, _, Some(0.0)) => {
                    return Err(GraphError::invalid(op, "arange step cannot be zero"));
                }
                (Some(a), Some(b), Some(s)) => Some(((b - a) / s).ceil().max(0.0) as usize),
                _ => None,
            };
            one(TensorType::new(*dt, &[len]))
        }
        Op::Eye(dt) => {
            arity(op, inputs, 3)?;
            for v in inputs {
                int_scalar(op, v)?;
            }
            let c = |v: &Var| v.const_int().map(|n| n.max(0) as usize);
            one(TensorType::new(*dt, &[c(&inputs[0]), c(&inputs[1])]))
        }
        Op::MakeVector(dt) => {
            for v in inputs {
                if v.ndim() != 0 {
                    return Err(GraphError::rank(op, v, "0"));
                }
            }
            one(TensorType::new(*dt, &[Some(inputs.len())]))
        }
        Op::Join { axis } => {
            if inputs.is_empty() {
                return Err(GraphError::Arity {
                    op: op.to_string(),
                    expected: "at least 1".into(),
                    got: 0,
                });
            }
            let ndim = inputs[0].ndim();
            axis_in(op, *axis, ndim)?;
            let mut shape = inputs[0].ty().shape.clone();
            shape[*axis] = Some(0);
            for v in inputs {
                if v.ndim() != ndim {
                    return Err(GraphError::rank(op, v, ndim.to_string()));
                }
                for d in 0..ndim {
                    let e = v.ty().shape[d];
                    if d == *axis {
                        shape[d] = match (shape[d], e) {
                            (Some(a), Some(b)) => Some(a + b),
                            _ => None,
                        };
                    } else {
                        match (shape[d], e) {
                            (Some(a), Some(b)) if a != b => {
                                return Err(GraphError::shape(
                                    op,
                                    format!(
                                        "{} has extent {b} in dimension {d}, the others {a}",
                                        v.describe()
                                    ),
                                ));
                            }
                            (None, Some(b)) => shape[d] = Some(b),
                            _ => {}
                        }
                    }
                }
            }
            let dtype = inputs
                .iter()
                .map(Var::dtype)
                .reduce(result_type)
                .unwrap_or(DType::F64);
            one(TensorType { dtype, shape })
        }
        Op::Split { axis, n } => {
            arity(op, inputs, 2)?;
            let (x, sizes) = (&inputs[0], &inputs[1]);
            axis_in(op, *axis, x.ndim())?;
            int_vector(op, sizes, Some(*n))?;
            let consts = const_entries(sizes);
            if let (Some(c), Some(total)) = (&consts, x.ty().shape[*axis])
                && c.iter().all(Option::is_some)
            {
                let sum: i64 = c.iter().flatten().sum();
                if sum != total as i64 || c.iter().flatten().any(|v| *v < 0) {
                    return Err(GraphError::shape(
                        op,
                        format!(
                            "split sizes {c:?} do not add up to extent {total} of {}",
                            x.describe()
                        ),
                    ));
                }
            }
            Ok((0..*n)
                .map(|i| {
                    let mut shape = x.ty().shape.clone();
                    shape[*axis] = consts
                        .as_ref()
                        .and_then(|c| c[i])
                        .map(|v| v.max(0) as usize);
                    TensorType {
                        dtype: x.dtype(),
                        shape,
                    }
                })
                .collect())
        }
        Op::Subtensor(spec) => {
            if inputs.is_empty() {
                return Err(GraphError::Arity {
                    op: op.to_string(),
                    expected: "at least 1".into(),
                    got: 0,
                });
            }
            let x = &inputs[0];
            let shape = subtensor_shape(op, x, spec, &inputs[1..])?;
            one(TensorType {
                dtype: x.dtype(),
                shape,
            })
        }
        Op::IncSubtensor { index, .. } => {
            if inputs.len() < 2 {
                return Err(GraphError::Arity {
                    op: op.to_string(),
                    expected: "at least 2".into(),
                    got: inputs.len(),
                });
            }
            let (x, y) = (&inputs[0], &inputs[1]);
            let region = subtensor_shape(op, x, index, &inputs[2..])?;
            check_fits(op, y, &region)?;
            one(x.ty().clone())
        }
        Op::Take { axis } => {
            arity(op, inputs, 2)?;
            let (x, i) = (&inputs[0], &inputs[1]);
            axis_in(op, *axis, x.ndim())?;
            if !i.dtype().is_int() {
                return Err(GraphError::dtype(op, i, "an integer type (index arrays)"));
            }
            one(TensorType {
                dtype: x.dtype(),
                shape: take_shape(x, i, *axis),
            })
        }
        Op::IncTake { axis, .. } => {
            arity(op, inputs, 3)?;
            let (x, y, i) = (&inputs[0], &inputs[1], &inputs[2]);
            axis_in(op, *axis, x.ndim())?;
            if !i.dtype().is_int() {
                return Err(GraphError::dtype(op, i, "an integer type (index arrays)"));
            }
            check_fits(op, y, &take_shape(x, i, *axis))?;
            one(x.ty().clone())
        }
        Op::Composite(g) => composite_types(op, g, inputs),
        Op::FusedReduce { op: r, axes, body } => {
            let program = composite_types(op, body, inputs)?;
            let [value] = program.as_slice() else {
                return Err(GraphError::invalid(op, "the program must have one output"));
            };
            one(reduce_type(op, *r, axes, value)?)
        }
        Op::GradMarker(m) => {
            let n = if *m == crate::GradMarker::Clip { 3 } else { 1 };
            arity(op, inputs, n)?;
            for bound in &inputs[1..] {
                if bound.ndim() != 0 {
                    return Err(GraphError::rank(op, bound, "0 (a scalar bound)"));
                }
            }
            one(inputs[0].ty().clone())
        }
        Op::MatMul => {
            arity(op, inputs, 2)?;
            matmul(op, &inputs[0], &inputs[1])
        }
        Op::FusedMatMul { body } => fused_matmul(op, body, inputs),
        Op::OpFromGraph(o) => {
            crate::inner::check_args(op, inputs, o.body.input_types())?;
            Ok(o.body.outputs().iter().map(|v| v.ty().clone()).collect())
        }
        Op::Scan(s) => Ok(crate::scan::infer(op, s, inputs)?.into()),
        Op::IfElse(b) => {
            let Some((cond, args)) = inputs.split_first() else {
                return Err(GraphError::Arity {
                    op: op.to_string(),
                    expected: "at least 1 (the condition)".into(),
                    got: 0,
                });
            };
            if cond.ndim() != 0 {
                return Err(GraphError::rank(op, cond, "0 (a scalar condition)"));
            }
            crate::inner::check_args(op, args, b.then_branch.input_types())?;
            crate::inner::check_args(op, args, b.else_branch.input_types())?;
            b.then_branch
                .outputs()
                .iter()
                .zip(b.else_branch.outputs())
                .enumerate()
                .map(|(i, (t, e))| crate::inner::join_branch_types(op, i, t, e))
                .collect()
        }
        Op::Linalg(l) => crate::linalg::infer(l, inputs),
        Op::Random(r) => crate::random::infer(r, op, inputs),
        Op::Extra(e) => crate::extra::infer(e, op, inputs),
        Op::CheckAndRaise(_) => crate::check::infer(op, inputs),
    }
}
