//! Random variables in Python: the `RandomGeneratorSharedVariable` class (a shared generator
//! whose value is a NumPy `Generator`), the `random_variable` builder behind
//! `oxtensor.tensor.random`, and the default updates (PyTensor's `default_update`) that
//! `function` adds for shared generators.
//!
//! A generator is a `uint64` vector of PCG64 state words in the graph
//! ([`oxtensor::random::RNG_WORDS`]); this module converts to and from NumPy `Generator`s
//! through two helpers of `oxtensor.tensor.random.variable` (`_generator_from_words`,
//! `_words_from_generator`). Which shared variables hold generators, and their default
//! updates, is kept in a registry keyed by the variable, so every Python wrapper of the same
//! variable sees them.

use oxtensor::random::{self as rnd, Distribution};
use oxtensor_data::Tensor;
use oxtensor_graph::{NodeKind, Var, toposort};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyTuple;
use pyo3::{IntoPyObjectExt, intern};
use std::collections::{HashMap, HashSet};
use std::sync::{LazyLock, Mutex, PoisonError};

use crate::errors::{graph_err, ox_err, type_err, value_err};
use crate::site::at_user_site;
use crate::var::{PyVar, as_var, var_of, wrap};

/// Shared generator variables and their default updates.
static GENERATORS: LazyLock<Mutex<HashMap<Var, Option<Var>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

static HELPERS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn helpers(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    HELPERS
        .get_or_try_init(py, || {
            py.import(intern!(py, "oxtensor.tensor.random.variable"))
                .map(Bound::unbind)
        })
        .map(|m| m.bind(py))
}

fn registry() -> std::sync::MutexGuard<'static, HashMap<Var, Option<Var>>> {
    GENERATORS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// True when `v` is a shared variable holding a generator.
pub fn is_generator(v: &Var) -> bool {
    registry().contains_key(v)
}

/// `None` when `v` is not a shared generator, else `Some` of its default update (for the
/// serialized format, which records generators).
pub fn generator_entry(v: &Var) -> Option<Option<Var>> {
    registry().get(v).cloned()
}

/// Marks `v` as a shared generator with default update `update` (a decoded graph's).
pub fn register_generator(v: Var, update: Option<Var>) {
    registry().insert(v, update);
}

/// Wraps a shared generator variable in its Python class.
pub fn wrap_generator(py: Python<'_>, v: Var) -> PyResult<Py<PyAny>> {
    let init = PyClassInitializer::from(PyVar { v }).add_subclass(PyRandomGenerator);
    Ok(Bound::new(py, init)?.into_any().unbind())
}

/// The state words of a NumPy `Generator` (PCG64 only), as a generator value.
fn words_of(py: Python<'_>, generator: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let words: Vec<u64> = helpers(py)?
        .getattr(intern!(py, "_words_from_generator"))?
        .call1((generator,))?
        .extract()?;
    Tensor::from_slice(&words, &[words.len()]).map_err(|e| value_err(e.to_string()))
}

/// A shared variable holding a NumPy `Generator` (PyTensor's `RandomGeneratorSharedVariable`):
/// `get_value()` returns a new `Generator` in the stored state, `set_value` takes one, and a
/// function advances it through updates (explicit, or its `default_update`).
#[pyclass(frozen, extends = PyVar, name = "RandomGeneratorSharedVariable", module = "oxtensor.tensor.random.var")]
pub struct PyRandomGenerator;

