//! The driver: applies a set of rules to a graph until nothing matches (or a limit is hit).
//!
//! Graphs are immutable and interned, so "replacing" a variable means rebuilding every node that
//! depends on it. One sweep does that in a single depth-first pass from the outputs (iterative,
//! so deep graphs cannot overflow the stack): a node is finished after its inputs, rebuilt over
//! their rewritten forms, then offered to the rules indexed under its op. When a rule fires, the
//! replacement is itself visited (its new nodes bottom-up, then its root offered to the rules
//! again), so a sweep usually reaches the fixpoint by itself; the next sweep confirms it. Each
//! node is rebuilt at most once per sweep and a memo maps old variables to new ones, so a sweep
//! costs time linear in the graph plus the rules' work.
//!
//! Inner graphs (a `Composite`'s scalar program, an `OpFromGraph`'s body, an `IfElse`'s
//! branches) are rewritten with the same rules (a nested fixpoint over their placeholders,
//! memoized per sweep); when that changes one, and the result is still valid (same output
//! dtypes and ranks; for a Composite, elementwise ops only), the node is rebuilt with a new
//! frozen graph over the same inputs. An unchanged inner graph keeps its node.

use crate::RewriteError;
use crate::rule::{Key, Root, Rule, RuleCtx};
use indexmap::IndexMap;
use oxtensor_graph::{FrozenGraph, Op, Site, Var, toposort, with_site};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bounds on one pass. Whichever is reached first stops the pass; the graph it returns is always
/// complete and valid (rules are switched off and the sweep finishes rebuilding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Sweeps over the graph (the last one finds nothing to do when the fixpoint is reached).
    pub max_sweeps: usize,
    /// Rewrites (rule hits) in one pass.
    pub max_rewrites: usize,
    /// Nodes: a pass stops when the graph, or the work of one sweep, grows beyond this.
    pub max_nodes: usize,
    /// Wall time of one pass.
    pub max_time: Duration,
    /// Largest constant (in elements) constant folding may create.
    pub fold_elements: usize,
}

impl Limits {
    /// Generous bounds that only stop runaway rule sets.
    pub const DEFAULT: Limits = Limits {
        max_sweeps: 16,
        max_rewrites: 1_000_000,
        max_nodes: 4_000_000,
        max_time: Duration::from_secs(60),
        fold_elements: 10_000,
    };
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::DEFAULT
    }
}

/// Why a pass stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// A sweep found nothing to rewrite.
    Fixpoint,
    /// [`Limits::max_sweeps`] sweeps ran and the last still rewrote something.
    SweepLimit,
    /// [`Limits::max_rewrites`] was reached.
    RewriteLimit,
    /// The graph grew beyond [`Limits::max_nodes`].
    NodeLimit,
    /// [`Limits::max_time`] elapsed.
    TimeLimit,
}

/// What one pass did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassStats {
    /// Sweeps run.
    pub sweeps: usize,
    /// Why the pass stopped.
    pub stop: StopReason,
    /// Hits per rule name, in first-hit order.
    pub hits: IndexMap<&'static str, usize>,
    /// Replacements a rule returned but the driver refused (wrong type), per rule name.
    pub rejected: IndexMap<&'static str, usize>,
    /// Apply nodes before the pass.
    pub nodes_before: usize,
    /// Apply nodes after the pass.
    pub nodes_after: usize,
}

impl PassStats {
    /// Total hits of all rules.
    pub fn total_hits(&self) -> usize {
        self.hits.values().sum()
    }
}

/// Rules indexed by the op they match at their root, each list in declaration order.
struct RuleIndex<'r> {
    rules: Vec<&'r Rule>,
    by_key: FxHashMap<Key, Vec<usize>>,
    any_elemwise: Vec<usize>,
    any_other: Vec<usize>,
}

