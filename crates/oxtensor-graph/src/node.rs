//! Variables and hash-consed nodes.
//!
//! Every variable is an output of a [`Node`]. Leaves (inputs, shared variables, constants) are
//! nodes without inputs. Apply nodes and constants are interned in a global table of weak
//! references: building a structurally equal node returns the existing one, so equality is
//! pointer equality and common subexpressions are shared for free, while dropping the last
//! handle frees the node (and its entry).

use crate::{GraphError, Op, Site, TensorType, infer};
use oxtensor_data::{DType, Tensor};
use rustc_hash::{FxBuildHasher, FxHashMap};
use smallvec::SmallVec;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, RwLock, Weak};

/// The inputs of an apply node.
pub type Inputs = SmallVec<[Var; 3]>;

/// What a node is.
pub enum NodeKind {
    /// A graph input, given a value at each call.
    Input,
    /// A shared variable: a leaf whose value lives across calls and may be updated.
    Shared(Arc<RwLock<Tensor>>),
    /// Positional input `i` of a frozen inner graph, interned by position and type so that
    /// structurally equal inner graphs are the same graph.
    Placeholder(usize),
    /// A constant value (contiguous), interned by value and type.
    Constant(Tensor),
    /// An op applied to inputs, interned by op and input identity.
    Apply {
        /// The operation.
        op: Op,
        /// Its inputs.
        inputs: Inputs,
    },
}

/// A node of the graph: a leaf or an op applied to variables. Immutable but for the names of
/// its outputs, which are metadata outside its identity.
pub struct Node {
    id: u64,
    hash: u64,
    kind: NodeKind,
    types: SmallVec<[TensorType; 1]>,
    site: Site,
    names: Mutex<SmallVec<[Option<Arc<str>>; 1]>>,
}

/// A symbolic tensor: output `index` of a node. Cheap to clone; compares and hashes by identity.
#[derive(Clone)]
pub struct Var {
    node: Arc<Node>,
    index: u32,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);
const SHARDS: usize = 16;

type Bucket = SmallVec<[Weak<Node>; 1]>;
static INTERNER: LazyLock<[Mutex<FxHashMap<u64, Bucket>>; SHARDS]> =
    LazyLock::new(|| std::array::from_fn(|_| Mutex::new(FxHashMap::default())));

fn shard(hash: u64) -> std::sync::MutexGuard<'static, FxHashMap<u64, Bucket>> {
    INTERNER[(hash as usize) % SHARDS]
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

fn apply_hash(op: &Op, inputs: &[Var]) -> u64 {
    let mut h = FxBuildHasher.build_hasher();
    0u8.hash(&mut h);
    op.hash(&mut h);
    for v in inputs {
        v.node.id.hash(&mut h);
        v.index.hash(&mut h);
    }
    h.finish()
}

fn constant_hash(t: &Tensor, bytes: &[u8]) -> u64 {
    let mut h = FxBuildHasher.build_hasher();
    1u8.hash(&mut h);
    t.dtype().hash(&mut h);
    t.shape().hash(&mut h);
    bytes.hash(&mut h);
    h.finish()
}

impl Node {
    fn new(kind: NodeKind, hash: u64, types: SmallVec<[TensorType; 1]>, site: Site) -> Node {
        let n = types.len();
        Node {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            hash,
            kind,
            types,
            site,
            names: Mutex::new(smallvec::smallvec![None; n]),
        }
    }

    /// Finds an interned node equal to the one `same` recognises, or interns the one `make` builds.
    fn intern(hash: u64, same: impl Fn(&Node) -> bool, make: impl FnOnce() -> Node) -> Arc<Node> {
        let mut table = shard(hash);
        let bucket = table.entry(hash).or_default();
        if let Some(found) = bucket.iter().filter_map(Weak::upgrade).find(|n| same(n)) {
            return found;
        }
        let node = Arc::new(make());
        bucket.push(Arc::downgrade(&node));
        node
    }

    /// A unique, increasing id (stable for the node's lifetime; used for ordering and printing).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// What the node is.
    pub fn kind(&self) -> &NodeKind {
        &self.kind
    }

    /// The op, for apply nodes.
    pub fn op(&self) -> Option<&Op> {
        match &self.kind {
            NodeKind::Apply { op, .. } => Some(op),
            _ => None,
        }
    }

    /// The inputs (empty for leaves).
    pub fn inputs(&self) -> &[Var] {
        match &self.kind {
            NodeKind::Apply { inputs, .. } => inputs,
            _ => &[],
        }
    }

    /// The output types.
    pub fn types(&self) -> &[TensorType] {
        &self.types
    }

    /// Where the node was first built.
    pub fn site(&self) -> &Site {
        &self.site
    }

