//! [`einsum`](super::einsum) lowered to matrix products: each pairwise contraction of the
//! [contraction path](super::contraction_path) is one transpose and reshape per operand, one (batched) `matmul`, and one
//! reshape back. Indices used by one operand only are summed before any product, and a repeated
//! index within one operand takes that operand's diagonal. Gradients follow from the lowering.
//!
//! A dimension of static extent 1 broadcasts against a wider one of the same index, as in
//! NumPy, by being squeezed out of its operand before the contraction; extents unknown when the
//! graph is built must be equal across operands, as PyTensor assumes. Each pairwise contraction
//! checks that at run time (a `CheckAndRaise` raising `ValueError` that names the index and the
//! operands): merged into one `matmul` dimension, mismatched extents of equal product (1·3
//! against 3·1) would otherwise give a wrong result silently.

use super::parse::{Parsed, describe, err, parse};
use super::path::{OPTIMAL_MAX_OPERANDS, Optimize, UNKNOWN_EXTENT, contraction_path};
use crate::build::check::check_and_raise;
use crate::build::linalg::diagonal;
use crate::build::{
    Built, elemwise, matmul, reshape_sym, shape_i, specify_shape, squeeze, sum, transpose,
};
use crate::{Check, GraphError, ScalarOp, Var};
use std::collections::{BTreeSet, HashMap};

/// One term of the contraction: its labels (one per dimension), its value, and the original
/// operands multiplied into it (for error messages).
struct Term {
    labels: Vec<char>,
    x: Var,
    who: BTreeSet<usize>,
}

/// `einsum(subscripts, *ops)` with the contraction order `optimize`.
#[track_caller]
pub(super) fn lower(subscripts: &str, ops: &[Var], optimize: Optimize) -> Built {
    let ranks: Vec<usize> = ops.iter().map(Var::ndim).collect();
    let Parsed { terms, out } = parse(subscripts, &ranks)?;
    check_extents(&terms, ops)?;
    let all_static = ops.iter().all(|o| o.ty().shape.iter().all(Option::is_some));
    let strategy = match optimize {
        Optimize::Auto if !all_static => Optimize::RightToLeft,
        Optimize::Auto if ops.len() > OPTIMAL_MAX_OPERANDS => Optimize::Greedy,
        Optimize::Auto => Optimize::Optimal,
        other => other,
    };
    let path = contraction_path(strategy, &terms, &out, &search_extents(&terms, ops))?;
    let mut pairs: Vec<Term> = Vec::with_capacity(ops.len());
    for (k, (labels, x)) in squeeze_broadcast(&terms, ops)?.into_iter().enumerate() {
        let (labels, x) = take_diagonals(labels, x)?;
        pairs.push(Term {
            labels,
            x,
            who: BTreeSet::from([k]),
        });
    }
    // Indices that only one operand has, and the output does not, are summed first.
    for k in 0..pairs.len() {
        let elsewhere: BTreeSet<char> = out
            .iter()
            .chain(
                pairs
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != k)
                    .flat_map(|(_, t)| &t.labels),
            )
            .copied()
            .collect();
        let (labels, x) = sum_out(&pairs[k].labels, &pairs[k].x, &elsewhere)?;
        pairs[k].labels = labels;
        pairs[k].x = x;
    }
    for (i, j) in path {
        if i == j || i.max(j) >= pairs.len() {
            return Err(err(format!("invalid contraction step ({i}, {j})")));
        }
        let (first, second) = if i > j { (i, j) } else { (j, i) };
        let removed_first = pairs.remove(first);
        let removed_second = pairs.remove(second);
        let (a, b) = if i > j {
            (removed_first, removed_second)
        } else {
            (removed_second, removed_first)
        };
        let guarded = guard_shared_extents(&a, &b)?;
        let keep: BTreeSet<char> = out
            .iter()
            .chain(pairs.iter().flat_map(|t| &t.labels))
            .copied()
            .collect();
        let (labels, x) = contract(&a.labels, &guarded, &b.labels, &b.x, &keep)?;
        pairs.push(Term {
            labels,
            x,
            who: a.who.union(&b.who).copied().collect(),
        });
    }
    let Some(last) = pairs.pop().filter(|_| pairs.is_empty()) else {
        return Err(err("the contraction path left more than one term"));
    };
    let keep: BTreeSet<char> = out.iter().copied().collect();
    let (labels, mut x) = sum_out(&last.labels, &last.x, &keep)?;
    if labels != out {
        let order: Vec<i64> = out
            .iter()
            .map(|c| labels.iter().position(|l| l == c).unwrap_or(0) as i64)
            .collect();
        x = transpose(&x, Some(&order))?;
    }
    let shape = static_shape(&terms, ops, &out);
    if x.ty().shape.as_slice() != shape.as_slice() {
        x = specify_shape(&x, &shape)?;
    }
    Ok(x)
}

