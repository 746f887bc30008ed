use crate::profile::{Profile, Recorder};
use crate::shared::check_value;
use crate::{Error, Mode};
use oxtensor_data::{Tensor, result_type};
use oxtensor_graph::{
    FunctionGraph, PrintOptions, TensorType, Var, clone_replace, debugprint, toposort,
};
use oxtensor_runtime::Executable;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLockWriteGuard};
use std::time::{Duration, Instant};

/// What to do with an input the outputs do not depend on.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum OnUnusedInput {
    /// Refuse to compile (PyTensor's default).
    #[default]
    Raise,
    /// Compile, printing a warning to stderr.
    Warn,
    /// Compile silently.
    Ignore,
}

impl std::str::FromStr for OnUnusedInput {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "raise" => Ok(OnUnusedInput::Raise),
            "warn" => Ok(OnUnusedInput::Warn),
            "ignore" => Ok(OnUnusedInput::Ignore),
            other => Err(Error::Option(format!(
                "on_unused_input must be 'raise', 'warn' or 'ignore', got {other:?}"
            ))),
        }
    }
}

/// Options of [`function`], set builder-style, then [`FunctionBuilder::build`].
pub struct FunctionBuilder {
    inputs: Vec<Var>,
    outputs: Vec<Var>,
    updates: Vec<(Var, Var)>,
    givens: Vec<(Var, Var)>,
    on_unused_input: OnUnusedInput,
    trust_input: bool,
    allow_input_downcast: bool,
    mode: Mode,
    name: Option<String>,
    profile: bool,
}

/// Starts compiling a function from `inputs` to `outputs` (PyTensor's `pytensor.function`).
pub fn function(inputs: &[Var], outputs: &[Var]) -> FunctionBuilder {
    FunctionBuilder {
        inputs: inputs.to_vec(),
        outputs: outputs.to_vec(),
        updates: Vec::new(),
        givens: Vec::new(),
        on_unused_input: OnUnusedInput::Raise,
        trust_input: false,
        allow_input_downcast: false,
        mode: Mode::default(),
        name: None,
        profile: false,
    }
}

impl FunctionBuilder {
    /// Pairs `(shared variable, new value expression)` written after each successful call.
    pub fn updates(mut self, updates: &[(Var, Var)]) -> Self {
        self.updates.extend(updates.iter().cloned());
        self
    }

    /// Pairs `(variable, replacement)` substituted in the graph before compiling.
    pub fn givens(mut self, givens: &[(Var, Var)]) -> Self {
        self.givens.extend(givens.iter().cloned());
        self
    }

    /// Policy for inputs the outputs do not use.
    pub fn on_unused_input(mut self, policy: OnUnusedInput) -> Self {
        self.on_unused_input = policy;
        self
    }

    /// Skip argument conversion on each call: arguments are not cast to the input dtypes and
    /// errors name less. Calls stay sound: the executor still rejects a value whose dtype,
    /// rank or static extents differ from its input's type (`Error::Runtime`).
    pub fn trust_input(mut self, trust: bool) -> Self {
        self.trust_input = trust;
        self
    }

    /// Accept arguments whose dtype converts to the input's only with loss (float64 → float32).
    pub fn allow_input_downcast(mut self, allow: bool) -> Self {
        self.allow_input_downcast = allow;
        self
    }

    /// The compilation mode (rewrites and backend).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// A name used in messages and printing.
    pub fn name(mut self, name: &str) -> Self {
        self.name = Some(name.to_string());
        self
    }

    /// Record the time of every call and of every node as it runs ([`Function::profile`]).
    /// Costs two clock reads per node and call.
    pub fn profile(mut self, profile: bool) -> Self {
        self.profile = profile;
        self
    }

