//! The shape work a staged loop does once per call, before the loop (`crate::staged`): the
//! params (extents and the arithmetic on them, computed with the interpreter's kernels, so
//! they are the numbers the interpreter's loop would use), reshaped extents, and the
//! iteration shapes and strides of loop nests.

use crate::emit::{Nest, StagedLoop};
use crate::recurrence::c_strides;
use crate::staged::Layout;
use oxtensor_data::Tensor;
use oxtensor_graph::{NodeKind, Op, Var};
use oxtensor_runtime::eval_node;

/// The value of param `var`, whose node reads the values `args` (`None`: a constant input):
/// a constant, an extent of a laid-out value, or the node's kernel on the params it reads.
/// `None` when the kernel fails (the interpreter's loop then reports it).
pub(crate) fn param(
    var: &Var,
    args: &[Option<usize>],
    known: &[Option<Layout>],
    params: &[Option<Tensor>],
) -> Option<Tensor> {
    let extents = |x: &Option<usize>| -> Option<Vec<usize>> {
        Some(known.get((*x)?)?.as_ref()?.shape.clone())
    };
    match (var.node().kind(), var.owner()) {
        (NodeKind::Constant(c), _) => Some(c.clone()),
        (_, Some((Op::ShapeI(i), _))) => {
            let e = *extents(args.first()?)?.get(*i)?;
            Some(Tensor::scalar(i64::try_from(e).ok()?))
        }
        (_, Some((Op::Shape, _))) => {
            let e = extents(args.first()?)?;
            let e: Vec<i64> = e.iter().map(|&d| d as i64).collect();
            Tensor::from_slice(&e, &[e.len()]).ok()
        }
        (_, Some((_, inputs))) => {
            let tensors = args
                .iter()
                .zip(inputs)
                .map(|(a, v)| match (a, v.node().kind()) {
                    (Some(x), _) => params.get(*x)?.clone(),
                    (None, NodeKind::Constant(c)) => Some(c.clone()),
                    _ => None,
                })
                .collect::<Option<Vec<Tensor>>>()?;
            let refs: Vec<&Tensor> = tensors.iter().collect();
            eval_node(var.node(), &refs)
                .ok()?
                .into_iter()
                .nth(var.index())
        }
        _ => None,
    }
}

/// The extents a `Reshape` of a value laid out as `base` to `shape` (an integer vector, at
/// most one −1) gives, or `None` when `base` is not in C order or the element counts differ
/// (the interpreter's loop then reports it).
pub(crate) fn reshaped(base: &Layout, shape: &Tensor) -> Option<Vec<usize>> {
    let c_order = c_strides(&base.shape);
    let in_order = base
        .shape
        .iter()
        .zip(base.strides.iter().zip(&c_order))
        .all(|(&e, (s, c))| e == 1 || s == c);
    if !in_order || shape.ndim() != 1 {
        return None;
    }
    let n: usize = base.shape.iter().product();
    let wanted = shape.to_vec_as::<i64>();
    let free = wanted.iter().filter(|&&e| e == -1).count();
    let known = wanted
        .iter()
        .filter(|&&e| e != -1)
        .map(|&e| usize::try_from(e).ok())
        .collect::<Option<Vec<usize>>>()?;
    let product: usize = known.iter().product();
    let fill = match free {
        0 if product == n => 0,
        1 if product > 0 && n.is_multiple_of(product) => n / product,
        _ => return None,
    };
    Some(
        wanted
            .iter()
            .map(|&e| if e == -1 { fill } else { e as usize })
            .collect(),
    )
}

