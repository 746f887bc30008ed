//! Rules as data: a name, the root op a rule can match (the driver's index key), tags for mode
//! selection, and a pure action from the matched variable to its replacement.

use oxtensor_graph::{Op, ScalarOp, Var};
use rustc_hash::FxHashMap;
use std::mem::Discriminant;

/// A rewrite rule.
///
/// The driver calls `apply` on every output of every apply node whose op matches `root`, after
/// the node's inputs have been rewritten. `apply` destructures the node (the "pattern"), and
/// returns `Some(replacement)` for a match or `None`. On a node with several outputs (an
/// `IfElse`) each output is offered on its own; a rule that rebuilds the node returns that
/// output of the new node (interning makes the new node the same for each). It must be pure: it builds new nodes (they
/// are interned, so building is safe) but never looks at anything but the matched subgraph and
/// the [`RuleCtx`]. The replacement must have the matched variable's dtype and rank and a static
/// shape at least as known; the driver checks this and counts a violation as a rejected rewrite.
///
/// Rules go one way, never make the graph worse, and avoid general commutativity and
/// associativity (see `docs/adding-a-rule.md`).
#[derive(Clone, Copy)]
pub struct Rule {
    /// A unique, stable name (`"log1p_from_log"`): reports count hits by it, and a mode can
    /// exclude the rule by it.
    pub name: &'static str,
    /// The ops the rule can match at its root.
    pub root: Root,
    /// The rule's own tags (`"nan_unsafe"`, `"shape_unsafe"`, [`REAL_ONLY`]); its set's name and the tags of
    /// the pass it runs in are added to them when a mode selects rules.
    pub tags: &'static [&'static str],
    /// The action: the replacement for the matched variable, or `None` when it does not match.
    pub apply: fn(&Var, &RuleCtx<'_>) -> Option<Var>,
}

impl Rule {
    /// A rule with no tags of its own.
    pub const fn new(
        name: &'static str,
        root: Root,
        apply: fn(&Var, &RuleCtx<'_>) -> Option<Var>,
    ) -> Rule {
        Rule {
            name,
            root,
            tags: &[],
            apply,
        }
    }

    /// The same rule with these tags of its own.
    pub const fn tagged(self, tags: &'static [&'static str]) -> Rule {
        Rule { tags, ..self }
    }
}

/// The tag of a rule whose identity holds for real numbers only (`log(exp(x)) = x` fails for a
/// complex `x` with an imaginary part beyond ±π): the driver never offers it a variable that
/// is complex or computed from complex inputs.
pub const REAL_ONLY: &str = "real_only";

/// A rule set: the rules of one topic (one module of [`crate::rules`]), in priority order. The
/// set's name is a tag of each of its rules.
#[derive(Clone, Copy, Debug)]
pub struct RuleSet {
    /// The topic (`"useless"`, `"stabilize"`, …).
    pub name: &'static str,
    /// The rules.
    pub rules: &'static [Rule],
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule")
            .field("name", &self.name)
            .field("root", &self.root)
            .field("tags", &self.tags)
            .finish()
    }
}

/// What a rule can match at its root: the key the driver indexes rules by, so that each node
/// is only offered to the rules that can match it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    /// Every apply node (constant folding).
    Any,
    /// `Elemwise` of this scalar op; `Cast` matches casts to any dtype.
    Elemwise(ScalarOp),
    /// Any node whose op is of this kind.
    Op(OpKind),
}

impl Root {
    /// `Elemwise(Cast(_))`: a cast to any dtype.
    pub const CAST: Root = Root::Elemwise(ScalarOp::Cast(oxtensor_data::DType::Bool));
}

/// The kinds of [`Op`], without their parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// [`Op::Elemwise`] of any scalar op.
    Elemwise,
    /// [`Op::Reduce`].
    Reduce,
    /// [`Op::ArgReduce`].
    ArgReduce,
    /// [`Op::DimShuffle`].
    DimShuffle,
    /// [`Op::Reshape`].
    Reshape,
    /// [`Op::Shape`].
    Shape,
    /// [`Op::ShapeI`].
    ShapeI,
    /// [`Op::SpecifyShape`].
    SpecifyShape,
    /// [`Op::Alloc`].
    Alloc,
    /// [`Op::Arange`].
    Arange,
    /// [`Op::Eye`].
    Eye,
    /// [`Op::MakeVector`].
    MakeVector,
    /// [`Op::Join`].
    Join,
    /// [`Op::Split`].
    Split,
    /// [`Op::Subtensor`].
    Subtensor,
    /// [`Op::IncSubtensor`].
    IncSubtensor,
    /// [`Op::Take`].
    Take,
    /// [`Op::IncTake`].
    IncTake,
    /// [`Op::GradMarker`].
    GradMarker,
    /// [`Op::Composite`].
    Composite,
    /// [`Op::FusedReduce`].
    FusedReduce,
    /// [`Op::MatMul`].
    MatMul,
    /// [`Op::FusedMatMul`].
    FusedMatMul,
    /// [`Op::OpFromGraph`].
    OpFromGraph,
    /// [`Op::IfElse`].
    IfElse,
    /// [`Op::Scan`].
    Scan,
    /// [`Op::Linalg`] (any linear-algebra op; rules match the [`oxtensor_graph::LinalgOp`]).
    Linalg,
    /// [`Op::Random`].
    Random,
    /// [`Op::Extra`] (cumsum, sort, unique, …; rules match the [`oxtensor_graph::ExtraOp`]).
    Extra,
    /// [`Op::CheckAndRaise`].
    CheckAndRaise,
}

