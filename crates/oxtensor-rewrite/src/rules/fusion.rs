//! Elementwise fusion (the `fusion` pass): maximal connected groups of `Elemwise` nodes (and
//! `Composite` nodes, which are inlined) become one `Composite` node, so the interpreter and the
//! backends make one pass over memory for the whole group.
//!
//! Unlike the rule sets, fusion is a whole-graph pass: it needs every node's users, and it runs
//! in time linear in the graph (one topological sort, one backward pass assigning groups, one
//! forward pass rebuilding). It runs last, after `specialize`, so the nodes it freezes into
//! inner graphs are already in their final (canonical, stabilized, specialized) form: inner
//! graphs are rewritten consistently with outer ones because they are made of rewritten nodes.
//!
//! # Groups
//!
//! The graph is walked from the outputs towards the inputs. A fusable node (a single-output
//! `Elemwise` or `Composite`) joins the group of its users when
//!
//! * it is not a graph output, and every one of its users is in that same group (otherwise its
//!   value would be computed once inside the Composite and again for the other users);
//! * its output broadcasts like the group's result (the same dimensions have static extent 1),
//!   so no value is recomputed per element of a broadcast dimension. Inputs of the group may
//!   still broadcast: a Composite broadcasts its inputs as `Elemwise` does.
//!
//! Otherwise it starts a group of its own. A group of one `Elemwise` node stays that node.
//!
//! # Inner graphs
//!
//! `// f(g(x), y) == Composite{f(g(i0), i1)}(x, y)`: the members' ops are applied to 0-d
//! placeholders, one per distinct outer input; constants that hold one value and broadcast
//! like scalars go inside as 0-d constants (looking through the `DimShuffle` padding their
//! rank); nested Composites are inlined. A `Reduce` of a fused node stays a `Reduce` of a
//! `Composite` (backends fuse the pair).

use crate::RewriteError;
use crate::driver::{PassStats, StopReason};
use crate::pattern::dimshuffle;
use indexmap::IndexMap;
use oxtensor_data::Tensor;
use oxtensor_graph::build;
use oxtensor_graph::{Node, Op, Site, TensorType, Var, toposort, with_site};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// No group.
const NONE: usize = usize::MAX;

/// A single-output elementwise node fusion can absorb.
fn fusable(node: &Node) -> bool {
    matches!(node.op(), Some(Op::Elemwise(_) | Op::Composite(_))) && node.types().len() == 1
}

/// Which dimensions of `ty` have static extent 1.
fn broadcast_pattern(ty: &TensorType) -> Vec<bool> {
    ty.shape.iter().map(|&d| d == Some(1)).collect()
}

/// The 0-d value of a constant that holds one element and broadcasts like a scalar (behind any
/// rank-padding `DimShuffle`s).
fn scalar_constant(v: &Var) -> Option<Tensor> {
    if let Some((_, inner)) = dimshuffle(v) {
        return scalar_constant(inner);
    }
    let t = v.constant_value()?;
    if t.numel() != 1 || t.shape().iter().any(|&d| d != 1) {
        return None;
    }
    t.reshape(&[]).ok()
}

/// The graph and its derived indexes.
struct Graph {
    order: Vec<Arc<Node>>,
    index: FxHashMap<u64, usize>,
}

impl Graph {
    /// The position in `order` of the node computing `v`, if it is an apply node.
    fn producer(&self, v: &Var) -> Option<usize> {
        v.owner()?;
        self.index.get(&v.node().id()).copied()
    }
}

/// Assigns each fusable node to a group; returns the group of each node (or [`NONE`]) and each
/// group's members in topological order (the last is the group's root).
fn assign_groups(g: &Graph, outputs: &[Var]) -> (Vec<usize>, Vec<Vec<usize>>) {
    let n = g.order.len();
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, node) in g.order.iter().enumerate() {
        for v in node.inputs() {
            if let Some(p) = g.producer(v)
                && users[p].last() != Some(&i)
            {
                users[p].push(i);
            }
        }
    }
    let is_output: FxHashSet<&Var> = outputs.iter().collect();
    let mut group = vec![NONE; n];
    let mut members: Vec<Vec<usize>> = Vec::new();
    let mut pattern: Vec<Vec<bool>> = Vec::new();
    for i in (0..n).rev() {
        let node = &g.order[i];
        if !fusable(node) {
            continue;
        }
        let out = Var::output_of(node, 0);
        let bp = broadcast_pattern(out.ty());
        let joined = match users[i].first() {
            Some(&u) if !is_output.contains(&out) => {
                let gid = group[u];
                (gid != NONE && users[i].iter().all(|&c| group[c] == gid) && pattern[gid] == bp)
                    .then_some(gid)
            }
            _ => None,
        };
        let gid = joined.unwrap_or_else(|| {
            members.push(Vec::new());
            pattern.push(bp);
            members.len() - 1
        });
        group[i] = gid;
        members[gid].push(i);
    }
    for m in &mut members {
        m.reverse();
    }
    (group, members)
}

/// The forward pass: rebuilds the graph with each group of two or more nodes as one Composite.
struct Rebuild<'g> {
    g: &'g Graph,
    group: Vec<usize>,
    members: Vec<Vec<usize>>,
    memo: FxHashMap<Var, Var>,
    fused: usize,
}

