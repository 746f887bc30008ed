use crate::{FrozenGraph, IfElse, OpFromGraph, ScalarOp, Scan};
use oxtensor_data::DType;
use smallvec::SmallVec;
use std::fmt;
use std::sync::Arc;

/// A list of axes, sorted and without repeats.
pub type Axes = SmallVec<[usize; 4]>;

/// The tensor operations of the graph: a closed set, matched exhaustively by every concern
/// (type inference, shape inference, kernels, printing), so that adding a variant makes the
/// compiler list each place to fill.
///
/// Static parameters live in the variant; everything that may be symbolic (shapes, indices,
/// bounds) is an input, so graphs of loops and shapes stay graphs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// A scalar function applied elementwise. Inputs have equal rank; a dimension broadcasts
    /// only where its static extent is 1.
    Elemwise(ScalarOp),
    /// A reduction over `axes` (sorted, unique), which the output drops. `keepdims` is a
    /// `DimShuffle` on top.
    Reduce {
        /// What to combine with.
        op: ReduceOp,
        /// The reduced axes.
        axes: Axes,
    },
    /// Index of the largest/smallest element along `axis`, or in the flattened array (`None`);
    /// `int64` output; the first occurrence wins ties, NaN counts as the extreme (NumPy).
    ArgReduce {
        /// Which extreme.
        op: ArgReduceOp,
        /// The axis, or `None` for the flattened array.
        axis: Option<usize>,
    },
    /// Reorders, drops and inserts dimensions: output dimension `i` is input dimension
    /// `order[i]`, or a new dimension of extent 1 where `None`. Input dimensions not named are
    /// dropped and must have static extent 1. A view.
    DimShuffle {
        /// The new order.
        order: SmallVec<[Option<usize>; 4]>,
    },
    /// Inputs: `x`, and an integer vector of `ndim` extents, at most one of them −1 (inferred).
    /// A view when `x` is contiguous.
    Reshape {
        /// Rank of the output.
        ndim: usize,
    },
    /// The `int64` vector of the input's extents.
    Shape,
    /// The `int64` scalar extent of one dimension.
    ShapeI(usize),
    /// The input, asserted at run time to have these static extents (`None`: any).
    SpecifyShape(SmallVec<[Option<usize>; 4]>),
    /// Inputs: a value, then `ndim` integer scalars; the value broadcast to that shape
    /// (right-aligned, NumPy rules). `zeros`, `ones`, `full` and `*_like` are built on it.
    Alloc {
        /// Rank of the output.
        ndim: usize,
    },
    /// Inputs: `start`, `stop`, `step` scalars; `np.arange` of the given dtype.
    Arange(DType),
    /// Inputs: `n`, `m`, `k` integer scalars; `np.eye(n, m, k)` of the given dtype.
    Eye(DType),
    /// Inputs: scalars, cast to the dtype; a vector of them (used for symbolic shapes).
    MakeVector(DType),
    /// Concatenates the inputs along `axis`; other extents must match.
    Join {
        /// The axis.
        axis: usize,
    },
    /// Inputs: `x` and an integer vector of `n` sizes that must sum to `x`'s extent on `axis`;
    /// `n` outputs, views of `x`.
    Split {
        /// The axis.
        axis: usize,
        /// The number of pieces.
        n: usize,
    },
    /// Basic indexing `x[i, a:b:c, …]`: inputs `x`, then one integer scalar per index and per
    /// present slice bound, in order. A view.
    Subtensor(IndexSpec),
    /// Functional `x[idx] = y` (`set`) or `x[idx] += y`: inputs `x`, `y`, then the index
    /// scalars as for `Subtensor`; `y` broadcasts to the indexed region.
    IncSubtensor {
        /// The index pattern.
        index: IndexSpec,
        /// Replace (`set_subtensor`) rather than add (`inc_subtensor`).
        set: bool,
    },
    /// Integer-array indexing on one axis: inputs `x` and an integer index array `i`; the
    /// output replaces `x`'s `axis` by `i`'s dimensions (`np.take`). Negative indices count
    /// from the end; out-of-range ones are an error.
    Take {
        /// The indexed axis.
        axis: usize,
    },
    /// Functional `x[..., i, ...] = y` / `+= y` for an integer array `i` on `axis`: inputs `x`,
    /// `y`, `i`. Repeated indices accumulate when adding (`np.add.at`); the last wins when setting.
    IncTake {
        /// The indexed axis.
        axis: usize,
        /// Replace rather than add.
        set: bool,
    },
    /// A fused elementwise program: the frozen inner graph maps 0-d placeholders (one per
    /// input, of the input's dtype) to 0-d outputs using only `Elemwise` ops, and the op applies
    /// it elementwise with `Elemwise`'s broadcasting rules. Fusion builds these so a chain of
    /// elementwise ops makes one pass over memory; each output is one of the inner outputs.
    Composite(FrozenGraph),
    /// A reduction of an elementwise program, computed in one pass that never stores the
    /// program's value: `Reduce { op, axes }` applied to the single output of
    /// `Composite(body)` on the inputs. The fusion pass builds it where a reduction is the only
    /// reader of an elementwise node, so every backend runs the same decision (and printing
    /// shows it).
    FusedReduce {
        /// What to combine with.
        op: ReduceOp,
        /// The reduced axes of the program's (broadcast) value.
        axes: Axes,
        /// The elementwise program, as a `Composite`'s inner graph with one output.
        body: FrozenGraph,
    },
    /// The identity on input 0 that only changes how gradients flow through it (`zero_grad`,
    /// `disconnected_grad`, `grad_clip`). `Clip` takes `(x, lo, hi)` with 0-d bounds; the others
    /// take `(x)`. A view; rewrites may drop it once gradients are built.
    GradMarker(GradMarker),
    /// `np.matmul`: vector·vector, matrix·vector, matrix·matrix, and batched with broadcasting
    /// of the leading dimensions.
    MatMul,
    /// A matrix product with an elementwise epilogue, which the kernel applies in place to
    /// cache-sized panels of the product: inputs `(a, b, e1, …)` with
    /// `a` and `b` matrices (rank 2); the output is `Composite(body)(MatMul(a, b), e1, …)`, of
    /// the product's shape and dtype (the `e`s broadcast to the product: a bias, scalars). The
    /// fusion pass builds it where the program is the product's only reader, so every backend
    /// runs the same decision (and printing shows it).
    FusedMatMul {
        /// The epilogue, as a `Composite`'s inner graph with one output whose placeholder 0 is
        /// the product and placeholder `i` (i ≥ 1) input `i + 1`.
        body: FrozenGraph,
    },
    /// A user-defined op whose body is a frozen graph (PyTensor's `OpFromGraph`): inputs are the
    /// explicit arguments, then the shared variables the body reads; outputs are the body's.
    OpFromGraph(Arc<OpFromGraph>),
    /// A lazy branch (PyTensor's `ifelse`): input 0 is a 0-d condition, the rest the inputs of
    /// both branch graphs; only the branch taken is computed.
    IfElse(Arc<IfElse>),
    /// A loop (PyTensor's `scan`): inputs `n_steps`, the sequences, each state's initial
    /// values, then the values every step reads; one output per state and per mapped output,
    /// the values of every step stacked (see [`crate::scan`]).
    Scan(Arc<Scan>),
    /// A linear-algebra operation (decomposition, solver, matrix function), batched over
    /// leading dimensions with NumPy's gufunc broadcasting: see [`crate::LinalgOp`].
    Linalg(crate::LinalgOp),
    /// A random draw: inputs `(rng, size, params...)`, outputs `(next_rng, draw)` (see
    /// [`crate::random`]).
    Random(crate::RandomOp),
    /// An extra op of `pytensor.tensor.extra_ops`/`sort` (cumsum, sort, unique, …): see
    /// [`crate::ExtraOp`].
    Extra(crate::ExtraOp),
    /// PyTensor's `CheckAndRaise`/`Assert`: inputs `(x, conds...)` with 0-d conditions; returns
    /// `x` (a view) and fails the call with the [`crate::Check`]'s exception when a condition
    /// is false (see [`crate::check`]).
    CheckAndRaise(crate::Check),
}

