//! Epilogue fusion, a step of the `fusion` pass:
//!
//! `// f(a @ b, e) == MatMul{then=f(i0, i1)}(a, b, e)` where nothing else reads `a @ b`.
//!
//! A matrix product (two float matrices) whose only reader is an elementwise node (an
//! `Elemwise`, or a `Composite` built by elementwise fusion just before) over it and operands
//! that broadcast to it (a bias row or column, scalars) becomes one [`Op::FusedMatMul`] node
//! whose body is the elementwise program with the product as placeholder 0. Every backend then
//! applies the program in place to cache-sized panels of rows of the product, instead of as a
//! separate node with its own output. The decision is made here once, so the backends only
//! follow it (and a kernel that can apply it inside the product's tiles needs no other
//! change), and `debugprint` and `OXTENSOR_DUMP_PASS` show it.
//!
//! Not fused: a product that is a graph output or has another reader (it must be stored
//! anyway), batched or vector products, complex or integer products, and programs whose value
//! changes the product's dtype or broadcasts it to a larger shape.

use super::fused_reduce::{carry, program, read_counts};
use crate::RewriteError;
use oxtensor_graph::{FrozenGraph, Node, Op, TensorType, Var, toposort, with_site};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// The matrix product `node` (single output, elementwise) reads and may absorb: a float
/// matrix·matrix `MatMul` read by nothing else (`reads` counts every read and graph output).
fn fusable_product(node: &Node, reads: &FxHashMap<u64, usize>) -> Option<Var> {
    if node.types().len() != 1 {
        return None;
    }
    let mut products = node.inputs().iter().filter(
        |v| matches!(v.owner(), Some((Op::MatMul, [a, b])) if a.ndim() == 2 && b.ndim() == 2),
    );
    let p = products.next()?.clone();
    // One product per node: a second one stays a separate kernel.
    if products.any(|q| *q != p) || !p.dtype().is_float() || p.dtype().is_complex() {
        return None;
    }
    let uses = node.inputs().iter().filter(|v| **v == p).count();
    (reads.get(&p.node().id()) == Some(&uses)).then_some(p)
}

/// The `FusedMatMul` computing `node`'s value from the product `p` and `node`'s other inputs
/// (already rebuilt: `new_var` maps old variables to new ones).
fn fused(node: &Arc<Node>, p: &Var, new_var: impl Fn(&Var) -> Var) -> Option<Var> {
    let body = program(node, 0)?;
    let others: Vec<Var> = node.inputs().iter().fold(Vec::new(), |mut acc, v| {
        if v != p && !acc.contains(v) {
            acc.push(v.clone());
        }
        acc
    });
    if others.iter().any(|v| v.ndim() != 2) {
        return None;
    }
    let scalar = |v: &Var| Var::input(None, TensorType::scalar(v.dtype()));
    let product = scalar(p);
    let other_scalars: Vec<Var> = others.iter().map(scalar).collect();
    let args: Vec<Var> = node
        .inputs()
        .iter()
        .map(|v| match others.iter().position(|o| o == v) {
            Some(k) => other_scalars[k].clone(),
            None => product.clone(),
        })
        .collect();
    let value = body.instantiate(&args).ok()?;
    let mut inputs = vec![product];
    inputs.extend(other_scalars);
    let body = FrozenGraph::freeze(&inputs, &value).ok()?;
    let (Some((Op::MatMul, [a, b])), old) = (p.owner(), Var::output_of(node, 0)) else {
        return None;
    };
    let mut operands = vec![new_var(a), new_var(b)];
    operands.extend(others.iter().map(new_var));
    with_site(Arc::from(old.site().to_string()), || {
        Var::apply1(Op::FusedMatMul { body }, &operands)
    })
    .ok()
    .filter(|new| crate::type_fits(&old, new))
}

/// Replaces each elementwise node that is the only reader of a matrix product by an
/// [`Op::FusedMatMul`] (see the module documentation); returns the new outputs, in order, and
/// how many products were fused.
pub(crate) fn fuse_epilogues(outputs: &[Var]) -> Result<(Vec<Var>, usize), RewriteError> {
    let order = toposort(outputs);
    let reads = read_counts(&order, outputs);
    let mut memo: FxHashMap<Var, Var> = FxHashMap::default();
    let mut fused_count = 0;
    for node in &order {
        let Some(op) = node.op() else {
            continue;
        };
        let new_var = |v: &Var| memo.get(v).cloned().unwrap_or(v.clone());
        let replacement = match op {
            Op::Elemwise(_) | Op::Composite(_) => {
                fusable_product(node, &reads).and_then(|p| fused(node, &p, new_var))
            }
            _ => None,
        };
        if let Some(new) = replacement {
            fused_count += 1;
            memo.insert(Var::output_of(node, 0), new);
            continue;
        }
        carry(node, op, &mut memo)?;
    }
    let new_outputs = outputs
        .iter()
        .map(|o| memo.get(o).cloned().unwrap_or(o.clone()))
        .collect();
    Ok((new_outputs, fused_count))
}
