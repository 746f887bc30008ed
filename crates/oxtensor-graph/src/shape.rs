//! Symbolic shapes: the extents of a variable as `int64` scalar graphs of the extents of the
//! graph's leaves, so a rewrite can replace `shape(f(x))` by arithmetic on `shape(x)`.
//! One exhaustive `match` over [`Op`]; where an op's extent has no simple closed form the rule
//! falls back to `Shape_i` of the output itself, which is always correct.

use crate::fgraph::toposort;
use crate::infer::const_entries;
use crate::{GraphError, Op, ScalarOp, Var};
use oxtensor_data::DType;
use rustc_hash::FxHashMap;

type Dims = Vec<Var>;

fn dim_of(v: &Var, d: usize) -> Result<Var, GraphError> {
    match v.ty().shape[d] {
        Some(n) => Ok(Var::int_constant(n as i64)),
        None => Var::apply1(Op::ShapeI(d), std::slice::from_ref(v)),
    }
}

fn leaf_dims(v: &Var) -> Result<Dims, GraphError> {
    (0..v.ndim()).map(|d| dim_of(v, d)).collect()
}

fn as_i64(v: &Var) -> Result<Var, GraphError> {
    if v.dtype() == DType::I64 {
        Ok(v.clone())
    } else {
        Var::apply1(
            Op::Elemwise(ScalarOp::Cast(DType::I64)),
            std::slice::from_ref(v),
        )
    }
}

fn add(a: &Var, b: &Var) -> Result<Var, GraphError> {
    match (a.const_int(), b.const_int()) {
        (Some(x), Some(y)) => Ok(Var::int_constant(x + y)),
        (Some(0), _) => Ok(b.clone()),
        (_, Some(0)) => Ok(a.clone()),
        _ => Var::apply1(Op::Elemwise(ScalarOp::Add), &[a.clone(), b.clone()]),
    }
}

