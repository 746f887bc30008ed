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
//! Otherwise, when one of its users is in a group with the same broadcast pattern, it joins
//! that group as an *extra output* of the Composite (its value is computed once, in the same
//! pass, and its other users read it from the Composite), provided none of those other users
//! leads back into the group (which would make a cycle; the search is bounded, and gives up by
//! not exporting). Otherwise it starts a group of its own. A group of one `Elemwise` node stays
//! that node. Groups are rebuilt in an order of their own (an exported value may be read by a
//! node that came before the group's root); if that order ever found a cycle, the pass would
//! run again without extra outputs.
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

/// Assigns each fusable node to a group (see [`Groups`]).
fn assign_groups(g: &Graph, outputs: &[Var], export: bool) -> Groups {
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
    let mut exported = vec![false; n];
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
        // Otherwise it may join the group of one of its users as an extra output of the
        // Composite, computed once in the same pass, when its other users (outside the group)
        // do not feed back into the group.
        let joined = joined.or_else(|| {
            if !export {
                return None;
            }
            let mut tried: Vec<usize> = Vec::new();
            for &u in &users[i] {
                let gid = group[u];
                if gid == NONE || tried.contains(&gid) || pattern[gid] != bp {
                    continue;
                }
                tried.push(gid);
                let outside: Vec<usize> = users[i]
                    .iter()
                    .copied()
                    .filter(|&c| group[c] != gid)
                    .collect();
                if !reaches_group(&users, &group, &members, &outside, gid, members[gid][0]) {
                    exported[i] = true;
                    return Some(gid);
                }
            }
            None
        });
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
    Groups {
        group,
        members,
        exported,
    }
}

/// How many nodes a cycle check may visit before it gives up (and the node is not exported).
const REACH_BUDGET: usize = 1_000;

/// True when a path of users leads from one of `from` to a member of group `gid` (whose last
/// member in topological order is `last`), or when the search exceeds its budget.
fn reaches_group(
    users: &[Vec<usize>],
    group: &[usize],
    members: &[Vec<usize>],
    from: &[usize],
    gid: usize,
    last: usize,
) -> bool {
    let mut seen: FxHashSet<usize> = FxHashSet::default();
    let mut stack: Vec<usize> = from.to_vec();
    while let Some(c) = stack.pop() {
        if c > last || !seen.insert(c) {
            continue;
        }
        if group[c] == gid {
            return true;
        }
        if seen.len() > REACH_BUDGET {
            return true;
        }
        stack.extend(users[c].iter().copied());
        // A group is rebuilt as one node: what any of its members feeds is reached too.
        if group[c] != NONE {
            stack.extend(members[group[c]].iter().copied());
        }
    }
    false
}

/// The result of [`assign_groups`].
struct Groups {
    /// The group of each node, or [`NONE`].
    group: Vec<usize>,
    /// Each group's members in topological order (the last is the group's root).
    members: Vec<Vec<usize>>,
    /// Members whose value is also an output of their group's Composite.
    exported: Vec<bool>,
}

/// The forward pass: rebuilds the graph with each group of two or more nodes as one Composite.
struct Rebuild<'g> {
    g: &'g Graph,
    group: Vec<usize>,
    members: Vec<Vec<usize>>,
    exported: Vec<bool>,
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

    /// The Composite of group `gid` (its root, then its exported members, each with the outer
    /// variable it replaces), or `None` when an output would not have the replaced type.
    fn composite(&self, gid: usize) -> Result<Option<Vec<(Var, Var)>>, RewriteError> {
        let mut inner: FxHashMap<Var, Var> = FxHashMap::default();
        let mut leaves: IndexMap<Var, Var> = IndexMap::new();
        let mut root = None;
        let mut extra: Vec<(Var, Var)> = Vec::new();
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
            if self.exported[m] {
                extra.push((out.clone(), value.clone()));
            }
            root = Some((out, value));
        }
        let Some((out, value)) = root else {
            return Ok(None);
        };
        let mut replaced = vec![out.clone()];
        let mut values = vec![value];
        for (o, v) in extra {
            if o != out {
                replaced.push(o);
                values.push(v);
            }
        }
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
            build::composite(&inner_inputs, &values, &outer_inputs)
        })
        .map_err(rebuild_error)?;
        if new.len() != replaced.len()
            || !replaced
                .iter()
                .zip(&new)
                .all(|(o, w)| crate::type_fits(o, w))
        {
            return Ok(None);
        }
        Ok(Some(replaced.into_iter().zip(new).collect()))
    }

    /// The unit node `i` is rebuilt in: its group when that has two or more members.
    fn unit(&self, i: usize) -> Unit {
        match self.group[i] {
            gid if gid != NONE && self.members[gid].len() > 1 => Unit::Group(gid),
            _ => Unit::Node(i),
        }
    }

    /// The nodes (outside the unit) whose values `unit` reads.
    fn deps(&self, unit: Unit) -> Vec<usize> {
        let nodes: &[usize] = match unit {
            Unit::Node(ref i) => std::slice::from_ref(i),
            Unit::Group(gid) => &self.members[gid],
        };
        let mut deps = Vec::new();
        for &m in nodes {
            for v in self.g.order[m].inputs() {
                if let Some(p) = self.g.producer(v)
                    && self.unit(p) != unit
                {
                    deps.push(p);
                }
            }
        }
        deps
    }

    /// Rebuilds one unit, whose dependencies are rebuilt.
    fn build(&mut self, unit: Unit) -> Result<(), RewriteError> {
        let gid = match unit {
            Unit::Node(i) => return self.plain(i),
            Unit::Group(gid) => gid,
        };
        match self.composite(gid)? {
            Some(outs) => {
                self.fused += 1;
                self.memo.extend(outs);
            }
            None => {
                for m in self.members[gid].clone() {
                    self.plain(m)?;
                }
            }
        }
        Ok(())
    }

    /// Rebuilds every unit after the units it reads (a group's exported values may be read by
    /// nodes that come before its root in the old order, so the order is recomputed).
    fn run(&mut self) -> Result<bool, RewriteError> {
        let mut done: FxHashSet<Unit> = FxHashSet::default();
        let mut expanded: FxHashSet<Unit> = FxHashSet::default();
        let mut stack: Vec<(Unit, bool)> = Vec::new();
        for i in 0..self.g.order.len() {
            stack.push((self.unit(i), false));
            while let Some((unit, ready)) = stack.pop() {
                if done.contains(&unit) {
                    continue;
                }
                if ready {
                    self.build(unit)?;
                    done.insert(unit);
                    continue;
                }
                if !expanded.insert(unit) {
                    // Met again before it was built: the units form a cycle.
                    return Ok(false);
                }
                stack.push((unit, true));
                for p in self.deps(unit) {
                    let u = self.unit(p);
                    if !done.contains(&u) {
                        stack.push((u, false));
                    }
                }
            }
        }
        Ok(true)
    }
}

/// What the rebuild handles at once: a node, or a group of two or more nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Unit {
    Node(usize),
    Group(usize),
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
    // With extra outputs first; should the units ever form a cycle, without them.
    let mut rebuild = None;
    for export in [true, false] {
        let Groups {
            group,
            members,
            exported,
        } = assign_groups(&graph, outputs, export);
        let mut r = Rebuild {
            g: &graph,
            group,
            members,
            exported,
            memo: FxHashMap::default(),
            fused: 0,
        };
        if r.run()? || !export {
            rebuild = Some(r);
            break;
        }
    }
    let Some(rebuild) = rebuild else {
        unreachable!("the pass without extra outputs always completes")
    };
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