/// Raises unless the operands' static extents agree: one operand's repeated index must have
/// one extent (its diagonal), and across operands the known extents of an index other than 1
/// must be equal (1 broadcasts, as in NumPy).
fn check_extents(terms: &[Vec<char>], ops: &[Var]) -> Result<(), GraphError> {
    let mut wide: HashMap<char, (usize, usize)> = HashMap::new();
    for (k, (t, o)) in terms.iter().zip(ops).enumerate() {
        let mut mine: HashMap<char, usize> = HashMap::new();
        for (&c, s) in t.iter().zip(&o.ty().shape) {
            let Some(s) = *s else { continue };
            let first = *mine.entry(c).or_insert(s);
            if first != s {
                return Err(err(format!(
                    "operand {k} repeats the {} over dimensions of extents {first} and {s}; a \
                     repeated index takes a diagonal, which needs equal extents",
                    describe(c)
                )));
            }
            if s == 1 {
                continue;
            }
            let (size, j) = *wide.entry(c).or_insert((s, k));
            if size != s {
                return Err(err(format!(
                    "the {} has extent {size} in operand {j} but {s} in operand {k} (only an \
                     extent of 1 broadcasts)",
                    describe(c)
                )));
            }
        }
    }
    Ok(())
}

/// Each index's extent for the path search, as NumPy's `einsum_path` takes it: an operand's
/// static extent, a wider one replacing 1, [`UNKNOWN_EXTENT`] where unknown.
fn search_extents(terms: &[Vec<char>], ops: &[Var]) -> HashMap<char, usize> {
    let mut sizes: HashMap<char, usize> = HashMap::new();
    for (t, o) in terms.iter().zip(ops) {
        for (&c, s) in t.iter().zip(&o.ty().shape) {
            let s = s.unwrap_or(UNKNOWN_EXTENT);
            let e = sizes.entry(c).or_insert(s);
            if *e == 1 {
                *e = s;
            }
        }
    }
    sizes
}

/// Each operand without the dimensions of static extent 1 whose index another operand has with
/// an extent that is not statically 1: the operand is constant along them, so they broadcast
/// (all of a repeated index's dimensions must be 1 for its diagonal to be one element). An
/// extent unknown when the graph is built is not broadcast, as in PyTensor: it must match the
/// other operands' at run time.
#[track_caller]
fn squeeze_broadcast(
    terms: &[Vec<char>],
    ops: &[Var],
) -> Result<Vec<(Vec<char>, Var)>, GraphError> {
    let wide: BTreeSet<char> = terms
        .iter()
        .zip(ops)
        .flat_map(|(t, o)| t.iter().zip(&o.ty().shape).filter(|(_, s)| **s != Some(1)))
        .map(|(c, _)| *c)
        .collect();
    let mut out = Vec::with_capacity(ops.len());
    for (t, o) in terms.iter().zip(ops) {
        let shape = &o.ty().shape;
        let ones = |c: char| {
            wide.contains(&c) && t.iter().zip(shape).all(|(d, s)| *d != c || *s == Some(1))
        };
        let axes: Vec<i64> = (0..t.len())
            .filter(|&k| ones(t[k]))
            .map(|k| k as i64)
            .collect();
        if axes.is_empty() {
            out.push((t.clone(), o.clone()));
        } else {
            let labels = t.iter().copied().filter(|&c| !ones(c)).collect();
            out.push((labels, squeeze(o, Some(&axes))?));
        }
    }
    Ok(out)
}