    /// Checks the graph, substitutes `givens`, and compiles with the mode's backend.
    pub fn build(self) -> Result<Function, Error> {
        let mut seen = FxHashSet::default();
        for v in &self.inputs {
            if !v.is_input() {
                return Err(Error::Option(format!(
                    "function inputs must be graph inputs (symbolic variables), got {}; use givens to replace other variables",
                    v.describe()
                )));
            }
            if !seen.insert(v.clone()) {
                return Err(Error::Option(format!(
                    "{} is given twice as an input",
                    v.describe()
                )));
            }
        }
        let mut targets = Vec::new();
        for (target, value) in &self.updates {
            if target.shared_value().is_none() {
                return Err(Error::Update(format!(
                    "update target {} is not a shared variable",
                    target.describe()
                )));
            }
            if targets.contains(target) {
                return Err(Error::Update(format!(
                    "{} is updated twice",
                    target.describe()
                )));
            }
            if value.dtype() != target.dtype() || value.ndim() != target.ndim() {
                return Err(Error::Update(format!(
                    "the update of {} has type {}, which does not fit the shared variable (dtype {}, rank {})",
                    target.describe(),
                    value.ty(),
                    target.dtype(),
                    target.ndim()
                )));
            }
            targets.push(target.clone());
        }
        let mut all_outputs = self.outputs.clone();
        all_outputs.extend(self.updates.iter().map(|(_, v)| v.clone()));
        if !self.givens.is_empty() {
            let mut map = FxHashMap::default();
            for (old, new) in &self.givens {
                if old.ty().dtype != new.dtype() || old.ndim() != new.ndim() {
                    return Err(Error::Option(format!(
                        "givens: {} cannot be replaced by {} of another type",
                        old.describe(),
                        new.describe()
                    )));
                }
                map.insert(old.clone(), new.clone());
            }
            all_outputs = clone_replace(&all_outputs, &map)?;
        }
        self.check_unused(&all_outputs)?;
        let graph = FunctionGraph::new(self.inputs.clone(), all_outputs.clone())?
            .with_consumed(targets.iter().cloned());
        let started = Instant::now();
        let (graph, _report) = self.mode.rewrite(&graph)?;
        // Rewrites rebuild nodes without their names: an output's replacement takes the
        // output's name, so run-time errors still name the variable the user named.
        for (before, after) in all_outputs.iter().zip(graph.outputs()) {
            if let (Some(name), None, Some(_)) = (before.name(), after.name(), after.owner()) {
                after.set_name(&name);
            }
        }
        let rewritten = Instant::now();
        let backend = self.mode.backend();
        let exec = backend.compile(&graph)?;
        let locks = SharedLocks::new(&graph, &targets);
        let profile = self.profile.then(|| {
            Recorder::new(
                self.name.clone(),
                backend.name(),
                rewritten - started,
                rewritten.elapsed(),
                exec.schedule(),
            )
        });
        Ok(Function {
            inner: Arc::new(Inner {
                input_types: self.inputs.iter().map(|v| v.ty().clone()).collect(),
                n_outputs: self.outputs.len(),
                update_targets: targets,
                locks,
                exec,
                graph,
                name: self.name,
                allow_input_downcast: self.allow_input_downcast,
                profile,
            }),
            trust_input: AtomicBool::new(self.trust_input),
        })
    }

    fn check_unused(&self, outputs: &[Var]) -> Result<(), Error> {
        if self.on_unused_input == OnUnusedInput::Ignore {
            return Ok(());
        }
        let mut used: FxHashSet<Var> = outputs.iter().cloned().collect();
        for node in toposort(outputs) {
            used.extend(node.inputs().iter().cloned());
        }
        for v in self.inputs.iter().filter(|v| !used.contains(*v)) {
            let msg = format!(
                "{} is not used in the graph of the outputs; pass on_unused_input='warn' or 'ignore' to allow it",
                v.describe()
            );
            if self.on_unused_input == OnUnusedInput::Raise {
                return Err(Error::UnusedInput(msg));
            }
            eprintln!("oxtensor warning: {msg}");
        }
        Ok(())
    }
}

/// How a call touches shared variables: it reads each shared input and stores each update.
///
/// Locks are taken in one global order (variable id), so calls on several threads cannot
/// deadlock. An updated variable stays write-locked from before the call reads it until its new
/// value is stored: nobody observes it half-way, and a variable the graph consumes may have its
/// buffer overwritten by the step that computes its update (the plan's in-place rule).
struct SharedLocks {
    /// `(variable, position among the shared inputs, updated)`, in lock order.
    order: Vec<(Var, Option<usize>, Option<usize>)>,
    /// The number of shared inputs (the values a call appends).
    n_read: usize,
}

impl SharedLocks {
    fn new(graph: &FunctionGraph, targets: &[Var]) -> SharedLocks {
        let mut order: Vec<(Var, Option<usize>, Option<usize>)> = graph
            .shared_inputs()
            .iter()
            .enumerate()
            .map(|(i, v)| (v.clone(), Some(i), targets.iter().position(|t| t == v)))
            .collect();
        for (j, t) in targets.iter().enumerate() {
            if !graph.shared_inputs().contains(t) {
                order.push((t.clone(), None, Some(j)));
            }
        }
        order.sort_by_key(|(v, _, _)| v.node().id());
        SharedLocks {
            order,
            n_read: graph.shared_inputs().len(),
        }
    }

