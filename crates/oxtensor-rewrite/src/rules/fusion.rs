//! Elementwise fusion (the `fusion` pass): maximal connected groups of `Elemwise` nodes (and
//! `Composite` nodes, which are inlined) become one `Composite` node, so the interpreter and the
//! backends make one pass over memory for the whole group.
//!
//! Unlike the rule sets, fusion is a whole-graph pass: it needs every node's users, and it runs
//! in time linear in the graph (one topological sort, one backward pass assigning groups, one
//! pass merging them with path searches of bounded size, one forward pass rebuilding). It runs
//! last, after `specialize`, so the nodes it freezes into inner graphs are already in their final (canonical, stabilized, specialized) form: inner
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
//! Otherwise it starts a group of its own.
//!
//! # Merging groups
//!
//! Then groups of one broadcast pattern are merged into one group when they
//!
//! * read the same variable, whose broadcast pattern is theirs (siblings such as `exp(x)` and
//!   `sin(x)`: the merged Composite reads `x` once, and the variable proves that both groups'
//!   values have the same extents, so one loop computes both), or
//! * one reads a value of the other (a value with users in two groups, or with a user that is
//!   not elementwise, is computed once, in the same pass, and no longer goes through memory);
//!
//! and no path through other nodes leads from one to the other, which would make the merged
//! unit its own predecessor (the search is bounded, and gives up by not merging). Constants are
//! not shared reads. A group of shape arithmetic (extents and what is computed from them
//! alone) is not merged with one that computes values: its results are extents that
//! allocations and loops read (a staged loop works them out before it starts), which a
//! Composite that also reads a tensor's elements would turn into values known only while it
//! runs. A group whose only value read outside it feeds only a reduction is not
//! merged with a sibling it merely shares inputs with: reduction fusion makes such a pair one pass
//! that never stores the group's value, which a second output of its Composite would force
//! it to. (Groups that pass values to each other are merged anyway: those values would be
//! stored otherwise.) Array-valued groups are merged before scalar ones. A merged group's
//! Composite has an output for each of its values that is read outside it or is a graph
//! output. A group of one `Elemwise` node stays that node. Groups are rebuilt in an order of
//! their own (a group's values may be read by nodes that came before its last member); if that
//! order ever found a cycle, the pass would run again without merging.
//!
//! # Inner graphs
//!
//! `// f(g(x), y) == Composite{f(g(i0), i1)}(x, y)`: the members' ops are applied to 0-d
//! placeholders, one per distinct outer input; constants that hold one value and broadcast
//! like scalars go inside as 0-d constants (looking through the `DimShuffle` padding their
//! rank); nested Composites are inlined.
//!
//! # Reductions
//!
//! Last, a `Reduce` that is the only reader of an elementwise node becomes one `FusedReduce`
//! over that node's inputs ([`super::fused_reduce`]), so no backend stores the value; then an
//! elementwise node that is the only reader of a matrix product becomes one `FusedMatMul`
//! ([`super::fused_matmul`]), so the program runs in place on panels of the product.

use super::fused_matmul::fuse_epilogues;
use super::fused_reduce::fuse_reductions;
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
fn assign_groups(g: &Graph, outputs: &[Var], merge: bool) -> Groups {
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
    if merge {
        let shapes = shape_arithmetic(g);
        merge_groups(
            g,
            &users,
            &mut group,
            &mut members,
            &pattern,
            &is_output,
            &shapes,
        );
    }
    // A member is an output of its Composite when something outside the group reads it.
    let exported = g
        .order
        .iter()
        .enumerate()
        .map(|(i, node)| {
            group[i] != NONE
                && (is_output.contains(&Var::output_of(node, 0))
                    || users[i].iter().any(|&u| group[u] != group[i]))
        })
        .collect();
    Groups {
        group,
        members,
        exported,
    }
}

