//! Static shapes of indexing: what `x[spec]` and `take` produce, and whether a value fits the
//! region an increment writes. Used by type inference ([`crate::infer`]).

use crate::index::{resolve_index, resolve_slice};
use crate::infer::int_scalar;
use crate::{GraphError, IndexEntry, Op, StaticShape, Var};

/// The static shape of `x` indexed by `spec` (integers drop an axis, slices keep it), checking
/// the index scalars' count and types and every index or slice known at build time.
pub(crate) fn subtensor_shape(
    op: &Op,
    x: &Var,
    spec: &[IndexEntry],
    scalars: &[Var],
) -> Result<StaticShape, GraphError> {
    if spec.len() > x.ndim() {
        return Err(GraphError::invalid(
            op,
            format!("too many indices ({}) for {}", spec.len(), x.describe()),
        ));
    }
    let needed: usize = spec.iter().map(|e| e.n_inputs()).sum();
    if scalars.len() != needed {
        return Err(GraphError::Arity {
            op: op.to_string(),
            expected: format!("{} index scalars", needed),
            got: scalars.len(),
        });
    }
    for s in scalars {
        int_scalar(op, s)?;
    }
    let mut out = StaticShape::new();
    let mut k = 0;
    for (d, e) in spec.iter().enumerate() {
        let dim = x.ty().shape[d];
        match *e {
            IndexEntry::Index => {
                if let (Some(n), Some(i)) = (dim, scalars[k].const_int()) {
                    resolve_index(n, i).map_err(|m| {
                        GraphError::invalid(op, format!("{m} (indexing {})", x.describe()))
                    })?;
                }
                k += 1;
            }
            IndexEntry::Slice { start, stop, step } => {
                let mut take = |present: bool| {
                    if present {
                        k += 1;
                        Some(scalars[k - 1].const_int())
                    } else {
                        None
                    }
                };
                let (a, b, c) = (take(start), take(stop), take(step));
                if c == Some(Some(0)) {
                    return Err(GraphError::invalid(op, "slice step cannot be zero"));
                }
                let all_known = [a, b, c].iter().all(|p| !matches!(p, Some(None)));
                let len = match dim {
                    Some(n) if all_known => Some(
                        resolve_slice(n, a.flatten(), b.flatten(), c.flatten())
                            .map_err(|m| GraphError::invalid(op, m))?
                            .len,
                    ),
                    _ => None,
                };
                out.push(len);
            }
        }
    }
    out.extend(x.ty().shape[spec.len()..].iter().copied());
    Ok(out)
}

/// The static shape of `take(x, i, axis)`: `x`'s axis replaced by `i`'s dimensions.
pub(crate) fn take_shape(x: &Var, i: &Var, axis: usize) -> StaticShape {
    let xs = &x.ty().shape;
    xs[..axis]
        .iter()
        .chain(i.ty().shape.iter())
        .chain(xs[axis + 1..].iter())
        .copied()
        .collect()
}

/// Checks that `y` broadcasts (NumPy rules, right-aligned) into a region of static shape `region`.
pub(crate) fn check_fits(op: &Op, y: &Var, region: &StaticShape) -> Result<(), GraphError> {
    if y.ndim() > region.len() {
        return Err(GraphError::rank(
            op,
            y,
            format!("at most {} (the indexed region's rank)", region.len()),
        ));
    }
    let lead = region.len() - y.ndim();
    for (d, ys) in y.ty().shape.iter().enumerate() {
        if let (Some(a), Some(b)) = (*ys, region[lead + d])
            && a != 1
            && a != b
        {
            return Err(GraphError::shape(
                op,
                format!(
                    "{} does not fit the indexed region of shape {region:?}",
                    y.describe()
                ),
            ));
        }
    }
    Ok(())
}