    /// Appends the shared inputs' values to `values` and returns the write guards of the update
    /// targets, in update order.
    fn acquire(
        &self,
        values: &mut Vec<Tensor>,
    ) -> Result<Vec<RwLockWriteGuard<'_, Tensor>>, Error> {
        if self.order.is_empty() {
            return Ok(Vec::new());
        }
        let first = values.len();
        values.resize(first + self.n_read, Tensor::scalar(false));
        let mut held: Vec<(usize, RwLockWriteGuard<'_, Tensor>)> = Vec::new();
        for (v, read, update) in &self.order {
            let cell = v
                .shared_value()
                .ok_or_else(|| Error::Update(format!("{} lost its value", v.describe())))?;
            match update {
                Some(j) => {
                    let guard = cell.write().unwrap_or_else(PoisonError::into_inner);
                    if let Some(i) = read {
                        values[first + i] = guard.clone();
                    }
                    held.push((*j, guard));
                }
                None => {
                    if let Some(i) = read {
                        values[first + i] =
                            cell.read().unwrap_or_else(PoisonError::into_inner).clone();
                    }
                }
            }
        }
        held.sort_by_key(|(j, _)| *j);
        Ok(held.into_iter().map(|(_, g)| g).collect())
    }
}

struct Inner {
    input_types: Vec<TensorType>,
    n_outputs: usize,
    update_targets: Vec<Var>,
    locks: SharedLocks,
    exec: Arc<dyn Executable>,
    graph: FunctionGraph,
    name: Option<String>,
    allow_input_downcast: bool,
    profile: Option<Recorder>,
}

/// A compiled function. Cheap to clone; safe to call from several threads.
pub struct Function {
    inner: Arc<Inner>,
    trust_input: AtomicBool,
}

impl Clone for Function {
    fn clone(&self) -> Function {
        Function {
            inner: self.inner.clone(),
            trust_input: AtomicBool::new(self.trust_input.load(Ordering::Relaxed)),
        }
    }
}

impl Function {
    /// Calls with positional arguments; returns the outputs.
    pub fn call(&self, args: &[Tensor]) -> Result<Vec<Tensor>, Error> {
        self.call_owned(args.to_vec())
    }

    /// [`Function::call`] taking the arguments by value: what a caller that builds the
    /// argument list for this call alone uses, saving a copy of it (the per-call path of the
    /// Python binding). The arguments are dropped as soon as the executor is done with them.
    pub fn call_owned(&self, args: Vec<Tensor>) -> Result<Vec<Tensor>, Error> {
        // SAFETY: no buffer is lent.
        unsafe { self.call_into(args, &[]) }
    }

    /// [`Function::call_owned`], offering `outs[j]` (when given) as the buffer output `j` may
    /// be written into: an output computed there is returned as a tensor sharing that storage
    /// (a backend may ignore the offer and allocate). What the Python binding uses to refill
    /// the arrays it returned on earlier calls.
    ///
    /// # Safety
    /// Each given buffer must be owned storage that nothing else reads or writes until this call
    /// returns (no other tensor the caller can reach, no argument, no shared variable), and no
    /// two may share storage.
    pub unsafe fn call_into(
        &self,
        args: Vec<Tensor>,
        outs: &[Option<Tensor>],
    ) -> Result<Vec<Tensor>, Error> {
        let Some(profile) = &self.inner.profile else {
            return self.call_checked(args, outs, None);
        };
        let started = Instant::now();
        let mut times = profile.buffer();
        let result = self.call_checked(args, &[], Some(&mut times));
        if result.is_ok() {
            profile.record(started.elapsed(), &times);
        }
        result
    }

    fn call_checked(
        &self,
        args: Vec<Tensor>,
        outs: &[Option<Tensor>],
        times: Option<&mut [Duration]>,
    ) -> Result<Vec<Tensor>, Error> {
        let inputs = self.inner.graph.inputs();
        if args.len() != inputs.len() {
            return Err(Error::Arity {
                name: self.name_part(),
                expected: inputs.len(),
                got: args.len(),
            });
        }
        // Arguments of exactly the input types (the usual case) need no conversion.
        let fit = || {
            args.iter()
                .zip(&self.inner.input_types)
                .all(|(a, ty)| ty.accepts(a.dtype(), a.shape()))
        };
        if self.trust_input.load(Ordering::Relaxed) || fit() {
            return self.run(args, outs, times);
        }
        let checked = args
            .iter()
            .enumerate()
            .map(|(i, a)| self.check_arg(i, a))
            .collect::<Result<Vec<_>, _>>()?;
        self.run(checked, outs, times)
    }