/// How an [`Op::GradMarker`] changes the gradient flowing into its input.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GradMarker {
    /// The gradient is zero (the input stays connected).
    Zero,
    /// No gradient flows: the input is treated as a constant.
    Disconnected,
    /// The gradient is clipped elementwise to `[lo, hi]`.
    Clip,
    /// The gradient is undefined: differentiating through it is an error (or a `None`
    /// gradient, as the caller's `null_gradients` option says).
    Undefined,
}

/// The combining function of a [`Op::Reduce`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReduceOp {
    /// Sum (integers accumulate in 64 bits; floats pairwise, in `f64` for `float32`).
    Sum,
    /// Product.
    Prod,
    /// Largest (NaN propagates).
    Max,
    /// Smallest (NaN propagates).
    Min,
    /// Logical and, `bool` output.
    All,
    /// Logical or, `bool` output.
    Any,
}

impl ReduceOp {
    /// The output dtype for an input dtype (NumPy: integer sums and products widen to 64 bits).
    pub fn output_dtype(self, input: DType) -> DType {
        match self {
            ReduceOp::Sum | ReduceOp::Prod => {
                if input.is_bool() || input.is_signed_int() {
                    DType::I64
                } else if input.is_unsigned_int() {
                    DType::U64
                } else {
                    input
                }
            }
            ReduceOp::Max | ReduceOp::Min => input,
            ReduceOp::All | ReduceOp::Any => DType::Bool,
        }
    }