impl Rebuild<'_> {
    fn new_var(&self, v: &Var) -> Var {
        self.memo.get(v).cloned().unwrap_or_else(|| v.clone())
    }

    /// Node `i` rebuilt over the rewritten inputs.
    fn plain(&mut self, i: usize) -> Result<(), RewriteError> {
        let node = self.g.order[i].clone();
        let Some(op) = node.op() else {
            return Ok(());
        };
        let inputs: Vec<Var> = node.inputs().iter().map(|v| self.new_var(v)).collect();
        if inputs.as_slice() == node.inputs() {
            return Ok(());
        }
        let outs = Var::apply(op.clone(), &inputs).map_err(rebuild_error)?;
        for (k, w) in outs.into_iter().enumerate() {
            self.memo.insert(Var::output_of(&node, k), w);
        }
        Ok(())
    }

    /// The Composite of group `gid`, or `None` when it would not have the root's type.
    fn composite(&self, gid: usize) -> Result<Option<Var>, RewriteError> {
        let mut inner: FxHashMap<Var, Var> = FxHashMap::default();
        let mut leaves: IndexMap<Var, Var> = IndexMap::new();
        let mut root = None;
        for &m in &self.members[gid] {
            let node = &self.g.order[m];
            let mut args = Vec::with_capacity(node.inputs().len());
            for v in node.inputs() {
                let a = if let Some(x) = inner.get(v) {
                    x.clone()
                } else if let Some(c) = scalar_constant(v) {
                    Var::constant(c)
                } else {
                    let outer = self.new_var(v);
                    leaves
                        .entry(outer)
                        .or_insert_with(|| Var::input(None, TensorType::scalar(v.dtype())))
                        .clone()
                };
                args.push(a);
            }
            let value = match node.op() {
                Some(Op::Elemwise(s)) => Var::apply1(Op::Elemwise(*s), &args),
                Some(Op::Composite(fg)) => fg.instantiate(&args).map(|o| o[0].clone()),
                _ => return Ok(None),
            }
            .map_err(rebuild_error)?;
            let out = Var::output_of(node, 0);
            inner.insert(out.clone(), value.clone());
            root = Some((out, value));
        }
        let Some((out, value)) = root else {
            return Ok(None);
        };
        let (outer_inputs, inner_inputs): (Vec<Var>, Vec<Var>) = leaves.into_iter().unzip();
        if outer_inputs.is_empty() {
            return Ok(None);
        }
        // The Composite is attributed to the user's code that created the group's root.
        let site: Arc<str> = match out.site() {
            Site::External(s) => s.clone(),
            Site::Rust(loc) => Arc::from(format!("{}:{}", loc.file(), loc.line())),
        };
        let new = with_site(site, || {
            build::composite(&inner_inputs, &[value], &outer_inputs)
        })
        .map_err(rebuild_error)?
        .into_iter()
        .next();
        Ok(new.filter(|w| crate::type_fits(&out, w)))
    }

    fn run(&mut self) -> Result<(), RewriteError> {
        for i in 0..self.g.order.len() {
            let gid = self.group[i];
            if gid == NONE {
                self.plain(i)?;
                continue;
            }
            let members = &self.members[gid];
            if members.last() != Some(&i) {
                continue;
            }
            if members.len() == 1 {
                self.plain(i)?;
                continue;
            }
            match self.composite(gid)? {
                Some(w) => {
                    self.fused += 1;
                    self.memo.insert(Var::output_of(&self.g.order[i], 0), w);
                }
                None => {
                    for m in self.members[gid].clone() {
                        self.plain(m)?;
                    }
                }
            }
        }
        Ok(())
    }
}

fn rebuild_error(source: oxtensor_graph::GraphError) -> RewriteError {
    RewriteError::Rebuild {
        pass: "fusion",
        source,
    }
}

/// Fuses the elementwise groups of the graph of `outputs` (see the module documentation);
/// returns the new outputs, in order, and what happened (hits of `elemwise_fusion`: one per
/// Composite built).
pub fn fuse(outputs: &[Var]) -> Result<(Vec<Var>, PassStats), RewriteError> {
    let order = toposort(outputs);
    let index = order.iter().enumerate().map(|(i, n)| (n.id(), i)).collect();
    let graph = Graph { order, index };
    let (group, members) = assign_groups(&graph, outputs);
    let mut rebuild = Rebuild {
        g: &graph,
        group,
        members,
        memo: FxHashMap::default(),
        fused: 0,
    };
    rebuild.run()?;
    let new_outputs: Vec<Var> = outputs.iter().map(|o| rebuild.new_var(o)).collect();
    let mut hits = IndexMap::new();
    if rebuild.fused > 0 {
        hits.insert("elemwise_fusion", rebuild.fused);
    }
    let stats = PassStats {
        sweeps: 1,
        stop: StopReason::Fixpoint,
        hits,
        rejected: IndexMap::new(),
        nodes_before: graph.order.len(),
        nodes_after: toposort(&new_outputs).len(),
    };
    Ok((new_outputs, stats))
}