    /// The user-given names of the outputs that have one (so an error in the node can name
    /// the variable it computes, e.g. a random variable's draw rather than its next generator).
    pub fn output_names(&self) -> Vec<Arc<str>> {
        self.names
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .flatten()
            .cloned()
            .collect()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if matches!(
            self.kind,
            NodeKind::Apply { .. } | NodeKind::Constant(_) | NodeKind::Placeholder(_)
        ) {
            let mut table = shard(self.hash);
            if let Some(bucket) = table.get_mut(&self.hash) {
                bucket.retain(|w| w.strong_count() > 0);
                if bucket.is_empty() {
                    table.remove(&self.hash);
                }
            }
        }
        // Free long chains iteratively: a recursive drop of a 10^5-node chain would overflow
        // the stack. Inputs whose last handle we hold are unpacked here instead of recursing.
        let mut stack: Vec<Var> = match &mut self.kind {
            NodeKind::Apply { inputs, .. } => std::mem::take(inputs).into_vec(),
            _ => return,
        };
        while let Some(v) = stack.pop() {
            if let Ok(mut node) = Arc::try_unwrap(v.node)
                && let NodeKind::Apply { inputs, .. } = &mut node.kind
            {
                stack.extend(std::mem::take(inputs));
            }
        }
    }
}

impl Var {
    fn leaf(kind: NodeKind, ty: TensorType, name: Option<&str>, site: Site) -> Var {
        let node = Node::new(kind, 0, smallvec::smallvec![ty], site);
        let v = Var {
            node: Arc::new(node),
            index: 0,
        };
        if let Some(n) = name {
            v.set_name(n);
        }
        v
    }

    /// A graph input of type `ty`.
    #[track_caller]
    pub fn input(name: Option<&str>, ty: TensorType) -> Var {
        Var::leaf(NodeKind::Input, ty, name, Site::current())
    }

    /// A shared variable holding `value`; its type has the value's dtype and rank with no
    /// static extents (the value may be replaced by one of another shape).
    #[track_caller]
    pub fn shared(value: Tensor, name: Option<&str>) -> Var {
        let ty = TensorType::of_rank(value.dtype(), value.ndim());
        Var::leaf(
            NodeKind::Shared(Arc::new(RwLock::new(value))),
            ty,
            name,
            Site::current(),
        )
    }

    /// A constant; equal values of equal type are the same variable.
    #[track_caller]
    pub fn constant(value: Tensor) -> Var {
        let value = value.to_contiguous();
        let bytes = value.to_bytes();
        let hash = constant_hash(&value, &bytes);
        let site = Site::current();
        let same = |n: &Node| match &n.kind {
            NodeKind::Constant(c) => {
                c.dtype() == value.dtype() && c.shape() == value.shape() && c.to_bytes() == bytes
            }
            _ => false,
        };
        let ty = TensorType {
            dtype: value.dtype(),
            shape: value.shape().iter().map(|&d| Some(d)).collect(),
        };
        let node = Node::intern(hash, same, || {
            Node::new(
                NodeKind::Constant(value.clone()),
                hash,
                smallvec::smallvec![ty],
                site,
            )
        });
        Var { node, index: 0 }
    }

    /// Positional placeholder `index` of type `ty` (for frozen inner graphs).
    #[track_caller]
    pub fn placeholder(index: usize, ty: TensorType) -> Var {
        let mut h = FxBuildHasher.build_hasher();
        2u8.hash(&mut h);
        index.hash(&mut h);
        ty.hash(&mut h);
        let hash = h.finish();
        let site = Site::current();
        let same =
            |n: &Node| matches!(n.kind, NodeKind::Placeholder(i) if i == index) && n.types[0] == ty;
        let node = Node::intern(hash, same, || {
            Node::new(
                NodeKind::Placeholder(index),
                hash,
                smallvec::smallvec![ty.clone()],
                site,
            )
        });
        Var { node, index: 0 }
    }

    /// A scalar constant of the given dtype (the value converted with NumPy cast rules).
    #[track_caller]
    pub fn scalar_constant(value: f64, dtype: DType) -> Var {
        Var::constant(Tensor::scalar(value).cast(dtype))
    }

    /// An `int64` scalar constant.
    #[track_caller]
    pub fn int_constant(value: i64) -> Var {
        Var::constant(Tensor::scalar(value))
    }

    /// Applies `op` to `inputs`, inferring and checking types; returns every output.
    #[track_caller]
    pub fn apply(op: Op, inputs: &[Var]) -> Result<SmallVec<[Var; 1]>, GraphError> {
        let types = infer::infer_types(&op, inputs)?;
        let hash = apply_hash(&op, inputs);
        let site = Site::current();
        let same = |n: &Node| match &n.kind {
            NodeKind::Apply { op: o, inputs: i } => o == &op && i.as_slice() == inputs,
            _ => false,
        };
        let node = Node::intern(hash, same, || {
            Node::new(
                NodeKind::Apply {
                    op: op.clone(),
                    inputs: inputs.into(),
                },
                hash,
                types,
                site,
            )
        });
        Ok((0..node.types.len() as u32)
            .map(|index| Var {
                node: node.clone(),
                index,
            })
            .collect())
    }