/// Output extents of one node from its inputs' extents.
fn node_dims(
    op: &Op,
    inputs: &[Var],
    ins: &[&Dims],
    outputs: &[Var],
) -> Result<Vec<Dims>, GraphError> {
    let fallback = |o: &Var| leaf_dims(o);
    let own = |o: &Var, d: usize, sym: Var| -> Result<Var, GraphError> {
        match o.ty().shape[d] {
            Some(n) => Ok(Var::int_constant(n as i64)),
            None => Ok(sym),
        }
    };
    let out = &outputs[0];
    let single = |dims: Dims| Ok(vec![dims]);
    match op {
        Op::Elemwise(_) | Op::Composite(_) => {
            let dims = (0..out.ndim())
                .map(
                    |d| match inputs.iter().position(|v| v.ty().shape[d] != Some(1)) {
                        Some(k) => own(out, d, ins[k][d].clone()),
                        None => Ok(Var::int_constant(1)),
                    },
                )
                .collect::<Result<_, _>>()?;
            Ok(vec![dims; outputs.len()])
        }
        Op::FusedReduce { axes, .. } => {
            let rank = inputs.first().map_or(0, Var::ndim);
            let dims = (0..rank)
                .filter(|d| !axes.contains(d))
                .enumerate()
                .map(
                    |(j, d)| match inputs.iter().position(|v| v.ty().shape[d] != Some(1)) {
                        Some(k) => own(out, j, ins[k][d].clone()),
                        None => Ok(Var::int_constant(1)),
                    },
                )
                .collect::<Result<_, _>>()?;
            single(dims)
        }
        Op::Reduce { axes, .. } => single(
            ins[0]
                .iter()
                .enumerate()
                .filter(|(d, _)| !axes.contains(d))
                .map(|(_, v)| v.clone())
                .collect(),
        ),
        Op::ArgReduce { axis, .. } => match axis {
            Some(a) => single(
                ins[0]
                    .iter()
                    .enumerate()
                    .filter(|(d, _)| d != a)
                    .map(|(_, v)| v.clone())
                    .collect(),
            ),
            None => single(Vec::new()),
        },
        Op::DimShuffle { order } => single(
            order
                .iter()
                .map(|o| o.map_or_else(|| Var::int_constant(1), |a| ins[0][a].clone()))
                .collect(),
        ),
        Op::Reshape { .. } => match inputs[1].owner() {
            Some((Op::MakeVector(_), items)) if items.iter().all(|i| i.const_int() != Some(-1)) => {
                single(items.iter().map(as_i64).collect::<Result<_, _>>()?)
            }
            _ => match const_entries(&inputs[1]) {
                Some(e) if e.iter().all(|v| v.is_some_and(|v| v >= 0)) => {
                    single(e.iter().flatten().map(|&v| Var::int_constant(v)).collect())
                }
                _ => single(fallback(out)?),
            },
        },
        Op::Shape => single(vec![Var::int_constant(inputs[0].ndim() as i64)]),
        Op::ShapeI(_) => single(Vec::new()),
        Op::SpecifyShape(_) => single(
            (0..out.ndim())
                .map(|d| own(out, d, ins[0][d].clone()))
                .collect::<Result<_, _>>()?,
        ),
        Op::Alloc { .. } => single(inputs[1..].iter().map(as_i64).collect::<Result<_, _>>()?),
        Op::Arange(_) => single(fallback(out)?),
        Op::Eye(_) => single(vec![as_i64(&inputs[0])?, as_i64(&inputs[1])?]),
        Op::MakeVector(_) => single(vec![Var::int_constant(inputs.len() as i64)]),
        Op::Join { axis } => {
            let mut dims = ins[0].clone();
            for other in &ins[1..] {
                dims[*axis] = add(&dims[*axis], &other[*axis])?;
            }
            let dims = dims
                .into_iter()
                .enumerate()
                .map(|(d, v)| own(out, d, v))
                .collect::<Result<_, _>>()?;
            single(dims)
        }
        Op::Split { axis, .. } => outputs
            .iter()
            .map(|o| {
                let mut dims = ins[0].clone();
                dims[*axis] = dim_of(o, *axis)?;
                Ok(dims)
            })
            .collect(),
        Op::Subtensor(spec) => {
            let mut dims = Vec::new();
            let mut out_d = 0;
            for e in spec.iter() {
                if let crate::IndexEntry::Slice { .. } = e {
                    dims.push(dim_of(out, out_d)?);
                    out_d += 1;
                }
            }
            dims.extend(ins[0][spec.len()..].iter().cloned());
            single(dims)
        }
        Op::IncSubtensor { .. } | Op::IncTake { .. } | Op::GradMarker(_) => single(ins[0].clone()),
        // The extents come from inside the body (or the branch taken): each output's own.
        Op::OpFromGraph(_) | Op::IfElse(_) | Op::Scan(_) => outputs.iter().map(fallback).collect(),
        Op::Take { axis } => {
            let mut dims: Dims = ins[0][..*axis].to_vec();
            dims.extend(ins[1].iter().cloned());
            dims.extend(ins[0][axis + 1..].iter().cloned());
            single(dims)
        }
        // The product's shape: the epilogue's inputs broadcast to it (checked by `infer`).
        Op::FusedMatMul { .. } => single(vec![ins[0][0].clone(), ins[1][1].clone()]),
        Op::MatMul => {
            let (a, b) = (ins[0], ins[1]);
            let mut dims = Vec::new();
            let batch = out.ndim() - usize::from(a.len() >= 2) - usize::from(b.len() >= 2);
            for d in 0..batch {
                dims.push(dim_of(out, d)?);
            }
            if a.len() >= 2 {
                dims.push(a[a.len() - 2].clone());
            }
            if b.len() >= 2 {
                dims.push(b[b.len() - 1].clone());
            }
            single(dims)
        }
        Op::Linalg(_) => outputs.iter().map(fallback).collect(),
        Op::Random(_) => crate::random::shape(outputs),
        Op::Extra(e) => crate::extra::shape(e, ins, outputs),
        Op::CheckAndRaise(_) => Ok(crate::check::shape(ins)),
    }
}

/// The extents of `v` as `int64` scalar variables, built from the extents of the graph's leaves
/// where each op's rule allows (static extents become constants).
#[track_caller]
pub fn shape_of(v: &Var) -> Result<Vec<Var>, GraphError> {
    let mut memo: FxHashMap<Var, Dims> = FxHashMap::default();
    let get = |memo: &FxHashMap<Var, Dims>, x: &Var| -> Result<Dims, GraphError> {
        match memo.get(x) {
            Some(d) => Ok(d.clone()),
            None => leaf_dims(x),
        }
    };
    for node in toposort(std::slice::from_ref(v)) {
        let Some(op) = node.op() else { continue };
        let inputs = node.inputs();
        let in_dims: Vec<Dims> = inputs
            .iter()
            .map(|x| get(&memo, x))
            .collect::<Result<_, _>>()?;
        let refs: Vec<&Dims> = in_dims.iter().collect();
        let outputs: Vec<Var> = (0..node.types().len())
            .map(|i| Var::output_of(&node, i))
            .collect();
        let dims = node_dims(op, inputs, &refs, &outputs)?;
        for (o, d) in outputs.into_iter().zip(dims) {
            memo.insert(o, d);
        }
    }
    get(&memo, v)
}