    /// Calls with positional arguments followed by arguments named after their inputs.
    pub fn call_named(
        &self,
        positional: &[Tensor],
        named: &[(&str, Tensor)],
    ) -> Result<Vec<Tensor>, Error> {
        let inputs = self.inner.graph.inputs();
        if positional.len() > inputs.len() {
            return Err(Error::Arity {
                name: self.name_part(),
                expected: inputs.len(),
                got: positional.len() + named.len(),
            });
        }
        let mut slots: Vec<Option<Tensor>> = positional
            .iter()
            .cloned()
            .map(Some)
            .chain(std::iter::repeat_n(None, inputs.len() - positional.len()))
            .collect();
        for (key, value) in named {
            let pos = inputs.iter().position(|v| v.name().as_deref() == Some(*key)).ok_or_else(|| {
                let names: Vec<String> = inputs.iter().filter_map(|v| v.name().map(|n| n.to_string())).collect();
                Error::Keyword(format!("function{} got an unexpected keyword argument '{key}' (inputs are named {names:?})", self.name_part()))
            })?;
            if slots[pos].replace(value.clone()).is_some() {
                return Err(Error::Keyword(format!(
                    "function{} got multiple values for argument '{key}'",
                    self.name_part()
                )));
            }
        }
        let missing: Vec<String> = slots
            .iter()
            .zip(inputs)
            .filter(|(s, _)| s.is_none())
            .map(|(_, v)| v.describe())
            .collect();
        if !missing.is_empty() {
            return Err(Error::Keyword(format!(
                "function{} is missing arguments: {}",
                self.name_part(),
                missing.join("; ")
            )));
        }
        let args: Vec<Tensor> = slots.into_iter().flatten().collect();
        self.call_owned(args)
    }

    fn name_part(&self) -> String {
        self.inner
            .name
            .as_ref()
            .map_or_else(String::new, |n| format!(" '{n}'"))
    }

    /// Checks (and where lossless, converts) argument `i` against its input's type.
    fn check_arg(&self, i: usize, arg: &Tensor) -> Result<Tensor, Error> {
        let ty = &self.inner.input_types[i];
        let var = &self.inner.graph.inputs()[i];
        let arg = if arg.dtype() == ty.dtype {
            arg.clone()
        } else if result_type(arg.dtype(), ty.dtype) == ty.dtype || self.inner.allow_input_downcast
        {
            arg.cast(ty.dtype)
        } else {
            return Err(Error::InputDType {
                input: var.describe(),
                expected: ty.dtype.to_string(),
                got: arg.dtype().to_string(),
                hint: " (the conversion would lose precision; cast the argument, or compile with allow_input_downcast=True)",
            });
        };
        if arg.ndim() != ty.ndim() {
            return Err(Error::InputRank {
                input: var.describe(),
                expected: ty.ndim(),
                got: arg.ndim(),
            });
        }
        if !ty.accepts(arg.dtype(), arg.shape()) {
            let dims: Vec<String> = ty
                .shape
                .iter()
                .map(|d| d.map_or("?".into(), |v| v.to_string()))
                .collect();
            return Err(Error::InputShape {
                input: var.describe(),
                expected: format!("({})", dims.join(", ")),
                got: arg.shape().to_vec(),
            });
        }
        Ok(arg)
    }

    fn run(
        &self,
        mut values: Vec<Tensor>,
        lent: &[Option<Tensor>],
        times: Option<&mut [Duration]>,
    ) -> Result<Vec<Tensor>, Error> {
        let mut guards = self.inner.locks.acquire(&mut values)?;
        let mut outs = match times {
            None if !lent.is_empty() => self.inner.exec.run_into(values, lent)?,
            times => self.inner.exec.run_timed(values, times)?,
        };
        let updates = outs.split_off(self.inner.n_outputs);
        for (target, value) in self.inner.update_targets.iter().zip(&updates) {
            check_value(target, value)?;
        }
        for (guard, value) in guards.iter_mut().zip(updates) {
            **guard = value;
        }
        Ok(outs)
    }

    /// Whether argument checks are skipped.
    pub fn trust_input(&self) -> bool {
        self.trust_input.load(Ordering::Relaxed)
    }

    /// Turns argument checks off (`true`) or on.
    pub fn set_trust_input(&self, trust: bool) {
        self.trust_input.store(trust, Ordering::Relaxed);
    }

    /// The compiled graph (inputs, outputs followed by update expressions).
    pub fn graph(&self) -> &FunctionGraph {
        &self.inner.graph
    }

    /// The explicit inputs.
    pub fn inputs(&self) -> &[Var] {
        self.inner.graph.inputs()
    }

    /// Number of user outputs (excluding updates).
    pub fn n_outputs(&self) -> usize {
        self.inner.n_outputs
    }

    /// The timings so far, when compiled with [`FunctionBuilder::profile`].
    pub fn profile(&self) -> Option<Profile> {
        self.inner.profile.as_ref().map(Recorder::snapshot)
    }

    /// PyTensor-style `debugprint` of the compiled graph.
    pub fn dprint(&self, opts: PrintOptions) -> String {
        debugprint(self.inner.graph.outputs(), opts)
    }
}
