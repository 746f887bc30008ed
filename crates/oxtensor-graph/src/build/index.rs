//! NumPy-style indexing: basic indices and slices become a `Subtensor` view, `None` inserts
//! axes, an integer array on one axis becomes a `Take`; `set_subtensor`/`inc_subtensor` turn an
//! indexing result back into its functional update.

use super::{Built, cast, dimshuffle, norm_axis};
use crate::{GraphError, IndexEntry, IndexSpec, Op, Var};
use oxtensor_data::DType;

/// One entry of an index expression `x[...]`.
#[derive(Clone, Debug)]
pub enum Idx {
    /// An integer scalar (removes the dimension) or an integer array (advanced indexing).
    At(Var),
    /// `start:stop:step`, each bound optional (integer scalars).
    Slice(Option<Var>, Option<Var>, Option<Var>),
    /// `None`/`np.newaxis`: a new axis of extent 1.
    NewAxis,
    /// `...`: as many full slices as needed.
    Ellipsis,
}

impl Idx {
    /// An integer-constant index.
    #[track_caller]
    pub fn int(i: i64) -> Idx {
        Idx::At(Var::int_constant(i))
    }

    /// A slice with constant bounds.
    #[track_caller]
    pub fn range(start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> Idx {
        Idx::Slice(
            start.map(Var::int_constant),
            stop.map(Var::int_constant),
            step.map(Var::int_constant),
        )
    }

    /// The full slice `:`.
    pub fn full() -> Idx {
        Idx::Slice(None, None, None)
    }

    fn is_full(&self) -> bool {
        matches!(self, Idx::Slice(None, None, None))
    }
}

fn index_error(x: &Var, message: impl Into<String>) -> GraphError {
    GraphError::Invalid {
        op: "Subtensor".into(),
        message: format!("{} (indexing {})", message.into(), x.describe()),
    }
}

fn scalar_index(x: &Var, v: &Var) -> Built {
    if v.ndim() != 0 || !(v.dtype().is_int()) {
        return Err(index_error(
            x,
            format!("indices must be integer scalars, got {}", v.describe()),
        ));
    }
    cast(v, DType::I64)
}

/// Expands `...` and checks the index length; returns the entries without `Ellipsis`.
fn expand(x: &Var, idx: &[Idx]) -> Result<Vec<Idx>, GraphError> {
    let ellipses = idx.iter().filter(|i| matches!(i, Idx::Ellipsis)).count();
    if ellipses > 1 {
        return Err(index_error(
            x,
            "an index can only have a single ellipsis ('...')",
        ));
    }
    let consuming = idx
        .iter()
        .filter(|i| matches!(i, Idx::At(_) | Idx::Slice(..)))
        .count();
    if consuming > x.ndim() {
        return Err(index_error(
            x,
            format!(
                "too many indices: {} for a tensor of rank {}",
                consuming,
                x.ndim()
            ),
        ));
    }
    let mut out = Vec::new();
    for i in idx {
        if let Idx::Ellipsis = i {
            out.extend((0..x.ndim() - consuming).map(|_| Idx::full()));
        } else {
            out.push(i.clone());
        }
    }
    Ok(out)
}

/// `x[idx]`: basic indexing (a view), `None` axes, or one integer array on one axis.
#[track_caller]
pub fn subtensor(x: &Var, idx: &[Idx]) -> Built {
    let idx = expand(x, idx)?;
    let arrays: Vec<usize> = idx
        .iter()
        .enumerate()
        .filter(|(_, i)| matches!(i, Idx::At(v) if v.ndim() > 0))
        .map(|(k, _)| k)
        .collect();
    if !arrays.is_empty() {
        return advanced(x, &idx, &arrays);
    }
    let mut spec = IndexSpec::new();
    let mut scalars = vec![x.clone()];
    // Output position of each entry, to place new axes afterwards.
    let mut new_axes = Vec::new();
    let mut out_dim = 0usize;
    for i in &idx {
        match i {
            Idx::At(v) => {
                spec.push(IndexEntry::Index);
                scalars.push(scalar_index(x, v)?);
            }
            Idx::Slice(a, b, c) => {
                spec.push(IndexEntry::Slice {
                    start: a.is_some(),
                    stop: b.is_some(),
                    step: c.is_some(),
                });
                for v in [a, b, c].into_iter().flatten() {
                    scalars.push(scalar_index(x, v)?);
                }
                out_dim += 1;
            }
            Idx::NewAxis => {
                new_axes.push(out_dim + new_axes.len());
            }
            Idx::Ellipsis => unreachable!("expanded above"),
        }
    }
    while spec.last().is_some_and(|e| {
        *e == IndexEntry::Slice {
            start: false,
            stop: false,
            step: false,
        }
    }) {
        spec.pop();
    }
    let base = if spec.is_empty() {
        x.clone()
    } else {
        Var::apply1(Op::Subtensor(spec), &scalars)?
    };
    if new_axes.is_empty() {
        return Ok(base);
    }
    let total = base.ndim() + new_axes.len();
    let mut next = 0;
    let order: Vec<Option<usize>> = (0..total)
        .map(|d| {
            if new_axes.contains(&d) {
                None
            } else {
                next += 1;
                Some(next - 1)
            }
        })
        .collect();
    dimshuffle(&base, &order)
}

fn advanced(x: &Var, idx: &[Idx], arrays: &[usize]) -> Built {
    let axis = arrays[0];
    let simple = arrays.len() == 1
        && idx
            .iter()
            .enumerate()
            .all(|(k, i)| k == axis || i.is_full());
    if !simple {
        return Err(index_error(
            x,
            "advanced (integer-array) indexing is supported on one axis with full slices elsewhere (x[idx], x[:, idx]); combine basic and advanced indexing in two steps",
        ));
    }
    let Idx::At(i) = &idx[axis] else {
        unreachable!("arrays holds At positions")
    };
    if !i.dtype().is_int() {
        return Err(index_error(
            x,
            format!(
                "index arrays must be of an integer type, got {}",
                i.describe()
            ),
        ));
    }
    take(x, i, axis as i64)
}

/// `np.take(x, indices, axis)` with out-of-range indices an error at run time.
#[track_caller]
pub fn take(x: &Var, indices: &Var, axis: i64) -> Built {
    let a = norm_axis(x, axis, x.ndim(), "take")?;
    Var::apply1(Op::Take { axis: a }, &[x.clone(), indices.clone()])
}

/// Functional `x[idx] = y` where `indexed` is the result of indexing `x` (PyTensor's
/// `set_subtensor(x[idx], y)`): returns the new tensor.
#[track_caller]
pub fn set_subtensor(indexed: &Var, y: &Var) -> Built {
    update(indexed, y, true)
}

/// Functional `x[idx] += y` (PyTensor's `inc_subtensor(x[idx], y)`); with an integer array,
/// repeated indices accumulate.
#[track_caller]
pub fn inc_subtensor(indexed: &Var, y: &Var) -> Built {
    update(indexed, y, false)
}

#[track_caller]
fn update(indexed: &Var, y: &Var, set: bool) -> Built {
    let (op, inputs) = indexed.owner().ok_or_else(|| not_indexed(indexed))?;
    let y = cast(y, indexed.dtype())?;
    match op {
        Op::Subtensor(spec) => {
            let mut args = vec![inputs[0].clone(), y];
            args.extend(inputs[1..].iter().cloned());
            Var::apply1(
                Op::IncSubtensor {
                    index: spec.clone(),
                    set,
                },
                &args,
            )
        }
        Op::Take { axis } => Var::apply1(
            Op::IncTake { axis: *axis, set },
            &[inputs[0].clone(), y, inputs[1].clone()],
        ),
        Op::DimShuffle { order } if order.iter().flatten().enumerate().all(|(i, &a)| i == a) => {
            // `x[idx, None]`: drop the inserted axes from `y` and update the indexed base.
            let (_, base) = indexed.owner().ok_or_else(|| not_indexed(indexed))?;
            let kept: Vec<usize> = order
                .iter()
                .enumerate()
                .filter(|(_, o)| o.is_some())
                .map(|(d, _)| d)
                .collect();
            let lead = indexed.ndim().saturating_sub(y.ndim());
            let y_order: Vec<Option<usize>> = kept
                .iter()
                .filter(|&&d| d >= lead)
                .map(|&d| Some(d - lead))
                .collect();
            let y_base = if y.ndim() == indexed.ndim() {
                dimshuffle(&y, &y_order)?
            } else {
                y
            };
            update(&base[0], &y_base, set)
        }
        _ => Err(not_indexed(indexed)),
    }
}

fn not_indexed(v: &Var) -> GraphError {
    GraphError::Invalid {
        op: "set_subtensor/inc_subtensor".into(),
        message: format!(
            "the first argument must be the result of indexing a tensor (x[idx]), got {}",
            v.describe()
        ),
    }
}
