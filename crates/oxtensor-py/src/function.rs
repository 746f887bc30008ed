//! Compiled functions: `oxtensor._core.compile` builds one through the facade, and
//! [`PyFunction::__call__`] is the hot path — NumPy arrays in without a copy, the facade's
//! checked call, outputs out as arrays that own the Rust buffers.

use oxtensor::{Function, OnUnusedInput, PrintOptions, Tensor, Var};
use oxtensor_data::DType;
use oxtensor_graph::Op;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::call_state::{ArgCache, CallState};
use crate::convert::{
    self, deep_copy, is_ndarray, ndarray_to_tensor, output_array, owned, python_number_to_tensor,
};
use crate::errors::{ox_err, type_err, value_err};
use crate::recycle::Kept;
use oxtensor::oxtensor_runtime::{Held, TryLock};
use smallvec::SmallVec;

/// Per output, the released array lent to the executor for this call, if any.
type Lent = SmallVec<[Option<Kept>; 1]>;
use crate::site::at_user_site;
use crate::var::var_of;

/// Registers `compile`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(mode_exists, m)?)?;
    Ok(())
}

/// The Python module implementing pickling and copies of functions.
fn pickling(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import(intern!(py, "oxtensor.compile.pickling"))
}

/// Total input elements above which a call releases the GIL while it runs.
const DETACH_ELEMENTS: usize = 1 << 15;

/// A compiled function (PyTensor's `Function`): call it with arrays (or anything `np.asarray`
/// accepts) by position or by input name.
#[pyclass(frozen, name = "Function", module = "oxtensor.compile.function")]
pub struct PyFunction {
    f: Function,
    /// Return the single output as an array rather than a list.
    single: bool,
    n_inputs: usize,
    /// Names accepted as keywords, per input.
    names: Vec<Option<String>>,
    /// Default values (`In(x, value=...)`), per input.
    defaults: Vec<Option<Tensor>>,
    /// Inputs whose value may be stored by an update (through views): copied on entry so a
    /// shared variable never aliases the caller's array.
    must_copy: Vec<bool>,
    /// The shared variables this function updates (checked after each call, see
    /// [`PyFunction::own_updated_values`]).
    update_targets: Vec<Var>,
    dtypes: Vec<DType>,
    allow_downcast: Option<bool>,
    name: Option<String>,
    /// How `oxtensor.function` was called (set once by it): what pickling, `copy` and
    /// `oxtensor.save` rebuild the function from (`oxtensor.compile.pickling`).
    recipe: std::sync::OnceLock<Py<PyAny>>,
    /// The last small arguments, wrapped, and per output the small arrays it returned,
    /// reused once the caller lets go of them.
    state: TryLock<CallState>,
}