    /// Every reduction, for tables and tests that go over all of them.
    pub const ALL: [ReduceOp; 6] = [
        ReduceOp::Sum,
        ReduceOp::Prod,
        ReduceOp::Max,
        ReduceOp::Min,
        ReduceOp::All,
        ReduceOp::Any,
    ];

    /// The printed name.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "Sum",
            ReduceOp::Prod => "Prod",
            ReduceOp::Max => "Max",
            ReduceOp::Min => "Min",
            ReduceOp::All => "All",
            ReduceOp::Any => "Any",
        }
    }
}

/// Which extreme an [`Op::ArgReduce`] finds.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ArgReduceOp {
    /// Index of the largest element.
    ArgMax,
    /// Index of the smallest element.
    ArgMin,
}

/// One entry of a basic index, applied to the next input dimension.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum IndexEntry {
    /// A single integer position (negative counts from the end); the dimension is removed.
    Index,
    /// A slice; each present bound takes one integer scalar input. Python slice semantics,
    /// negative steps included.
    Slice {
        /// `start` is given.
        start: bool,
        /// `stop` is given.
        stop: bool,
        /// `step` is given.
        step: bool,
    },
}

impl IndexEntry {
    /// How many scalar inputs the entry consumes.
    pub fn n_inputs(self) -> usize {
        match self {
            IndexEntry::Index => 1,
            IndexEntry::Slice { start, stop, step } => {
                start as usize + stop as usize + step as usize
            }
        }
    }
}

/// A basic-index pattern: entries for the leading dimensions; the rest are taken whole.
pub type IndexSpec = SmallVec<[IndexEntry; 4]>;

impl Op {
    /// How many outputs the op produces.
    pub fn n_outputs(&self) -> usize {
        match self {
            Op::Split { n, .. } => *n,
            Op::Composite(g) => g.outputs().len(),
            Op::OpFromGraph(o) => o.body.outputs().len(),
            Op::IfElse(b) => b.then_branch.outputs().len(),
            Op::Scan(s) => s.n_outputs(),
            Op::Linalg(l) => l.n_outputs(),
            Op::Random(_) => 2,
            Op::Extra(e) => e.n_outputs(),
            Op::CheckAndRaise(_) => 1,
            Op::Elemwise(_)
            | Op::Reduce { .. }
            | Op::ArgReduce { .. }
            | Op::DimShuffle { .. }
            | Op::Reshape { .. }
            | Op::Shape
            | Op::ShapeI(_)
            | Op::SpecifyShape(_)
            | Op::Alloc { .. }
            | Op::Arange(_)
            | Op::Eye(_)
            | Op::MakeVector(_)
            | Op::Join { .. }
            | Op::Subtensor(_)
            | Op::IncSubtensor { .. }
            | Op::Take { .. }
            | Op::IncTake { .. }
            | Op::GradMarker(_)
            | Op::FusedReduce { .. }
            | Op::MatMul
            | Op::FusedMatMul { .. } => 1,
        }
    }

    /// True for ops whose output is a view of their first input (the planner aliases them).
    pub fn is_view(&self) -> bool {
        matches!(
            self,
            Op::DimShuffle { .. }
                | Op::Subtensor(_)
                | Op::Split { .. }
                | Op::SpecifyShape(_)
                | Op::GradMarker(_)
                | Op::CheckAndRaise(_)
        )
    }
}

fn fmt_axes(f: &mut fmt::Formatter<'_>, axes: &[usize]) -> fmt::Result {
    let items: Vec<String> = axes.iter().map(|a| a.to_string()).collect();
    write!(f, "({})", items.join(", "))
}