impl<'r> RuleIndex<'r> {
    fn new(rules: &[&'r Rule]) -> RuleIndex<'r> {
        let mut by_key: FxHashMap<Key, Vec<usize>> = FxHashMap::default();
        let mut any_elemwise = Vec::new();
        let mut any_other = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            match (r.root, Key::of_root(r.root)) {
                (_, Some(key)) => by_key.entry(key).or_default().push(i),
                (Root::Any, None) => {
                    any_elemwise.push(i);
                    any_other.push(i);
                }
                (_, None) => any_elemwise.push(i),
            }
        }
        // Merge the catch-all rules into every keyed list, keeping declaration order.
        for (key, list) in by_key.iter_mut() {
            let extra = match key {
                Key::Scalar(_) => &any_elemwise,
                Key::Op(_) => &any_other,
            };
            list.extend(extra.iter().copied());
            list.sort_unstable();
            list.dedup();
        }
        RuleIndex {
            rules: rules.to_vec(),
            by_key,
            any_elemwise,
            any_other,
        }
    }

    fn candidates(&self, key: Key) -> &[usize] {
        match self.by_key.get(&key) {
            Some(list) => list,
            None => match key {
                Key::Scalar(_) => &self.any_elemwise,
                Key::Op(_) => &self.any_other,
            },
        }
    }
}

/// True when `new` may replace `old`: same dtype and rank, every static extent of `old` kept,
/// and no unknown extent turned into a static 1 (that would change broadcasting in users).
pub fn type_fits(old: &Var, new: &Var) -> bool {
    let (a, b) = (old.ty(), new.ty());
    a.dtype == b.dtype
        && a.ndim() == b.ndim()
        && a.shape.iter().zip(&b.shape).all(|(o, n)| match o {
            Some(_) => o == n,
            None => *n != Some(1),
        })
}

/// Rewrites `outputs` with `rules` to a fixpoint within `limits`; `pass` names the run in
/// errors. Returns the new outputs (in order) and what happened.
pub fn apply_rules(
    pass: &'static str,
    outputs: &[Var],
    rules: &[&Rule],
    limits: &Limits,
) -> Result<(Vec<Var>, PassStats), RewriteError> {
    let index = RuleIndex::new(rules);
    let start = Instant::now();
    let mut outputs = outputs.to_vec();
    let mut stats = PassStats {
        sweeps: 0,
        stop: StopReason::Fixpoint,
        hits: IndexMap::new(),
        rejected: IndexMap::new(),
        nodes_before: 0,
        nodes_after: 0,
    };
    let mut rewrites_left = limits.max_rewrites;
    loop {
        let order = toposort(&outputs);
        if stats.sweeps == 0 {
            stats.nodes_before = order.len();
        }
        stats.nodes_after = order.len();
        let stop = if order.len() > limits.max_nodes {
            Some(StopReason::NodeLimit)
        } else if stats.sweeps >= limits.max_sweeps {
            Some(StopReason::SweepLimit)
        } else if start.elapsed() >= limits.max_time {
            Some(StopReason::TimeLimit)
        } else if rewrites_left == 0 {
            Some(StopReason::RewriteLimit)
        } else {
            None
        };
        if let Some(reason) = stop {
            stats.stop = reason;
            break;
        }
        if rules.is_empty() {
            break;
        }
        let mut clients: FxHashMap<Var, u32> = FxHashMap::default();
        for node in &order {
            for v in node.inputs() {
                *clients.entry(v.clone()).or_default() += 1;
            }
        }
        for v in &outputs {
            *clients.entry(v.clone()).or_default() += 1;
        }
        drop(order);
        let mut sweep = Sweep {
            pass,
            index: &index,
            limits,
            start,
            memo: FxHashMap::default(),
            clients,
            in_flight: FxHashSet::default(),
            sites: FxHashMap::default(),
            inner: FxHashMap::default(),
            stats: &mut stats,
            rewrites_left,
            finished: 0,
            stop: None,
            changed: false,
        };
        let new_outputs = outputs
            .iter()
            .map(|o| sweep.run(o))
            .collect::<Result<Vec<_>, _>>()?;
        let (changed, stop) = (sweep.changed, sweep.stop);
        rewrites_left = sweep.rewrites_left;
        stats.sweeps += 1;
        outputs = new_outputs;
        if let Some(reason) = stop {
            stats.stop = reason;
            stats.nodes_after = toposort(&outputs).len();
            break;
        }
        if !changed {
            stats.stop = StopReason::Fixpoint;
            break;
        }
    }
    Ok((outputs, stats))
}

enum Frame {
    /// Make sure the variable's inputs are done, then finish it.
    Visit(Var),
    /// Rebuild the variable's node over rewritten inputs and offer it to the rules.
    Finish(Var),
    /// The variable's result is the (by now finished) result of the second.
    Alias(Var, Var),
}

/// The state of one sweep.
struct Sweep<'a, 'r> {
    pass: &'static str,
    index: &'a RuleIndex<'r>,
    limits: &'a Limits,
    start: Instant,
    /// Old variable → rewritten variable; finished variables map to themselves.
    memo: FxHashMap<Var, Var>,
    /// Users of each variable (from the graph at the start of the sweep, carried over to
    /// replacements).
    clients: FxHashMap<Var, u32>,
    /// Variables whose replacement is being processed: a rule returning one of them would
    /// start a cycle, so such a result is ignored.
    in_flight: FxHashSet<Var>,
    /// Creation sites as strings, for attributing rebuilt and new nodes to the user's code.
    sites: FxHashMap<usize, Arc<str>>,
    /// Inner graphs met in this sweep → their rewritten form (`None`: unchanged).
    inner: FxHashMap<FrozenGraph, Option<FrozenGraph>>,
    stats: &'a mut PassStats,
    rewrites_left: usize,
    finished: usize,
    stop: Option<StopReason>,
    changed: bool,
}

impl Sweep<'_, '_> {
    fn run(&mut self, root: &Var) -> Result<Var, RewriteError> {
        let mut stack = vec![Frame::Visit(root.clone())];
        while let Some(frame) = stack.pop() {
            match frame {
                Frame::Visit(v) => {
                    if self.memo.contains_key(&v) {
                        continue;
                    }
                    if v.owner().is_none() {
                        self.memo.insert(v.clone(), v);
                        continue;
                    }
                    let pending: Vec<Var> = v
                        .node()
                        .inputs()
                        .iter()
                        .filter(|x| !self.memo.contains_key(*x))
                        .cloned()
                        .collect();
                    stack.push(Frame::Finish(v));
                    stack.extend(pending.into_iter().rev().map(Frame::Visit));
                }
                Frame::Finish(v) => self.finish(v, &mut stack)?,
                Frame::Alias(from, to) => {
                    let done = self.lookup(&to)?;
                    self.in_flight.remove(&from);
                    self.settle(from, done);
                }
            }
        }
        self.lookup(root)
    }