/// Merges groups of one broadcast pattern that read the same variable (of that pattern, so
/// with the same extents as both groups' values) or that read one another's values, into one
/// group whose Composite has several outputs, unless a path through other nodes joins them
/// (merging would then make a cycle), or one group is shape arithmetic (`shapes`) and the
/// other is not.
fn merge_groups(
    g: &Graph,
    users: &[Vec<usize>],
    group: &mut [usize],
    members: &mut [Vec<usize>],
    pattern: &[Vec<bool>],
    outputs: &FxHashSet<&Var>,
    shapes: &[bool],
) {
    // Pairs of nodes of two groups to merge, in the order they are found, and whether a value
    // flows between them (else they share an input).
    let mut pairs: Vec<(usize, usize, bool)> = Vec::new();
    let mut first_reader: FxHashMap<Var, usize> = FxHashMap::default();
    for (i, node) in g.order.iter().enumerate() {
        let gi = group[i];
        if gi == NONE {
            continue;
        }
        for v in node.inputs() {
            match g.producer(v).map(|p| (p, group[p])) {
                Some((_, gp)) if gp == gi => {}
                Some((p, gp)) if gp != NONE => {
                    if pattern[gp] == pattern[gi] {
                        pairs.push((p, i, true));
                    }
                }
                _ => {
                    let shared = !is_constant_input(v) && broadcast_pattern(v.ty()) == pattern[gi];
                    if shared {
                        let first = *first_reader.entry(v.clone()).or_insert(i);
                        if first != i {
                            pairs.push((first, i, false));
                        }
                    }
                }
            }
        }
    }
    // Array-valued groups first: merging them saves passes over memory, merging scalar groups
    // saves little, and an early scalar merge could join two array groups through a path.
    pairs.sort_by_key(|&(p, _, _)| std::cmp::Reverse(pattern[group[p]].len()));
    for (p, i, direct) in pairs {
        let (a, b) = (group[p], group[i]);
        let reduced = |gid: usize| feeds_a_reduction(g, users, group, &members[gid], outputs);
        let of_shapes = |gid: usize| members[gid].iter().all(|&m| shapes[m]);
        if a == b
            || of_shapes(a) != of_shapes(b)
            || (!direct && (reduced(a) || reduced(b)))
            || joined_through_others(users, group, members, a, b)
        {
            continue;
        }
        let moved = std::mem::take(&mut members[b]);
        for &m in &moved {
            group[m] = a;
        }
        members[a].extend(moved);
        members[a].sort_unstable();
    }
}

/// Per node of `g`, whether it is shape arithmetic: an extent (`Shape`, `Shape_i`), or an
/// elementwise node whose inputs are constants and shape arithmetic (at least one).
fn shape_arithmetic(g: &Graph) -> Vec<bool> {
    let mut shapes = vec![false; g.order.len()];
    for (i, node) in g.order.iter().enumerate() {
        shapes[i] = match node.op() {
            Some(Op::Shape | Op::ShapeI(_)) => true,
            _ if fusable(node) => {
                let mut read = node
                    .inputs()
                    .iter()
                    .filter(|v| v.constant_value().is_none());
                let from_shapes = |v: &Var| g.producer(v).is_some_and(|p| shapes[p]);
                let first = read.next();
                first.is_some_and(from_shapes) && read.all(from_shapes)
            }
            _ => false,
        };
    }
    shapes
}

/// True when the group of `members` has one value read outside it, not a graph output, read
/// only by a `Reduce` (which reduction fusion joins with the group's Composite).
fn feeds_a_reduction(
    g: &Graph,
    users: &[Vec<usize>],
    group: &[usize],
    members: &[usize],
    outputs: &FxHashSet<&Var>,
) -> bool {
    let Some(&gid) = members.first().map(|&m| &group[m]) else {
        return false;
    };
    let mut read_outside = members.iter().filter(|&&m| {
        outputs.contains(&Var::output_of(&g.order[m], 0))
            || users[m].iter().any(|&u| group[u] != gid)
    });
    match (read_outside.next(), read_outside.next()) {
        (Some(&m), None) => {
            !outputs.contains(&Var::output_of(&g.order[m], 0))
                && matches!(users[m].as_slice(), [u] if matches!(g.order[*u].op(), Some(Op::Reduce { .. })))
        }
        _ => false,
    }
}