#[pymethods]
impl PyRandomGenerator {
    /// The stored generator as a new NumPy `Generator` (changing it does not change the
    /// variable; `borrow` is accepted for compatibility).
    #[pyo3(signature = (borrow=false, return_internal_type=false))]
    fn get_value<'py>(
        slf: &Bound<'py, Self>,
        borrow: bool,
        return_internal_type: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = (borrow, return_internal_type);
        let py = slf.py();
        let t = oxtensor::get_value(&slf.as_super().get().v).map_err(ox_err)?;
        helpers(py)?
            .getattr(intern!(py, "_generator_from_words"))?
            .call1((t.to_vec_as::<u64>(),))
    }

    /// Stores a copy of NumPy `Generator` `value`'s state, or, with `seed`, the state of
    /// `np.random.default_rng(seed)` (PyTensor 3's `set_value(seed=...)`).
    #[pyo3(signature = (value=None, borrow=false, seed=None))]
    fn set_value(
        slf: &Bound<'_, Self>,
        value: Option<&Bound<'_, PyAny>>,
        borrow: bool,
        seed: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let _ = borrow;
        let py = slf.py();
        let t = match (value, seed) {
            (Some(v), None) if !v.is_none() => words_of(py, v)?,
            (None, Some(s)) => {
                let g = py
                    .import(intern!(py, "numpy.random"))?
                    .getattr(intern!(py, "default_rng"))?
                    .call1((s,))?;
                words_of(py, &g)?
            }
            _ => {
                return Err(value_err(
                    "set_value takes either a Generator value or a seed",
                ));
            }
        };
        oxtensor::set_value(&slf.as_super().get().v, t).map_err(ox_err)
    }

    /// The expression `function` stores into this variable after each call when no explicit
    /// update is given (and `no_default_updates` is false); `None` when there is none.
    #[getter]
    fn get_default_update(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let v = &slf.as_super().get().v;
        let update = registry().get(v).cloned().flatten();
        match update {
            Some(u) => wrap(slf.py(), u),
            None => Ok(slf.py().None()),
        }
    }

    /// Sets (or, with `None`, removes) the default update.
    #[setter]
    fn set_default_update(
        slf: &Bound<'_, Self>,
        update: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let v = slf.as_super().get().v.clone();
        let update = match update {
            Some(u) if !u.is_none() => Some(
                var_of(u).ok_or_else(|| type_err("default_update must be a symbolic variable"))?,
            ),
            _ => None,
        };
        if let Some(u) = &update
            && !v.ty().accepts(u.dtype(), &[rnd::RNG_WORDS])
        {
            return Err(type_err(format!(
                "the default update of {} must be a random generator, got {}",
                v.describe(),
                u.describe()
            )));
        }
        registry().insert(v, update);
        Ok(())
    }

    /// The method API (`rng.normal(...)` returns `(next_rng, draw)`): any distribution of
    /// `oxtensor.tensor.random` drawn from this generator.
    fn __getattr__<'py>(slf: &Bound<'py, Self>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        helpers(py)?
            .getattr(intern!(py, "_method"))?
            .call1((slf, name))
    }

    /// Shared variables answer true.
    #[getter]
    fn _is_shared(&self) -> bool {
        true
    }
}

/// A shared generator variable holding NumPy `Generator` `generator`'s state.
#[pyfunction]
#[pyo3(signature = (generator, name=None))]
fn shared_generator(
    py: Python<'_>,
    generator: &Bound<'_, PyAny>,
    name: Option<&str>,
) -> PyResult<Py<PyAny>> {
    let t = words_of(py, generator)?;
    let v = at_user_site(py, || oxtensor::shared(t, name));
    registry().insert(v.clone(), None);
    wrap_generator(py, v)
}

/// The `size` input: `None`, an integer, a sequence of integers or scalars, or an integer
/// vector variable.
fn size_arg(py: Python<'_>, size: &Bound<'_, PyAny>) -> PyResult<Option<Var>> {
    if size.is_none() {
        return Ok(None);
    }
    if let Some(v) = var_of(size) {
        return match v.ndim() {
            0 => at_user_site(py, || rnd::size_vector(Some(&[v])))
                .map(Some)
                .map_err(graph_err),
            _ => Ok(Some(v)),
        };
    }
    if let Ok(n) = size.extract::<i64>() {
        let dims = [Var::int_constant(n)];
        return at_user_site(py, || rnd::size_vector(Some(&dims)))
            .map(Some)
            .map_err(graph_err);
    }
    let dims: Vec<Var> = size
        .try_iter()
        .map_err(|_| type_err("size must be None, an int, a tuple of ints or an integer vector"))?
        .map(|item| as_var(py, &item?))
        .collect::<PyResult<_>>()?;
    at_user_site(py, || rnd::size_vector(Some(&dims)))
        .map(Some)
        .map_err(graph_err)
}