    fn lookup(&self, v: &Var) -> Result<Var, RewriteError> {
        self.memo
            .get(v)
            .cloned()
            .ok_or_else(|| RewriteError::Rebuild {
                pass: self.pass,
                source: oxtensor_graph::GraphError::Invalid {
                    op: "rewrite driver".into(),
                    message: format!("{} was used before it was rewritten", v.describe()),
                },
            })
    }

    /// Records `old → new` and hands `old`'s users over to `new`.
    fn settle(&mut self, old: Var, new: Var) {
        if old != new
            && let Some(&n) = self.clients.get(&old)
        {
            *self.clients.entry(new.clone()).or_default() += n;
        }
        self.memo.insert(old, new);
    }

    fn site_of(&mut self, v: &Var) -> Arc<str> {
        match v.site() {
            Site::External(s) => s.clone(),
            Site::Rust(loc) => {
                let key = *loc as *const _ as usize;
                self.sites
                    .entry(key)
                    .or_insert_with(|| Arc::from(format!("{}:{}", loc.file(), loc.line())))
                    .clone()
            }
        }
    }

    fn finish(&mut self, v: Var, stack: &mut Vec<Frame>) -> Result<(), RewriteError> {
        if self.memo.contains_key(&v) {
            return Ok(());
        }
        self.finished += 1;
        if self.stop.is_none() {
            if self.finished > self.limits.max_nodes {
                self.stop = Some(StopReason::NodeLimit);
            } else if self.finished.is_multiple_of(256)
                && self.start.elapsed() >= self.limits.max_time
            {
                self.stop = Some(StopReason::TimeLimit);
            }
        }
        let node = v.node().clone();
        let Some(op) = node.op() else {
            self.memo.insert(v.clone(), v);
            return Ok(());
        };
        let inputs = node.inputs();
        let new_inputs = inputs
            .iter()
            .map(|x| self.lookup(x))
            .collect::<Result<Vec<_>, _>>()?;
        let site = self.site_of(&v);
        // Inner graphs (a Composite's scalar program, an OpFromGraph's body, an IfElse's
        // branches) are rewritten with the same rules (inner graphs in, new inner graphs out);
        // the node is rebuilt over the new ones when they changed.
        let new_op = match op {
            _ if self.stop.is_some() => None,
            Op::Composite(g) => self.rewrite_inner(g, true)?.map(Op::Composite),
            Op::FusedReduce { op, axes, body } => {
                self.rewrite_inner(body, true)?.map(|body| Op::FusedReduce {
                    op: *op,
                    axes: axes.clone(),
                    body,
                })
            }
            Op::FusedMatMul { body } => self
                .rewrite_inner(body, true)?
                .map(|body| Op::FusedMatMul { body }),
            _ => op.with_tensor_bodies(|g| self.rewrite_inner(g, false))?,
        };
        if new_op.is_some() {
            self.changed = true;
        }
        let outs: Vec<Var> = if new_op.is_none() && new_inputs.as_slice() == inputs {
            (0..node.types().len())
                .map(|i| Var::output_of(&node, i))
                .collect()
        } else {
            let op = new_op.unwrap_or_else(|| op.clone());
            with_site(site.clone(), || Var::apply(op, &new_inputs))
                .map_err(|source| RewriteError::Rebuild {
                    pass: self.pass,
                    source,
                })?
                .into_vec()
        };
        // Each output is offered to the rules on its own: a rule on a multi-output node
        // (an IfElse) replaces the output it is given, and builds the same new node for each.
        for (i, w) in outs.into_iter().enumerate() {
            let old = if node.types().len() == 1 {
                v.clone()
            } else {
                Var::output_of(&node, i)
            };
            self.offer(old, w, site.clone(), stack);
        }
        Ok(())
    }