/// The iteration shape of nest `n`: an `Alloc`'s extents, else the extents its arguments
/// broadcast to; `None` when an argument does not broadcast to it (for an elementwise op or
/// a reduction, only dimensions of static extent 1 broadcast, as in the interpreter).
pub(crate) fn iteration(
    p: &StagedLoop,
    n: &Nest,
    known: &[Option<Layout>],
    params: &[Option<Tensor>],
) -> Option<Vec<usize>> {
    let r = n.rank;
    let shape: Vec<usize> = match &n.alloc {
        Some(dims) => dims
            .iter()
            .map(|&d| {
                let t = params.get(d)?.as_ref()?;
                (t.numel() == 1)
                    .then(|| t.to_vec_as::<i64>())
                    .and_then(|v| usize::try_from(*v.first()?).ok())
            })
            .collect::<Option<Vec<usize>>>()?,
        None => {
            let mut shape = vec![1; r];
            for &a in &n.args {
                let l = known.get(a)?.as_ref()?;
                let lead = r.checked_sub(l.shape.len())?;
                for (k, &e) in l.shape.iter().enumerate() {
                    if e != 1 {
                        shape[lead + k] = e;
                    }
                }
            }
            shape
        }
    };
    for &a in &n.args {
        let l = known.get(a)?.as_ref()?;
        let lead = r.checked_sub(l.shape.len())?;
        for (k, &e) in l.shape.iter().enumerate() {
            let static_one = p.values[a].ty.shape.get(k) == Some(&Some(1));
            if e != shape[lead + k] && !(e == 1 && (n.alloc.is_some() || static_one)) {
                return None;
            }
        }
    }
    Some(shape)
}

/// The entries of `d` of nest `n` (see [`Nest::at`]): its iteration extents, each argument's
/// strides (0 where it broadcasts), and the outputs' strides (0 along reduced axes).
pub(crate) fn nest_dims(
    p: &StagedLoop,
    n: &Nest,
    known: &[Layout],
    params: &[Option<Tensor>],
) -> Option<Vec<i64>> {
    let some: Vec<Option<Layout>> = known.iter().cloned().map(Some).collect();
    let shape = iteration(p, n, &some, params)?;
    let r = n.rank;
    let mut numbers: Vec<i64> = shape.iter().map(|&e| e as i64).collect();
    for &a in &n.args {
        let l = known.get(a)?;
        let lead = r.checked_sub(l.shape.len())?;
        numbers.extend((0..r).map(|d| match d.checked_sub(lead) {
            Some(k) if l.shape[k] != 1 => l.strides[k] as i64,
            _ => 0,
        }));
    }
    let out = known.get(*n.outs.first()?)?;
    let mut out_strides = out.strides.iter();
    for d in 0..r {
        let reduced = n.reduce.as_ref().is_some_and(|(_, axes)| axes.contains(&d));
        numbers.push(match reduced {
            true => 0,
            false => *out_strides.next()? as i64,
        });
    }
    Some(numbers)
}

/// Whether the kernel of `p` computes what the interpreter's loop does when some of its values
/// laid out as `known` have no elements: every stage is then an elementwise program, a loop
/// nest, a gather, a matrix product or a check, whose loops run over extents (0 runs no
/// iteration, and an empty reduction writes its identity, as the interpreter's kernel does);
/// no value is a view at positions (which an empty dimension has none of) or a reshape; and
/// no reduction without an identity (`Max`, `Min`) reduces an empty extent, which is an error
/// the interpreter's loop reports.
pub(crate) fn empty_values_ok(p: &StagedLoop, known: &[Layout], params: &[Option<Tensor>]) -> bool {
    use crate::emit::{Stage, ValueKind};
    let views = p.values.iter().all(|v| {
        !matches!(
            v.kind,
            ValueKind::Indexed { .. } | ValueKind::Reshape { .. }
        )
    });
    let some: Vec<Option<Layout>> = known.iter().cloned().map(Some).collect();
    let stages = p.stages.iter().all(|st| match st {
        Stage::Elem { .. } | Stage::Gather { .. } | Stage::MatMul { .. } | Stage::Check { .. } => {
            true
        }
        Stage::Nest(n) => match &n.reduce {
            Some((oxtensor_graph::ReduceOp::Max | oxtensor_graph::ReduceOp::Min, axes)) => {
                iteration(p, n, &some, params)
                    .is_some_and(|shape| axes.iter().all(|&a| shape.get(a).is_some_and(|&e| e > 0)))
            }
            _ => true,
        },
        _ => false,
    });
    views && stages
}