    /// Applies a single-output `op` to `inputs`.
    #[track_caller]
    pub fn apply1(op: Op, inputs: &[Var]) -> Result<Var, GraphError> {
        let n = op.n_outputs();
        if n != 1 {
            return Err(GraphError::invalid(
                &op,
                format!("has {n} outputs; use Var::apply"),
            ));
        }
        Ok(Var::apply(op, inputs)?.swap_remove(0))
    }

    /// The node this variable is an output of.
    pub fn node(&self) -> &Arc<Node> {
        &self.node
    }

    /// Which output of its node this is.
    pub fn index(&self) -> usize {
        self.index as usize
    }

    /// The type.
    pub fn ty(&self) -> &TensorType {
        &self.node.types[self.index as usize]
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.ty().dtype
    }

    /// The rank.
    pub fn ndim(&self) -> usize {
        self.ty().ndim()
    }

    /// The op and inputs that compute this variable (`None` for leaves).
    pub fn owner(&self) -> Option<(&Op, &[Var])> {
        match &self.node.kind {
            NodeKind::Apply { op, inputs } => Some((op, inputs)),
            _ => None,
        }
    }

    /// The value, for constants.
    pub fn constant_value(&self) -> Option<&Tensor> {
        match &self.node.kind {
            NodeKind::Constant(t) => Some(t),
            _ => None,
        }
    }

    /// The value of a one-element integer or bool constant.
    pub fn const_int(&self) -> Option<i64> {
        self.constant_value()
            .filter(|t| !t.dtype().is_float())
            .and_then(|t| t.item::<i64>())
    }

    /// The value cell, for shared variables.
    pub fn shared_value(&self) -> Option<&Arc<RwLock<Tensor>>> {
        match &self.node.kind {
            NodeKind::Shared(v) => Some(v),
            _ => None,
        }
    }

    /// True for graph inputs.
    pub fn is_input(&self) -> bool {
        matches!(self.node.kind, NodeKind::Input)
    }

    /// The user-given name, if any.
    pub fn name(&self) -> Option<Arc<str>> {
        self.node
            .names
            .lock()
            .unwrap_or_else(PoisonError::into_inner)[self.index as usize]
            .clone()
    }

    /// Names the variable. Names are metadata: they do not change identity (a node built twice
    /// is one node, so naming one names both).
    pub fn set_name(&self, name: &str) {
        self.node
            .names
            .lock()
            .unwrap_or_else(PoisonError::into_inner)[self.index as usize] = Some(name.into());
    }

    /// Where the variable was created.
    pub fn site(&self) -> &Site {
        &self.node.site
    }

    /// A stable id for ordering (node id, output index).
    pub fn id(&self) -> (u64, u32) {
        (self.node.id, self.index)
    }

    /// How the variable is named in messages: its name or origin, its type, its creation site.
    pub fn describe(&self) -> String {
        let what = match (self.name(), &self.node.kind) {
            (Some(n), _) => format!("'{n}'"),
            (None, NodeKind::Input) => "<unnamed input>".to_string(),
            (None, NodeKind::Placeholder(i)) => format!("<placeholder {i}>"),
            (None, NodeKind::Shared(_)) => "<unnamed shared variable>".to_string(),
            (None, NodeKind::Constant(c)) => format!("constant {c:?}"),
            (None, NodeKind::Apply { op, .. }) => format!("the output of {op}"),
        };
        format!("{what} ({}), created at {}", self.ty(), self.site())
    }
}

impl PartialEq for Var {
    fn eq(&self, other: &Var) -> bool {
        Arc::ptr_eq(&self.node, &other.node) && self.index == other.index
    }
}

impl Eq for Var {}

impl Hash for Var {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.node.id.hash(state);
        self.index.hash(state);
    }
}

impl std::fmt::Debug for Var {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.name(), self.owner()) {
            (Some(n), _) => write!(f, "{n}"),
            (None, Some((op, _))) => write!(f, "{op}.{}", self.index),
            (None, None) => match self.constant_value() {
                Some(c) => write!(f, "{c:?}"),
                None => write!(f, "<{}>", self.ty()),
            },
        }
    }
}

/// Number of interned nodes alive (apply nodes and constants), for tests of reclamation.
pub fn interned_count() -> usize {
    INTERNER
        .iter()
        .map(|s| {
            s.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .values()
                .map(|b| b.iter().filter(|w| w.strong_count() > 0).count())
                .sum::<usize>()
        })
        .sum()
}

impl Var {
    /// Output `index` of `node`.
    pub fn output_of(node: &Arc<Node>, index: usize) -> Var {
        Var {
            node: node.clone(),
            index: index as u32,
        }
    }
}