    /// Settles `v`, rebuilt as `w`, to `w` or to the rules' replacement of `w` (visited next).
    fn offer(&mut self, v: Var, w: Var, site: Arc<str>, stack: &mut Vec<Frame>) {
        if w != v
            && let Some(done) = self.memo.get(&w).cloned()
        {
            self.settle(v, done);
            return;
        }
        let replacement = if self.stop.is_none() {
            with_site(site, || self.try_rules(&w))
        } else {
            None
        };
        match replacement {
            None => {
                self.settle(v, w.clone());
                self.memo.insert(w.clone(), w);
            }
            Some(r) => {
                self.changed = true;
                if let Some(done) = self.memo.get(&r).cloned() {
                    self.settle(w.clone(), done.clone());
                    self.settle(v, done);
                } else {
                    self.in_flight.insert(v.clone());
                    self.in_flight.insert(w.clone());
                    if w != v {
                        stack.push(Frame::Alias(w, r.clone()));
                    }
                    stack.push(Frame::Alias(v, r.clone()));
                    stack.push(Frame::Visit(r));
                }
            }
        }
    }

    /// The inner graph `g` rewritten to a fixpoint with this pass's rules, or `None` when
    /// nothing changed, or the result does not keep each output's dtype and rank, or (for a
    /// `composite`'s scalar program) it is not a valid Composite body: only elementwise ops over the
    /// placeholders, outputs of the same dtypes). Results are memoized per sweep.
    fn rewrite_inner(
        &mut self,
        g: &FrozenGraph,
        composite: bool,
    ) -> Result<Option<FrozenGraph>, RewriteError> {
        if let Some(done) = self.inner.get(g) {
            return Ok(done.clone());
        }
        let (outputs, stats) = apply_rules(self.pass, g.outputs(), &self.index.rules, self.limits)?;
        for (name, n) in &stats.hits {
            *self.stats.hits.entry(name).or_default() += n;
        }
        for (name, n) in &stats.rejected {
            *self.stats.rejected.entry(name).or_default() += n;
        }
        let hits = stats.total_hits();
        self.rewrites_left = self.rewrites_left.saturating_sub(hits);
        let valid = outputs != g.outputs()
            && outputs
                .iter()
                .zip(g.outputs())
                .all(|(n, o)| n.dtype() == o.dtype() && n.ndim() == o.ndim())
            && (!composite
                || (outputs.iter().all(|n| n.ndim() == 0)
                    && toposort(&outputs)
                        .iter()
                        .all(|n| matches!(n.op(), Some(Op::Elemwise(_))))));
        let new = if valid {
            FrozenGraph::freeze(&g.placeholders(), &outputs).ok()
        } else {
            None
        };
        self.inner.insert(g.clone(), new.clone());
        Ok(new)
    }

    /// The first valid replacement the rules indexed under `w`'s op produce.
    fn try_rules(&mut self, w: &Var) -> Option<Var> {
        let (op, inputs) = w.owner()?;
        let complex = w.dtype().is_complex() || inputs.iter().any(|x| x.dtype().is_complex());
        let ctx = RuleCtx {
            clients: &self.clients,
            fold_limit: self.limits.fold_elements,
        };
        for &i in self.index.candidates(Key::of(op)) {
            let rule = self.index.rules[i];
            if complex && rule.tags.contains(&crate::rule::REAL_ONLY) {
                continue;
            }
            let Some(r) = (rule.apply)(w, &ctx) else {
                continue;
            };
            if &r == w || self.in_flight.contains(&r) {
                continue;
            }
            if !type_fits(w, &r) {
                *self.stats.rejected.entry(rule.name).or_default() += 1;
                continue;
            }
            *self.stats.hits.entry(rule.name).or_default() += 1;
            self.rewrites_left = self.rewrites_left.saturating_sub(1);
            if self.rewrites_left == 0 {
                self.stop = Some(StopReason::RewriteLimit);
            }
            return Some(r);
        }
        None
    }
}