fn vars_list(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<Var>> {
    obj.try_iter()?
        .map(|item| {
            let item = item?;
            var_of(&item).ok_or_else(|| {
                type_err(format!(
                    "{what} must be symbolic variables, got {}",
                    item.repr().map(|r| r.to_string()).unwrap_or_default()
                ))
            })
        })
        .collect()
}

fn pairs_list(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<(Var, Var)>> {
    obj.try_iter()?
        .map(|item| {
            let item = item?;
            let (a, b): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item
                .extract()
                .map_err(|_| type_err(format!("{what} must be (variable, expression) pairs")))?;
            match (var_of(&a), var_of(&b)) {
                (Some(a), Some(b)) => Ok((a, b)),
                _ => Err(type_err(format!(
                    "{what} must pair symbolic variables, got ({}, {})",
                    a.repr().map(|r| r.to_string()).unwrap_or_default(),
                    b.repr().map(|r| r.to_string()).unwrap_or_default()
                ))),
            }
        })
        .collect()
}

/// Inputs that an update expression may hand on unchanged (through view-like ops) into a
/// shared variable.
fn inputs_reaching_updates(f: &Function) -> Vec<bool> {
    let graph = f.graph();
    let inputs = graph.inputs();
    let mut flags = vec![false; inputs.len()];
    let mut stack: Vec<Var> = graph.outputs()[f.n_outputs()..].to_vec();
    while let Some(v) = stack.pop() {
        if let Some(i) = inputs.iter().position(|x| *x == v) {
            flags[i] = true;
            continue;
        }
        if let Some((op, ins)) = v.owner()
            && (op.is_view() || matches!(op, Op::Reshape { .. } | Op::Alloc { .. }))
            && let Some(first) = ins.first()
        {
            stack.push(first.clone());
        }
    }
    flags
}

/// True when `name` is a mode the facade knows.
#[pyfunction]
fn mode_exists(name: &str) -> bool {
    oxtensor::Mode::by_name(name).is_some()
}

/// The facade mode for a Python mode spec: `(name, linker, optimizer, including, excluding,
/// requiring)` as built by `oxtensor.compile.mode.Mode`; `name` wins when given.
fn mode_of(spec: &Bound<'_, PyAny>) -> PyResult<oxtensor::Mode> {
    type Spec = (
        Option<String>,
        Option<String>,
        Option<String>,
        Vec<String>,
        Vec<String>,
        Vec<String>,
    );
    let (name, linker, optimizer, including, excluding, requiring): Spec = spec.extract()?;
    let base = match name {
        Some(n) => oxtensor::Mode::by_name(&n).ok_or_else(|| {
            value_err(format!(
                "unknown mode {n:?}; use None, 'FAST_RUN' or 'FAST_COMPILE'"
            ))
        })?,
        None => oxtensor::Mode::new(
            linker.as_deref().unwrap_or("auto"),
            optimizer.as_deref().unwrap_or("fast_run"),
        )
        .map_err(ox_err)?,
    };
    fn as_refs(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    let mut mode = base;
    if !including.is_empty() {
        mode = mode.including(&as_refs(&including));
    }
    if !excluding.is_empty() {
        mode = mode.excluding(&as_refs(&excluding));
    }
    if !requiring.is_empty() {
        mode = mode.requiring(&as_refs(&requiring));
    }
    Ok(mode)
}

/// Compiles a function (the Python `oxtensor.function` normalises PyTensor's arguments first).
#[pyfunction]
#[pyo3(signature = (inputs, outputs, single, updates, givens, mode, name, on_unused_input, trust_input, allow_input_downcast, defaults, input_names, profile = false))]
#[allow(clippy::too_many_arguments)]
fn compile(
    py: Python<'_>,
    inputs: &Bound<'_, PyAny>,
    outputs: &Bound<'_, PyAny>,
    single: bool,
    updates: &Bound<'_, PyAny>,
    givens: &Bound<'_, PyAny>,
    mode: &Bound<'_, PyAny>,
    name: Option<String>,
    on_unused_input: Option<&str>,
    trust_input: bool,
    allow_input_downcast: Option<bool>,
    defaults: &Bound<'_, PyAny>,
    input_names: Vec<Option<String>>,
    profile: bool,
) -> PyResult<PyFunction> {
    let ins = vars_list(inputs, "function inputs")?;
    let outs = vars_list(outputs, "function outputs")?;
    let ups = pairs_list(updates, "updates")?;
    let gvs = pairs_list(givens, "givens")?;
    let mode = mode_of(mode)?;
    let policy: OnUnusedInput = on_unused_input.unwrap_or("raise").parse().map_err(ox_err)?;
    let mut builder = oxtensor::function(&ins, &outs)
        .updates(&ups)
        .givens(&gvs)
        .on_unused_input(policy)
        .trust_input(trust_input)
        .allow_input_downcast(allow_input_downcast.unwrap_or(false))
        .mode(mode)
        .profile(profile);
    if let Some(n) = &name {
        builder = builder.name(n);
    }
    let f = at_user_site(py, || builder.build()).map_err(ox_err)?;
    let dtypes: Vec<DType> = ins.iter().map(Var::dtype).collect();
    let defaults: Vec<Option<Tensor>> = defaults
        .try_iter()?
        .enumerate()
        .map(|(i, d)| {
            let d = d?;
            if d.is_none() {
                return Ok(None);
            }
            let dt = dtypes
                .get(i)
                .copied()
                .ok_or_else(|| value_err("too many defaults"))?;
            let arr = coerce(py, &d, dt, allow_input_downcast)
                .map_err(|e| prefix_err(py, e, &ins[i].describe()))?;
            Ok(Some(owned(convert::plain_array_to_tensor(py, &arr)?)?))
        })
        .collect::<PyResult<_>>()?;
    if defaults.len() != ins.len() || input_names.len() != ins.len() {
        return Err(value_err(
            "internal error: defaults and names must match the inputs",
        ));
    }
    let must_copy = inputs_reaching_updates(&f);
    let update_targets = ups.iter().map(|(t, _)| t.clone()).collect();
    let state = TryLock::new(CallState::new(ins.len(), f.n_outputs()));
    Ok(PyFunction {
        state,
        update_targets,
        single,
        n_inputs: ins.len(),
        names: input_names,
        defaults,
        must_copy,
        dtypes,
        allow_downcast: allow_input_downcast,
        name,
        f,
        recipe: std::sync::OnceLock::new(),
    })
}

/// `oxtensor._convert.coerce(value, dtype, allow_downcast)`: PyTensor's argument conversion.
fn coerce<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    dtype: DType,
    allow_downcast: Option<bool>,
) -> PyResult<Bound<'py, PyAny>> {
    convert::helpers(py)?
        .getattr(intern!(py, "coerce"))?
        .call1((value, dtype.name(), allow_downcast))
}

/// The same exception with `bad input argument {what}: ` in front of its message.
pub fn prefix_err(py: Python<'_>, e: PyErr, what: &str) -> PyErr {
    let msg = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
    let ty = e.get_type(py);
    let full = format!("bad input argument {what}: {msg}");
    PyErr::from_type(ty, full)
}

/// Returns arrays lent for a call that did not get to use them.
fn give_back(state: Option<&mut CallState>, lent: Lent) {
    let Some(state) = state else { return };
    for (r, kept) in state.outs.iter_mut().zip(lent) {
        if let Some(kept) = kept {
            drop(r.give_back(kept));
        }
    }
}

impl PyFunction {
    /// The call state for this call, or `None` when another call holds it (one on another
    /// thread, or one made from inside this one): that call then keeps and reuses nothing.
    #[inline]
    fn hold(&self) -> Option<Held<'_, CallState>> {
        self.state.try_lock()
    }

    fn name_part(&self) -> String {
        self.name
            .as_ref()
            .map_or_else(String::new, |n| format!(" '{n}'"))
    }

    /// Argument `i` as a tensor: zero-copy for plain arrays, direct for Python numbers of the
    /// input's dtype, else converted in Python.
    #[inline]
    fn arg(&self, py: Python<'_>, i: usize, obj: &Bound<'_, PyAny>) -> PyResult<Tensor> {
        let fast = if is_ndarray(py, obj) {
            ndarray_to_tensor(obj)
        } else {
            python_number_to_tensor(obj, self.dtypes[i])
        };
        let t = match fast {
            Some(t) => t,
            None => self.slow_arg(py, i, obj)?,
        };
        if self.must_copy[i] {
            deep_copy(&t)
        } else {
            Ok(t)
        }
    }

    /// Argument `i`, through the argument cache when it is an array: the tensor of the last
    /// call when the same array comes again unchanged, else a fresh one, remembered.
    #[inline]
    fn cached_arg(
        &self,
        py: Python<'_>,
        i: usize,
        obj: &Bound<'_, PyAny>,
        cache: Option<&mut ArgCache>,
    ) -> PyResult<Tensor> {
        let Some(cache) = cache.filter(|_| !self.must_copy[i] && is_ndarray(py, obj)) else {
            return self.arg(py, i, obj);
        };
        if let Some(t) = cache.get(i, obj) {
            return Ok(t);
        }
        match ndarray_to_tensor(obj) {
            Some(t) => {
                cache.put(i, obj, &t);
                Ok(t)
            }
            None => self.slow_arg(py, i, obj),
        }
    }

    #[cold]
    fn slow_arg(&self, py: Python<'_>, i: usize, obj: &Bound<'_, PyAny>) -> PyResult<Tensor> {
        let arr = coerce(py, obj, self.dtypes[i], self.allow_downcast)
            .map_err(|e| prefix_err(py, e, &self.f.inputs()[i].describe()))?;
        convert::plain_array_to_tensor(py, &arr)
    }

    /// Binds positional and keyword arguments, filling defaults.
    #[cold]
    fn bind(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
        vals: &mut Vec<Tensor>,
    ) -> PyResult<()> {
        let n = self.n_inputs;
        if args.len() > n {
            return Err(type_err(format!(
                "function{} takes {n} arguments, got {}",
                self.name_part(),
                args.len() + kwargs.map_or(0, |k| k.len())
            )));
        }
        let mut slots: Vec<Option<Tensor>> = vec![None; n];
        for (i, a) in args.iter().enumerate() {
            slots[i] = Some(self.arg(py, i, &a)?);
        }
        if let Some(kw) = kwargs {
            for (k, v) in kw.iter() {
                let key = k.cast::<PyString>()?.to_str()?.to_owned();
                let pos = self
                    .names
                    .iter()
                    .position(|n| n.as_deref() == Some(key.as_str()))
                    .ok_or_else(|| {
                        let known: Vec<&str> = self.names.iter().flatten().map(String::as_str).collect();
                        type_err(format!(
                            "function{} got an unexpected keyword argument '{key}' (inputs are named {known:?})",
                            self.name_part()
                        ))
                    })?;
                if slots[pos].is_some() {
                    return Err(type_err(format!(
                        "function{} got multiple values for argument '{key}'",
                        self.name_part()
                    )));
                }
                slots[pos] = Some(self.arg(py, pos, &v)?);
            }
        }
        let mut missing = Vec::new();
        for (i, slot) in slots.iter_mut().enumerate() {
            if slot.is_none() {
                match &self.defaults[i] {
                    Some(d) => *slot = Some(d.clone()),
                    None => missing.push(self.f.inputs()[i].describe()),
                }
            }
        }
        if !missing.is_empty() {
            return Err(type_err(format!(
                "function{} takes {n} arguments, got {}; missing: {}",
                self.name_part(),
                n - missing.len(),
                missing.join("; ")
            )));
        }
        vals.extend(slots.into_iter().flatten());
        Ok(())
    }

    /// Makes sure no shared variable holds a caller's array after a call: an update that
    /// handed an input on unchanged (through ops the compile-time analysis of `must_copy` does
    /// not know, e.g. after a rewrite) is replaced by an owned copy. One read lock per update.
    #[inline]
    fn own_updated_values(&self) -> PyResult<()> {
        for target in &self.update_targets {
            if let Ok(v) = oxtensor::get_value(target)
                && !v.storage().is_owned()
            {
                oxtensor::set_value(target, deep_copy(&v)?).map_err(ox_err)?;
            }
        }
        Ok(())
    }

    /// The call's arguments as tensors, in input order.
    #[inline]
    fn arguments(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
        state: Option<&mut CallState>,
    ) -> PyResult<Vec<Tensor>> {
        let mut vals = Vec::with_capacity(self.n_inputs);
        if kwargs.is_none_or(|k| k.is_empty()) && args.len() == self.n_inputs {
            let mut cache = state.map(|s| &mut s.args);
            for (i, a) in args.iter_borrowed().enumerate() {
                vals.push(self.cached_arg(py, i, &a, cache.as_deref_mut())?);
            }
        } else {
            self.bind(py, args, kwargs, &mut vals)?;
        }
        Ok(vals)
    }

    /// Runs the compiled function on `vals`, with the GIL released when the inputs are large
    /// (or `detach`), and applies the updates. Returns the outputs and, per output, the
    /// released array whose buffer was lent to the executor (see [`Recycler::lend`]).
    #[inline]
    fn execute(
        &self,
        py: Python<'_>,
        vals: Vec<Tensor>,
        detach: bool,
        mut state: Option<&mut CallState>,
    ) -> PyResult<(Vec<Tensor>, Lent)> {
        let mut lent = Lent::new();
        let mut bufs: SmallVec<[Option<Tensor>; 1]> = SmallVec::new();
        for r in state.iter_mut().flat_map(|s| s.outs.iter_mut()) {
            let kept = r.lend(py);
            bufs.push(kept.as_ref().map(Kept::buffer));
            lent.push(kept);
        }
        let bufs = if bufs.iter().all(Option::is_none) {
            &[][..]
        } else {
            &bufs[..]
        };
        let elements: usize = vals.iter().map(Tensor::numel).sum();
        let f = &self.f;
        let result = if detach || elements > DETACH_ELEMENTS {
            let v = &vals;
            // SAFETY: each lent buffer is the storage of a released array that only its
            // recycler (which took it out of its pool for this call) and the array's capsule
            // hold, so nothing else reads or writes it until the call returns; every output
            // has its own recycler, so no two buffers share storage.
            let result = py.detach(move || unsafe { f.call_into(v.to_vec(), bufs) });
            // Release the inputs (with the GIL held, as they may hold arrays) before the
            // outputs are converted, so outputs that still share a buffer with them are seen
            // as shared (and copied) only when they really are.
            drop(vals);
            result
        } else {
            // SAFETY: as above. The executor drops the inputs as soon as it is done with them.
            unsafe { f.call_into(vals, bufs) }
        };
        let warned = oxtensor::oxtensor_runtime::warnings::take();
        let outs = match result {
            Ok(outs) => outs,
            Err(e) => {
                give_back(state, lent);
                return Err(ox_err(e));
            }
        };
        if let Err(e) = crate::errors::runtime_warnings(py, warned) {
            give_back(state, lent);
            return Err(e);
        }
        if let Err(e) = self.own_updated_values() {
            give_back(state, lent);
            return Err(e);
        }
        Ok((outs, lent))
    }

    /// Output `i` as a NumPy array, in a released array it returned before when it can
    /// (`lent`, when the executor wrote the output into its buffer).
    #[inline]
    fn output<'py>(
        &self,
        py: Python<'py>,
        i: usize,
        t: Tensor,
        lent: Option<Kept>,
        state: Option<&mut CallState>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match state.and_then(|s| s.outs.get_mut(i)) {
            Some(r) => r.array(py, t, lent),
            None => output_array(py, t),
        }
    }

    /// The outputs as NumPy arrays: the array of the single output, else a list.
    #[inline]
    fn results(
        &self,
        py: Python<'_>,
        mut outs: Vec<Tensor>,
        lent: Lent,
        mut state: Option<&mut CallState>,
    ) -> PyResult<Py<PyAny>> {
        let mut lent = lent.into_iter();
        if self.single {
            let t = outs
                .pop()
                .ok_or_else(|| value_err("internal error: the function returned no output"))?;
            let kept = lent.next().flatten();
            return Ok(self.output(py, 0, t, kept, state)?.unbind());
        }
        let list = PyList::empty(py);
        for (i, t) in outs.into_iter().enumerate() {
            let kept = lent.next().flatten();
            list.append(self.output(py, i, t, kept, state.as_deref_mut())?)?;
        }
        Ok(list.into_any().unbind())
    }
}