/// `(next_rng, draw)` of distribution `name` (PyTensor's name) with generator `rng`,
/// parameters `params` in PyTensor's order, `size` and `dtype` (`None`: the default).
#[pyfunction]
#[pyo3(signature = (name, rng, size, params, dtype=None))]
fn random_variable(
    py: Python<'_>,
    name: &str,
    rng: &Bound<'_, PyAny>,
    size: &Bound<'_, PyAny>,
    params: Vec<Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyTuple>> {
    let dist = Distribution::by_name(name)
        .ok_or_else(|| value_err(format!("unknown distribution {name:?}")))?;
    let rng = var_of(rng).ok_or_else(|| {
        type_err(
            "rng must be a random generator variable (pytensor.shared(np.random.default_rng(...)))",
        )
    })?;
    let size = size_arg(py, size)?;
    let params: Vec<Var> = params
        .iter()
        .map(|p| as_var(py, p))
        .collect::<PyResult<_>>()?;
    let dtype = match dtype {
        Some(d) if !d.is_none() => Some(crate::builders::dtype_arg(py, d)?),
        _ => None,
    };
    let (next, draw) = at_user_site(py, || {
        rnd::random_variable(dist, &rng, size.as_ref(), &params, dtype)
    })
    .map_err(graph_err)?;
    PyTuple::new(py, [wrap(py, next)?, wrap(py, draw)?]).map(Bound::unbind)
}

/// The default updates of the shared generators the graphs of `outputs` read:
/// `(variable, update)` pairs, each variable once, in graph order.
#[pyfunction]
fn default_updates(py: Python<'_>, outputs: Vec<Bound<'_, PyAny>>) -> PyResult<Vec<Py<PyAny>>> {
    let outs: Vec<Var> = outputs.iter().filter_map(var_of).collect();
    let known = registry().clone();
    let order = toposort(&outs);
    let leaves = outs
        .iter()
        .chain(order.iter().flat_map(|n| n.inputs()))
        .filter(|&v| matches!(v.node().kind(), NodeKind::Shared(_)))
        .cloned();
    let mut seen = HashSet::new();
    let mut pairs = Vec::new();
    for v in leaves {
        if !seen.insert(v.clone()) {
            continue;
        }
        if let Some(Some(update)) = known.get(&v) {
            pairs.push((wrap(py, v)?, wrap(py, update.clone())?).into_py_any(py)?);
        }
    }
    Ok(pairs)
}

/// PyTensor's `Apply` view of the node computing `v` (`variable.owner`): a
/// `types.SimpleNamespace` with `op` (the op as text), `inputs` and `outputs` (lists of
/// variables), or `None` for a leaf, so code reaching a random variable's next generator as
/// `x.owner.outputs[0]` runs unchanged.
pub fn owner(py: Python<'_>, v: &Var) -> PyResult<Py<PyAny>> {
    let Some((op, inputs)) = v.owner() else {
        return Ok(py.None());
    };
    let node = v.node();
    let outputs = (0..node.types().len())
        .map(|k| wrap(py, Var::output_of(node, k)))
        .collect::<PyResult<Vec<_>>>()?;
    let inputs = inputs
        .iter()
        .map(|i| wrap(py, i.clone()))
        .collect::<PyResult<Vec<_>>>()?;
    let fields = pyo3::types::PyDict::new(py);
    fields.set_item("op", op.to_string())?;
    fields.set_item("inputs", inputs)?;
    fields.set_item("outputs", outputs)?;
    Ok(py
        .import("types")?
        .getattr("SimpleNamespace")?
        .call((), Some(&fields))?
        .unbind())
}

/// Registers the class and functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRandomGenerator>()?;
    m.add_function(wrap_pyfunction!(shared_generator, m)?)?;
    m.add_function(wrap_pyfunction!(random_variable, m)?)?;
    m.add_function(wrap_pyfunction!(default_updates, m)?)?;
    Ok(())
}