/// True for a constant (possibly behind rank-padding dimshuffles): it is no shared read.
fn is_constant_input(v: &Var) -> bool {
    match dimshuffle(v) {
        Some((_, inner)) => is_constant_input(inner),
        None => v.constant_value().is_some(),
    }
}

/// True when a path of users through nodes of neither group leads from group `a` to group `b`
/// or back (or when the search exceeds its budget).
fn joined_through_others(
    users: &[Vec<usize>],
    group: &[usize],
    members: &[Vec<usize>],
    a: usize,
    b: usize,
) -> bool {
    let leaves = |from: usize, to: usize| -> Vec<usize> {
        members[from]
            .iter()
            .flat_map(|&m| users[m].iter().copied())
            .filter(|&u| group[u] != from && group[u] != to)
            .collect()
    };
    reaches_group(users, group, members, &leaves(a, b), b)
        || reaches_group(users, group, members, &leaves(b, a), a)
}

/// How many nodes a cycle check may visit before it gives up (and the groups are not merged).
const REACH_BUDGET: usize = 1_000;

/// True when a path of users leads from one of `from` to a member of group `gid`, or when the
/// search exceeds its budget. A group is rebuilt as one node, so reaching one of its members
/// reaches what any of them feeds. (No pruning by position: a group's members may lie far
/// apart in the order, so a late node can lead back to an early one through its group.)
fn reaches_group(
    users: &[Vec<usize>],
    group: &[usize],
    members: &[Vec<usize>],
    from: &[usize],
    gid: usize,
) -> bool {
    let mut seen: FxHashSet<usize> = FxHashSet::default();
    let mut expanded: FxHashSet<usize> = FxHashSet::default();
    let mut stack: Vec<usize> = from.to_vec();
    while let Some(c) = stack.pop() {
        if !seen.insert(c) {
            continue;
        }
        if group[c] == gid || seen.len() > REACH_BUDGET {
            return true;
        }
        stack.extend(users[c].iter().copied());
        if group[c] != NONE && expanded.insert(group[c]) {
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
/// then fuses reductions with their producers; returns the new outputs, in order, and what
/// happened (hits of `elemwise_fusion`: one per Composite built; of `reduction_fusion`: one per
/// `FusedReduce`; of `epilogue_fusion`: one per `FusedMatMul`).
pub fn fuse(outputs: &[Var]) -> Result<(Vec<Var>, PassStats), RewriteError> {
    let order = toposort(outputs);
    let index = order.iter().enumerate().map(|(i, n)| (n.id(), i)).collect();
    let graph = Graph { order, index };
    // With merged groups first; should the units ever form a cycle, without merging.
    let mut rebuild = None;
    for merge in [true, false] {
        let Groups {
            group,
            members,
            exported,
        } = assign_groups(&graph, outputs, merge);
        let mut r = Rebuild {
            g: &graph,
            group,
            members,
            exported,
            memo: FxHashMap::default(),
            fused: 0,
        };
        if r.run()? || !merge {
            rebuild = Some(r);
            break;
        }
    }
    let Some(rebuild) = rebuild else {
        unreachable!("the pass without merged groups always completes")
    };
    let fused_outputs: Vec<Var> = outputs.iter().map(|o| rebuild.new_var(o)).collect();
    let (reduced_outputs, reductions) = fuse_reductions(&fused_outputs)?;
    let (new_outputs, epilogues) = fuse_epilogues(&reduced_outputs)?;
    let mut hits = IndexMap::new();
    if rebuild.fused > 0 {
        hits.insert("elemwise_fusion", rebuild.fused);
    }
    if reductions > 0 {
        hits.insert("reduction_fusion", reductions);
    }
    if epilogues > 0 {
        hits.insert("epilogue_fusion", epilogues);
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