impl OpKind {
    /// The kind of `op`.
    pub fn of(op: &Op) -> OpKind {
        match op {
            Op::Elemwise(_) => OpKind::Elemwise,
            Op::Reduce { .. } => OpKind::Reduce,
            Op::ArgReduce { .. } => OpKind::ArgReduce,
            Op::DimShuffle { .. } => OpKind::DimShuffle,
            Op::Reshape { .. } => OpKind::Reshape,
            Op::Shape => OpKind::Shape,
            Op::ShapeI(_) => OpKind::ShapeI,
            Op::SpecifyShape(_) => OpKind::SpecifyShape,
            Op::Alloc { .. } => OpKind::Alloc,
            Op::Arange(_) => OpKind::Arange,
            Op::Eye(_) => OpKind::Eye,
            Op::MakeVector(_) => OpKind::MakeVector,
            Op::Join { .. } => OpKind::Join,
            Op::Split { .. } => OpKind::Split,
            Op::Subtensor(_) => OpKind::Subtensor,
            Op::IncSubtensor { .. } => OpKind::IncSubtensor,
            Op::Take { .. } => OpKind::Take,
            Op::IncTake { .. } => OpKind::IncTake,
            Op::GradMarker(_) => OpKind::GradMarker,
            Op::Composite(_) => OpKind::Composite,
            Op::FusedReduce { .. } => OpKind::FusedReduce,
            Op::MatMul => OpKind::MatMul,
            Op::FusedMatMul { .. } => OpKind::FusedMatMul,
            Op::OpFromGraph(_) => OpKind::OpFromGraph,
            Op::IfElse(_) => OpKind::IfElse,
            Op::Scan(_) => OpKind::Scan,
            Op::Linalg(_) => OpKind::Linalg,
            Op::Random(_) => OpKind::Random,
            Op::Extra(_) => OpKind::Extra,
            Op::CheckAndRaise(_) => OpKind::CheckAndRaise,
        }
    }
}

/// The index key of a node: elementwise nodes are keyed by their scalar op (ignoring a cast's
/// dtype), the others by their op kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    Scalar(Discriminant<ScalarOp>),
    Op(OpKind),
}

impl Key {
    pub(crate) fn of(op: &Op) -> Key {
        match op {
            Op::Elemwise(s) => Key::Scalar(std::mem::discriminant(s)),
            other => Key::Op(OpKind::of(other)),
        }
    }

    /// The keys a root matches: `None` for [`Root::Any`] (every key), and for `OpKind::Elemwise`
    /// (every scalar key, which the index expands).
    pub(crate) fn of_root(root: Root) -> Option<Key> {
        match root {
            Root::Any | Root::Op(OpKind::Elemwise) => None,
            Root::Elemwise(s) => Some(Key::Scalar(std::mem::discriminant(&s))),
            Root::Op(kind) => Some(Key::Op(kind)),
        }
    }
}

/// What a rule may know besides the matched subgraph.
pub struct RuleCtx<'a> {
    pub(crate) clients: &'a FxHashMap<Var, u32>,
    pub(crate) fold_limit: usize,
}

impl RuleCtx<'_> {
    /// True when `v` has at most one user in the graph being rewritten (an output counts as a
    /// user). Rules that would duplicate work when a shared intermediate is absorbed into its
    /// user (flattening sums, merging reductions, lifting dimshuffles) check it. Variables built
    /// during the current sweep count as used once.
    pub fn single_client(&self, v: &Var) -> bool {
        self.clients.get(v).is_none_or(|&n| n <= 1)
    }

    /// The largest number of elements constant folding may materialize.
    pub fn fold_limit(&self) -> usize {
        self.fold_limit
    }
}