/// `x` with each repeated index of `labels` reduced to its diagonal (moved last).
#[track_caller]
fn take_diagonals(mut labels: Vec<char>, mut x: Var) -> Result<(Vec<char>, Var), GraphError> {
    loop {
        let repeated = labels.iter().enumerate().find_map(|(p, c)| {
            labels[p + 1..]
                .iter()
                .position(|d| d == c)
                .map(|q| (p, p + 1 + q))
        });
        let Some((p, q)) = repeated else {
            return Ok((labels, x));
        };
        let c = labels[p];
        let mut order: Vec<i64> = (0..labels.len())
            .filter(|&d| d != p && d != q)
            .map(|d| d as i64)
            .collect();
        order.extend([p as i64, q as i64]);
        x = diagonal(&transpose(&x, Some(&order))?)?;
        labels = labels
            .iter()
            .enumerate()
            .filter(|&(d, _)| d != p && d != q)
            .map(|(_, &l)| l)
            .chain([c])
            .collect();
    }
}

/// `x` summed over the indices of `labels` not in `keep`.
#[track_caller]
fn sum_out(
    labels: &[char],
    x: &Var,
    keep: &BTreeSet<char>,
) -> Result<(Vec<char>, Var), GraphError> {
    let axes: Vec<i64> = (0..labels.len())
        .filter(|&k| !keep.contains(&labels[k]))
        .map(|k| k as i64)
        .collect();
    if axes.is_empty() {
        return Ok((labels.to_vec(), x.clone()));
    }
    let kept = labels
        .iter()
        .copied()
        .filter(|c| keep.contains(c))
        .collect();
    Ok((kept, sum(x, Some(&axes), false)?))
}

/// The product of `x`'s extents along `dims`: a constant where they are all static.
#[track_caller]
fn size(x: &Var, dims: std::ops::Range<usize>) -> Built {
    let shape = &x.ty().shape;
    let known: usize = dims.clone().filter_map(|d| shape[d]).product();
    let mut out = Var::int_constant(known as i64);
    for d in dims.filter(|&d| shape[d].is_none()) {
        let extent = shape_i(x, d)?;
        out = if known == 1 && out.constant_value().is_some() {
            extent
        } else {
            elemwise(ScalarOp::Mul, &[out, extent])?
        };
    }
    Ok(out)
}