fn fmt_index(f: &mut fmt::Formatter<'_>, spec: &IndexSpec) -> fmt::Result {
    let items: Vec<String> = spec
        .iter()
        .map(|e| match e {
            IndexEntry::Index => "i".to_string(),
            IndexEntry::Slice { start, stop, step } => {
                let part = |p: bool, s: &str| if p { s.to_string() } else { String::new() };
                let mut s = format!("{}:{}", part(*start, "start"), part(*stop, "stop"));
                if *step {
                    s.push_str(":step");
                }
                s
            }
        })
        .collect();
    write!(f, "{}", items.join(", "))
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Elemwise(s) => write!(f, "{s}"),
            Op::Reduce { op, axes } => {
                write!(f, "{}{{axes=", op.name())?;
                fmt_axes(f, axes)?;
                write!(f, "}}")
            }
            Op::ArgReduce { op, axis } => {
                let name = match op {
                    ArgReduceOp::ArgMax => "Argmax",
                    ArgReduceOp::ArgMin => "Argmin",
                };
                match axis {
                    Some(a) => write!(f, "{name}{{axis={a}}}"),
                    None => write!(f, "{name}{{axis=None}}"),
                }
            }
            Op::DimShuffle { order } => {
                let items: Vec<String> = order
                    .iter()
                    .map(|o| o.map_or("x".to_string(), |a| a.to_string()))
                    .collect();
                write!(f, "DimShuffle{{order=[{}]}}", items.join(","))
            }
            Op::Reshape { ndim } => write!(f, "Reshape{{{ndim}}}"),
            Op::Shape => write!(f, "Shape"),
            Op::ShapeI(i) => write!(f, "Shape_i{{{i}}}"),
            Op::SpecifyShape(s) => {
                let items: Vec<String> = s
                    .iter()
                    .map(|d| d.map_or("None".into(), |v| v.to_string()))
                    .collect();
                write!(f, "SpecifyShape{{({})}}", items.join(", "))
            }
            Op::Alloc { .. } => write!(f, "Alloc"),
            Op::Arange(d) => write!(f, "ARange{{dtype={d}}}"),
            Op::Eye(d) => write!(f, "Eye{{dtype={d}}}"),
            Op::MakeVector(d) => write!(f, "MakeVector{{dtype={d}}}"),
            Op::Join { axis } => write!(f, "Join{{axis={axis}}}"),
            Op::Split { axis, n } => write!(f, "Split{{{n}, axis={axis}}}"),
            Op::Subtensor(spec) => {
                write!(f, "Subtensor{{")?;
                fmt_index(f, spec)?;
                write!(f, "}}")
            }
            Op::IncSubtensor { index, set } => {
                write!(
                    f,
                    "{}{{",
                    if *set { "SetSubtensor" } else { "IncSubtensor" }
                )?;
                fmt_index(f, index)?;
                write!(f, "}}")
            }
            Op::Take { axis } => write!(f, "AdvancedSubtensor1{{axis={axis}}}"),
            Op::IncTake { axis, set } => {
                write!(
                    f,
                    "{}{{axis={axis}}}",
                    if *set {
                        "AdvancedSetSubtensor1"
                    } else {
                        "AdvancedIncSubtensor1"
                    }
                )
            }
            Op::GradMarker(m) => write!(f, "GradMarker{{{m:?}}}"),
            Op::Composite(g) => {
                let exprs: Vec<String> = g
                    .outputs()
                    .iter()
                    .map(crate::frozen::render_scalar)
                    .collect();
                write!(f, "Composite{{{}}}", exprs.join(", "))
            }
            Op::FusedReduce { op, axes, body } => {
                let exprs: Vec<String> = body
                    .outputs()
                    .iter()
                    .map(crate::frozen::render_scalar)
                    .collect();
                write!(f, "{}{{axes=", op.name())?;
                fmt_axes(f, axes)?;
                write!(f, ", of={}}}", exprs.join(", "))
            }
            Op::MatMul => write!(f, "MatMul"),
            Op::FusedMatMul { body } => {
                let exprs: Vec<String> = body
                    .outputs()
                    .iter()
                    .map(crate::frozen::render_scalar)
                    .collect();
                write!(f, "MatMul{{then={}}}", exprs.join(", "))
            }
            Op::OpFromGraph(o) => write!(f, "{}", o.name.as_deref().unwrap_or("OpFromGraph")),
            Op::IfElse(_) => write!(f, "IfElse"),
            Op::Scan(s) => write!(f, "Scan{{{}}}", s.name.as_deref().unwrap_or("scan_fn")),
            Op::Linalg(l) => write!(f, "{l}"),
            Op::Random(r) => write!(f, "{r}"),
            Op::Extra(e) => write!(f, "{e}"),
            Op::CheckAndRaise(c) => write!(f, "{c}"),
        }
    }
}