#[pymethods]
impl PyFunction {
    /// Calls the function: one array per input, by position or by input name. Returns an array
    /// for a single output, else a list. Updates are applied only after a successful call.
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let mut state = self.hold();
        let vals = self.arguments(py, args, kwargs, state.as_deref_mut())?;
        let (outs, lent) = self.execute(py, vals, false, state.as_deref_mut())?;
        self.results(py, outs, lent, state.as_deref_mut())
    }

    /// Runs the call path on positional `args` up to `stage` and returns `None` (a test and
    /// benchmark hook, `bench/call_overhead.py`): 0 returns at once, 1 converts the arguments,
    /// 2 also runs the executor, 3 also makes the output arrays, 4 is 2 with the GIL released
    /// around the executor.
    #[pyo3(signature = (stage, *args))]
    fn _call_stages(&self, py: Python<'_>, stage: u8, args: &Bound<'_, PyTuple>) -> PyResult<()> {
        if stage == 0 {
            return Ok(());
        }
        let mut state = self.hold();
        let vals = self.arguments(py, args, None, state.as_deref_mut())?;
        if stage == 1 {
            return Ok(());
        }
        let (outs, lent) = self.execute(py, vals, stage == 4, state.as_deref_mut())?;
        if stage == 3 {
            self.results(py, outs, lent, state.as_deref_mut())?;
        } else {
            give_back(state.as_deref_mut(), lent);
        }
        Ok(())
    }

    /// The timings (`ProfileStats`) when compiled with `profile=True`, else `None`.
    #[getter]
    fn profile(&self) -> Option<crate::profile::PyProfile> {
        self.f
            .profile()
            .map(|_| crate::profile::PyProfile { f: self.f.clone() })
    }

    /// Whether argument checks are skipped (settable).
    #[getter]
    fn trust_input(&self) -> bool {
        self.f.trust_input()
    }

    /// Turns argument checks off (`True`) or on.
    #[setter]
    fn set_trust_input(&self, trust: bool) {
        self.f.set_trust_input(trust);
    }

    /// The name given at compile time.
    #[getter]
    fn name(&self) -> Option<String> {
        self.name.clone()
    }

    /// Number of explicit inputs.
    #[getter]
    fn n_inputs(&self) -> usize {
        self.n_inputs
    }

    /// Number of outputs (excluding updates).
    #[getter]
    fn n_outputs(&self) -> usize {
        self.f.n_outputs()
    }

    /// The input variables.
    #[getter]
    fn inputs(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.f
            .inputs()
            .iter()
            .map(|v| crate::var::wrap(py, v.clone()))
            .collect()
    }

    /// The compiled graph's outputs (user outputs, then update expressions).
    #[getter]
    fn _graph_outputs(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.f
            .graph()
            .outputs()
            .iter()
            .map(|v| crate::var::wrap(py, v.clone()))
            .collect()
    }

    /// PyTensor's `debugprint` text of the compiled graph.
    #[pyo3(signature = (print_type=false, depth=None))]
    fn _dprint(&self, print_type: bool, depth: Option<usize>) -> String {
        self.f.dprint(PrintOptions { print_type, depth })
    }

    /// Prints the compiled graph as `oxtensor.dprint(f, **kwargs)` does.
    #[pyo3(signature = (**kwargs))]
    fn dprint<'py>(
        slf: &Bound<'py, Self>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        py.import(intern!(py, "oxtensor.printing"))?
            .getattr(intern!(py, "debugprint"))?
            .call((slf,), kwargs)
    }

    /// Records how the function was built (`oxtensor.function` calls this once).
    fn _set_recipe(&self, recipe: Py<PyAny>) {
        let _ = self.recipe.set(recipe);
    }

    /// How the function was built, or `None` for one not built by `oxtensor.function`.
    #[getter]
    fn _recipe(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.recipe.get().map(|r| r.clone_ref(py))
    }

    /// The compiled (rewritten) graph as a no-code document: user outputs, and the update
    /// expressions as updates of their shared variables (what `jax_funcify` translates); with
    /// the shared variables of the document's node table, in table order.
    fn _serialized_graph(&self, py: Python<'_>) -> PyResult<(String, Vec<Py<PyAny>>)> {
        let g = self.f.graph();
        let n = self.f.n_outputs();
        let outputs = g.outputs();
        let updates = self
            .update_targets
            .iter()
            .cloned()
            .zip(outputs.iter().skip(n).cloned())
            .collect();
        let roots: Vec<Var> = outputs.to_vec();
        let (text, shared) = oxtensor_serial::encode_with_shared(&oxtensor_serial::Bundle {
            inputs: g.inputs().to_vec(),
            outputs: outputs.iter().take(n).cloned().collect(),
            updates,
            givens: Vec::new(),
            generators: crate::serial::generators_read(&roots),
            meta: serde_json::Value::Null,
        });
        let shared = shared
            .into_iter()
            .map(|v| crate::var::wrap(py, v))
            .collect::<PyResult<_>>()?;
        Ok((text, shared))
    }

    /// Pickling: the function is written in the no-code format and compiled again when
    /// loaded (`oxtensor.compile.pickling`).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        pickling(slf.py())?.call_method1("_reduce_function", (slf,))
    }

    /// `copy.copy`: an independent function sharing the shared variables.
    fn __copy__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        pickling(slf.py())?.call_method1("copy_function", (slf, true))
    }

    /// `copy.deepcopy`: a function with its own copies of the shared variables.
    fn __deepcopy__<'py>(
        slf: &Bound<'py, Self>,
        _memo: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        pickling(slf.py())?.call_method1("copy_function", (slf, false))
    }

    /// PyTensor's `Function.copy(share_memory=False, swap=None, name=None, ...)`: a new
    /// function of the same graph; `share_memory` keeps the shared variables, `swap` maps
    /// shared variables to replacements.
    #[pyo3(signature = (share_memory=false, swap=None, delete_updates=false, name=None, profile=None))]
    fn copy<'py>(
        slf: &Bound<'py, Self>,
        share_memory: bool,
        swap: Option<&Bound<'py, PyAny>>,
        delete_updates: bool,
        name: Option<&str>,
        profile: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let kwargs = pyo3::types::PyDict::new(slf.py());
        kwargs.set_item("swap", swap)?;
        kwargs.set_item("delete_updates", delete_updates)?;
        kwargs.set_item("name", name)?;
        kwargs.set_item("profile", profile)?;
        pickling(slf.py())?.call_method("copy_function", (slf, share_memory), Some(&kwargs))
    }

    /// Releases the output arrays the function keeps for reuse and the input arrays it
    /// remembers (PyTensor's `free`: storage kept between calls); the next call allocates its
    /// outputs and wraps its arguments afresh. A call running meanwhile on another thread
    /// keeps what it holds.
    fn free(&self) {
        let kept = self.hold().map(|mut s| s.forget());
        drop(kept);
    }

    fn __repr__(&self) -> String {
        format!(
            "<oxtensor Function{} ({} inputs, {} outputs)>",
            self.name_part(),
            self.n_inputs,
            self.f.n_outputs()
        )
    }
}