/// The pairwise contraction of `a` (labels `ta`) and `b` (`tb`), keeping the labels in `keep`:
/// `(batch, free_a, summed) @ (batch, summed, free_b)` as one matmul, its result labelled
/// `batch + free_a + free_b`.
#[track_caller]
fn contract(
    ta: &[char],
    a: &Var,
    tb: &[char],
    b: &Var,
    keep: &BTreeSet<char>,
) -> Result<(Vec<char>, Var), GraphError> {
    let batch: Vec<char> = ta
        .iter()
        .copied()
        .filter(|c| tb.contains(c) && keep.contains(c))
        .collect();
    let summed: Vec<char> = ta
        .iter()
        .copied()
        .filter(|c| tb.contains(c) && !keep.contains(c))
        .collect();
    let free_a: Vec<char> = ta.iter().copied().filter(|c| !tb.contains(c)).collect();
    let free_b: Vec<char> = tb.iter().copied().filter(|c| !ta.contains(c)).collect();
    let order = |t: &[char], parts: [&[char]; 3]| -> Vec<i64> {
        parts
            .iter()
            .flat_map(|part| part.iter())
            .map(|c| t.iter().position(|l| l == c).unwrap_or(0) as i64)
            .collect()
    };
    let at = transpose(a, Some(&order(ta, [&batch, &free_a, &summed])))?;
    let bt = transpose(b, Some(&order(tb, [&batch, &summed, &free_b])))?;
    let (nb, nfa, ns) = (batch.len(), free_a.len(), summed.len());
    let mut lead = Vec::new();
    if nb > 0 {
        lead.push(size(&at, 0..nb)?);
    }
    let m = size(&at, nb..nb + nfa)?;
    let k = size(&at, nb + nfa..nb + nfa + ns)?;
    let n = size(&bt, nb + ns..bt.ndim())?;
    let am = reshape_sym(&at, &[lead.clone(), vec![m, k.clone()]].concat())?;
    let bm = reshape_sym(&bt, &[lead, vec![k, n]].concat())?;
    let prod = matmul(&am, &bm)?;
    let mut shape = (0..nb + nfa)
        .map(|d| shape_i(&at, d))
        .collect::<Result<Vec<_>, _>>()?;
    for d in nb + ns..bt.ndim() {
        shape.push(shape_i(&bt, d)?);
    }
    let labels = [batch, free_a, free_b].concat();
    Ok((labels, reshape_sym(&prod, &shape)?))
}

/// How a message names a term: the operand it is, or the operands multiplied into it.
fn who(operands: &BTreeSet<usize>) -> String {
    let ks: Vec<String> = operands.iter().map(usize::to_string).collect();
    match ks.as_slice() {
        [one] => format!("operand {one}"),
        _ => format!("the product of operands {}", ks.join(", ")),
    }
}

/// `a`'s value, checked at run time to have the extents of `b` along each index both have
/// where either extent is unknown when the graph is built (known extents were compared by
/// [`check_extents`]).
#[track_caller]
fn guard_shared_extents(a: &Term, b: &Term) -> Built {
    let mut x = a.x.clone();
    for (p, c) in a.labels.iter().enumerate() {
        let Some(q) = b.labels.iter().position(|d| d == c) else {
            continue;
        };
        if x.ty().shape[p].is_some() && b.x.ty().shape[q].is_some() {
            continue;
        }
        let check = Check::new(
            "ValueError",
            format!(
                "einsum: the {} has different extents in {} and {} (extents unknown when the \
                 graph is built must be equal; only a static extent of 1 broadcasts)",
                describe(*c),
                who(&a.who),
                who(&b.who)
            ),
        );
        let same = elemwise(ScalarOp::Eq, &[shape_i(&x, p)?, shape_i(&b.x, q)?])?;
        x = check_and_raise(&x, &[same], check)?;
    }
    Ok(x)
}

/// The result's static shape, which the symbolic reshapes of the lowering do not carry: an
/// index's extent other than 1 where an operand knows it, 1 where every operand knows it is 1
/// (a broadcastable dimension), unknown otherwise.
fn static_shape(terms: &[Vec<char>], ops: &[Var], out: &[char]) -> Vec<Option<usize>> {
    let mut wide: HashMap<char, usize> = HashMap::new();
    let mut unknown: BTreeSet<char> = BTreeSet::new();
    for (t, o) in terms.iter().zip(ops) {
        for (&c, s) in t.iter().zip(&o.ty().shape) {
            match *s {
                None => {
                    unknown.insert(c);
                }
                Some(1) => {}
                Some(n) => {
                    wide.insert(c, n);
                }
            }
        }
    }
    out.iter()
        .map(|c| match wide.get(c) {
            Some(&n) => Some(n),
            None if unknown.contains(c) => None,
            None => Some(1),
        })
        .collect()
}
