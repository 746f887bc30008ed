//! The Python `TensorVariable` class: a Rust [`Var`] with PyTensor's operators, methods and
//! indexing. Graph logic lives in [`oxtensor_graph::build`]; arguments are converted by
//! [`crate::operand`], and each new variable records the user's `file:line` as its site.

use oxtensor_graph::build::{self, Idx};
use oxtensor_graph::{NodeKind, ScalarOp, Var};
use pyo3::basic::CompareOp;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use pyo3::{IntoPyObjectExt, intern};

use crate::builders::{self, axes_arg, dtype_arg};
use crate::convert;
use crate::errors::{graph_err, type_err};
pub use crate::operand::{
    Operand, as_var, constant_var, elemwise_py, literal_constant, operand, parse_index, resolve,
    scalar_like, var_of,
};
use crate::operand::{binop, is_comparison, is_operand};
use crate::site::at_user_site;
pub use crate::var_kinds::{PyConstant, PyShared};

/// A symbolic tensor (PyTensor's `TensorVariable`).
///
/// Equality and hashing are by identity. Because graphs are hash-consed, building the same
/// expression twice (`pt.exp(x)` and `pt.exp(x)`) yields the same variable, so those compare
/// equal. Arithmetic, comparisons (`<`, `<=`, `>`, `>=`), `@`, indexing and the reduction and
/// shape methods build new variables.
#[pyclass(
    frozen,
    subclass,
    name = "TensorVariable",
    module = "oxtensor.tensor.variable"
)]
pub struct PyVar {
    /// The graph variable.
    pub v: Var,
}

/// Wraps a graph variable in the Python class matching its kind.
pub fn wrap(py: Python<'_>, v: Var) -> PyResult<Py<PyAny>> {
    match v.node().kind() {
        NodeKind::Constant(_) => {
            let init = PyClassInitializer::from(PyVar { v }).add_subclass(PyConstant);
            Ok(Bound::new(py, init)?.into_any().unbind())
        }
        NodeKind::Shared(_) if crate::random::is_generator(&v) => {
            crate::random::wrap_generator(py, v)
        }
        NodeKind::Shared(_) => {
            let init = PyClassInitializer::from(PyVar { v }).add_subclass(PyShared);
            Ok(Bound::new(py, init)?.into_any().unbind())
        }
        _ => Ok(Bound::new(py, PyVar { v })?.into_any().unbind()),
    }
}

/// Wraps a build result.
pub fn wrap_built(py: Python<'_>, b: build::Built) -> PyResult<Py<PyAny>> {
    wrap(py, b.map_err(graph_err)?)
}

#[pymethods]
impl PyVar {
    /// `self + other`, elementwise.
    fn __add__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::Add, slf.as_any(), other, other)
    }

    /// `other + self`, elementwise.
    fn __radd__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::Add, other, slf.as_any(), other)
    }

    /// `self - other`, elementwise.
    fn __sub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::Sub, slf.as_any(), other, other)
    }

    /// `other - self`, elementwise.
    fn __rsub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::Sub, other, slf.as_any(), other)
    }

    /// `self * other`, elementwise.
    fn __mul__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::Mul, slf.as_any(), other, other)
    }

    /// `other * self`, elementwise.
    fn __rmul__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::Mul, other, slf.as_any(), other)
    }

    /// `self / other`, elementwise.
    fn __truediv__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::TrueDiv, slf.as_any(), other, other)
    }

    /// `other / self`, elementwise.
    fn __rtruediv__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::TrueDiv, other, slf.as_any(), other)
    }

    /// `self // other`, elementwise.
    fn __floordiv__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::IntDiv, slf.as_any(), other, other)
    }

    /// `other // self`, elementwise.
    fn __rfloordiv__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::IntDiv, other, slf.as_any(), other)
    }

    /// `self % other`, elementwise.
    fn __mod__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::Mod, slf.as_any(), other, other)
    }

    /// `other % self`, elementwise.
    fn __rmod__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::Mod, other, slf.as_any(), other)
    }

    /// `self & other`, elementwise.
    fn __and__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::And, slf.as_any(), other, other)
    }

    /// `other & self`, elementwise.
    fn __rand__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::And, other, slf.as_any(), other)
    }

    /// `self | other`, elementwise.
    fn __or__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::Or, slf.as_any(), other, other)
    }

    /// `other | self`, elementwise.
    fn __ror__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::Or, other, slf.as_any(), other)
    }

    /// `self ^ other`, elementwise.
    fn __xor__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::Xor, slf.as_any(), other, other)
    }

    /// `other ^ self`, elementwise.
    fn __rxor__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf.py(), ScalarOp::Xor, other, slf.as_any(), other)
    }

    /// Makes NumPy defer to these operators (`ndarray + x` calls `x.__radd__`).
    #[classattr]
    fn __array_ufunc__(py: Python<'_>) -> Py<PyAny> {
        py.None()
    }

    /// NumPy's legacy operator priority (PyTensor sets the same).
    #[classattr]
    fn __array_priority__() -> f64 {
        1000.0
    }

    /// `self ** other`.
    fn __pow__(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        modulo: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        if !modulo.is_none() {
            return Ok(slf.py().NotImplemented());
        }
        binop(slf.py(), ScalarOp::Pow, slf.as_any(), other, other)
    }

    /// `other ** self`.
    fn __rpow__(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        modulo: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        if !modulo.is_none() {
            return Ok(slf.py().NotImplemented());
        }
        binop(slf.py(), ScalarOp::Pow, other, slf.as_any(), other)
    }

    /// Matrix product `self @ other`.
    fn __matmul__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        if !is_operand(py, other)? {
            return Ok(py.NotImplemented());
        }
        let b = as_var(py, other)?;
        let a = slf.get().v.clone();
        wrap_built(py, at_user_site(py, || build::matmul(&a, &b)))
    }

    /// Matrix product `other @ self`.
    fn __rmatmul__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        if !is_operand(py, other)? {
            return Ok(py.NotImplemented());
        }
        let a = as_var(py, other)?;
        let b = slf.get().v.clone();
        wrap_built(py, at_user_site(py, || build::matmul(&a, &b)))
    }

    /// `-self`.
    fn __neg__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        wrap_built(py, at_user_site(py, || build::neg(&self.v)))
    }

    /// `+self` (the variable itself).
    fn __pos__(slf: &Bound<'_, Self>) -> Py<PyAny> {
        slf.clone().into_any().unbind()
    }

    /// `abs(self)`.
    fn __abs__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        wrap_built(py, at_user_site(py, || build::abs(&self.v)))
    }

    /// The real part (the value itself for a real variable).
    #[getter]
    fn real(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        wrap_built(py, at_user_site(py, || build::real(&self.v)))
    }

    /// The imaginary part (zeros for a real variable).
    #[getter]
    fn imag(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        wrap_built(py, at_user_site(py, || build::imag(&self.v)))
    }

    /// The complex conjugate.
    fn conj(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        wrap_built(py, at_user_site(py, || build::conj(&self.v)))
    }

    /// The complex conjugate (NumPy's longer name).
    fn conjugate(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.conj(py)
    }

    /// `~self` (bitwise/logical not).
    fn __invert__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        wrap_built(py, at_user_site(py, || build::invert(&self.v)))
    }

    /// `==`/`!=` compare identity (as in PyTensor; use `pt.eq` for elementwise equality);
    /// `<`, `<=`, `>`, `>=` build elementwise comparisons.
    fn __richcmp__(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        op: CompareOp,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let same = || var_of(other).is_some_and(|o| o == slf.get().v);
        let sop = match op {
            CompareOp::Eq => return same().into_py_any(py),
            CompareOp::Ne => return (!same()).into_py_any(py),
            CompareOp::Lt => ScalarOp::Lt,
            CompareOp::Le => ScalarOp::Le,
            CompareOp::Gt => ScalarOp::Gt,
            CompareOp::Ge => ScalarOp::Ge,
        };
        binop(py, sop, slf.as_any(), other, other)
    }

    /// Hash of the variable's identity.
    fn __hash__(&self) -> u64 {
        let (node, index) = self.v.id();
        node.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(index)
    }

    /// Variables are true, except comparison results, so that `a < b < c` raises as in PyTensor.
    fn __bool__(&self) -> PyResult<bool> {
        if is_comparison(&self.v) {
            Err(type_err("Variables do not support boolean operations."))
        } else {
            Ok(true)
        }
    }

    /// Symbolic tensors have no `len()`; use `x.shape[0]`.
    fn __len__(&self) -> PyResult<usize> {
        Err(type_err(
            "len() of a symbolic tensor is not defined; use x.shape[0] for its symbolic length",
        ))
    }

    /// Iterates over `x[0], x[1], …` when the first dimension's length is known statically.
    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let v = &slf.get().v;
        let n = v.ty().shape.first().copied().flatten().ok_or_else(|| {
            type_err(
                "TensorType does not support iteration.\n\tDid you pass a symbolic variable to a function that expects a list?\n\tMaybe you are using builtins.sum instead of pt.sum?",
            )
        })?;
        let items = (0..n)
            .map(|i| {
                let b = at_user_site(py, || build::subtensor(v, &[Idx::int(i as i64)]));
                wrap_built(py, b)
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, items)?.try_iter()?.into_any().unbind())
    }

    /// `x[key]`: integers, slices (with symbolic bounds), `None`, `...`, symbolic integer
    /// scalars, and one integer array on one axis.
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let idx = parse_index(py, key)?;
        wrap_built(py, at_user_site(py, || build::subtensor(&self.v, &idx)))
    }

    /// Symbolic tensors are immutable: use `x[idx].set(y)` / `x[idx].inc(y)` or
    /// `pt.set_subtensor(x[idx], y)`.
    fn __setitem__(&self, _key: &Bound<'_, PyAny>, _value: &Bound<'_, PyAny>) -> PyResult<()> {
        Err(type_err(
            "TensorVariable does not support item assignment; use x[idx].set(y) or pt.set_subtensor(x[idx], y), which return a new variable",
        ))
    }

    /// `x[idx].set(y)`: the tensor indexed here with those elements replaced by `y`.
    fn set(&self, py: Python<'_>, y: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        builders::update_subtensor(py, &self.v, y, true)
    }

    /// `x[idx].inc(y)`: the tensor indexed here with `y` added to those elements.
    fn inc(&self, py: Python<'_>, y: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        builders::update_subtensor(py, &self.v, y, false)
    }

    /// The name, or `None`.
    #[getter]
    fn name(&self) -> Option<String> {
        self.v.name().map(|n| n.to_string())
    }

    /// Names the variable (metadata: a hash-consed node built twice is one node, so naming one
    /// names both). Setting `None` keeps the current name.
    #[setter]
    fn set_name(&self, name: Option<&str>) {
        if let Some(n) = name {
            self.v.set_name(n);
        }
    }

    /// The element type's NumPy name (`"float64"`).
    #[getter]
    fn dtype(&self) -> &'static str {
        self.v.dtype().name()
    }

    /// The number of dimensions.
    #[getter]
    fn ndim(&self) -> usize {
        self.v.ndim()
    }

    /// The static extents (`None` where unknown).
    #[getter]
    fn _static_shape(&self) -> Vec<Option<usize>> {
        self.v.ty().shape.to_vec()
    }

    /// The type (`TensorType(float64, shape=(None,))`).
    #[getter]
    fn r#type<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let shape = PyTuple::new(py, self.v.ty().shape.iter().copied())?;
        convert::helpers(py)?
            .getattr(intern!(py, "make_type"))?
            .call1((self.v.dtype().name(), shape))
    }

    /// Which dimensions broadcast (static extent 1).
    #[getter]
    fn broadcastable<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.v.ty().broadcastable())
    }

    /// The symbolic shape (an `int64` vector).
    #[getter]
    fn shape(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        wrap_built(py, at_user_site(py, || build::shape(&self.v)))
    }

    /// The transpose (axes reversed).
    #[getter(T)]
    fn t(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        wrap_built(py, at_user_site(py, || build::transpose(&self.v, None)))
    }

    /// Where the variable was created (`file.py:12`).
    #[getter]
    fn _site(&self) -> String {
        self.v.site().to_string()
    }

    /// The variable as named in error messages (name, type, creation site).
    fn _describe(&self) -> String {
        self.v.describe()
    }

    /// Pickling: the variable's graph in the no-code format (`oxtensor.compile.pickling`);
    /// loading builds fresh variables (shared values and generator states included).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        py.import(pyo3::intern!(py, "oxtensor.compile.pickling"))?
            .call_method1("_reduce_variable", (slf,))
    }

    /// `copy.copy`: variables are immutable values, so the copy is the variable itself.
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// `"input"`, `"shared"`, `"constant"` or `"apply"`.
    #[getter]
    fn _kind(&self) -> &'static str {
        match self.v.node().kind() {
            NodeKind::Input | NodeKind::Placeholder(_) => "input",
            NodeKind::Shared(_) => "shared",
            NodeKind::Constant(_) => "constant",
            NodeKind::Apply { .. } => "apply",
        }
    }

    /// The op computing this variable as text (`None` for leaves).
    #[getter]
    fn _op(&self) -> Option<String> {
        self.v.owner().map(|(op, _)| op.to_string())
    }

    /// PyTensor's `owner`: the `op`, `inputs` and `outputs` of the node computing this
    /// variable (`None` for leaves).
    #[getter]
    fn owner(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::random::owner(py, &self.v)
    }

    /// The inputs of the op computing this variable (empty for leaves).
    #[getter]
    fn _inputs(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.v
            .node()
            .inputs()
            .iter()
            .map(|i| wrap(py, i.clone()))
            .collect()
    }

    /// As PyTensor: the name, or `Op.index` for an unnamed op output.
    fn __repr__(&self) -> String {
        format!("{:?}", self.v)
    }

    /// Same as `repr`.
    fn __str__(&self) -> String {
        format!("{:?}", self.v)
    }

    /// Sum over `axis` (`None`: all; ints, tuples, negatives), optionally keeping dimensions.
    #[pyo3(signature = (axis=None, dtype=None, keepdims=false, acc_dtype=None))]
    fn sum(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        acc_dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let _ = acc_dtype;
        builders::reduce_impl(py, "sum", &self.v, axis, keepdims, dtype)
    }

    /// Product over `axis`.
    #[pyo3(signature = (axis=None, dtype=None, keepdims=false, acc_dtype=None))]
    fn prod(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        acc_dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let _ = acc_dtype;
        builders::reduce_impl(py, "prod", &self.v, axis, keepdims, dtype)
    }

    /// Maximum over `axis`.
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn max(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<Py<PyAny>> {
        builders::reduce_impl(py, "max", &self.v, axis, keepdims, None)
    }

    /// Minimum over `axis`.
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn min(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<Py<PyAny>> {
        builders::reduce_impl(py, "min", &self.v, axis, keepdims, None)
    }

    /// True where all elements over `axis` are true.
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn all(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<Py<PyAny>> {
        builders::reduce_impl(py, "all", &self.v, axis, keepdims, None)
    }

    /// True where any element over `axis` is true.
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn any(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<Py<PyAny>> {
        builders::reduce_impl(py, "any", &self.v, axis, keepdims, None)
    }

    /// Mean over `axis`.
    #[pyo3(signature = (axis=None, dtype=None, keepdims=false, acc_dtype=None))]
    fn mean(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        acc_dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let _ = acc_dtype;
        builders::reduce_impl(py, "mean", &self.v, axis, keepdims, dtype)
    }

    /// Variance over `axis` with `ddof` delta degrees of freedom (`corrected=True`: ddof 1).
    #[pyo3(signature = (axis=None, ddof=0, keepdims=false, corrected=false))]
    fn var(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        ddof: i64,
        keepdims: bool,
        corrected: bool,
    ) -> PyResult<Py<PyAny>> {
        builders::moment_impl(py, false, &self.v, axis, ddof, keepdims, corrected)
    }

    /// Standard deviation over `axis`.
    #[pyo3(signature = (axis=None, ddof=0, keepdims=false, corrected=false))]
    fn std(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        ddof: i64,
        keepdims: bool,
        corrected: bool,
    ) -> PyResult<Py<PyAny>> {
        builders::moment_impl(py, true, &self.v, axis, ddof, keepdims, corrected)
    }

    /// Index of the largest element along `axis` (`None`: flattened).
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn argmax(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<Py<PyAny>> {
        builders::arg_impl(py, true, &self.v, axis, keepdims)
    }

    /// Index of the smallest element along `axis` (`None`: flattened).
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn argmin(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<Py<PyAny>> {
        builders::arg_impl(py, false, &self.v, axis, keepdims)
    }

    /// Reshape: `x.reshape((2, -1))`, `x.reshape(2, -1)`, `x.reshape(y.shape)` or with
    /// symbolic extents.
    #[pyo3(signature = (*shape, ndim=None))]
    fn reshape(
        &self,
        py: Python<'_>,
        shape: &Bound<'_, PyTuple>,
        ndim: Option<usize>,
    ) -> PyResult<Py<PyAny>> {
        let spec = if shape.len() == 1 {
            shape.get_item(0)?
        } else {
            shape.clone().into_any()
        };
        builders::reshape_impl(py, &self.v, &spec, ndim)
    }

    /// Reorders dimensions and inserts broadcastable ones (`'x'`), dropping broadcastable
    /// dimensions not listed: `x.dimshuffle(1, 'x', 0)`.
    #[pyo3(signature = (*pattern))]
    fn dimshuffle(&self, py: Python<'_>, pattern: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let items = if pattern.len() == 1
            && let Ok(seq) = pattern.get_item(0)?.cast::<PyAny>()
            && (seq.is_instance_of::<PyList>() || seq.is_instance_of::<PyTuple>())
        {
            seq.try_iter()?.collect::<PyResult<Vec<_>>>()?
        } else {
            pattern.iter().collect()
        };
        let order = items
            .iter()
            .map(|p| {
                if let Ok(s) = p.extract::<String>() {
                    if s == "x" {
                        Ok(None)
                    } else {
                        Err(type_err(format!(
                            "dimshuffle pattern entries are dimensions or 'x', got {s:?}"
                        )))
                    }
                } else {
                    p.extract::<usize>().map(Some).map_err(|_| {
                        type_err("dimshuffle pattern entries are dimensions (ints) or 'x'")
                    })
                }
            })
            .collect::<PyResult<Vec<_>>>()?;
        wrap_built(py, at_user_site(py, || build::dimshuffle(&self.v, &order)))
    }

    /// Collapses dimensions from `ndim - 1` on into one.
    #[pyo3(signature = (ndim=1))]
    fn flatten(&self, py: Python<'_>, ndim: usize) -> PyResult<Py<PyAny>> {
        wrap_built(py, at_user_site(py, || build::flatten(&self.v, ndim)))
    }

    /// Permutes the axes (reversed when none are given).
    #[pyo3(signature = (*axes))]
    fn transpose(&self, py: Python<'_>, axes: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let axes = match axes.len() {
            0 => None,
            1 => axes_arg(Some(&axes.get_item(0)?))?,
            _ => axes_arg(Some(axes.as_any()))?,
        };
        wrap_built(
            py,
            at_user_site(py, || build::transpose(&self.v, axes.as_deref())),
        )
    }

    /// Conversion to `dtype` (a name, `"floatX"`, or a NumPy dtype).
    fn astype(&self, py: Python<'_>, dtype: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let d = dtype_arg(py, dtype)?;
        wrap_built(py, at_user_site(py, || build::cast(&self.v, d)))
    }

    /// Removes broadcastable dimensions (or those in `axis`).
    #[pyo3(signature = (axis=None))]
    fn squeeze(&self, py: Python<'_>, axis: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        let axes = axes_arg(axis)?;
        wrap_built(
            py,
            at_user_site(py, || build::squeeze(&self.v, axes.as_deref())),
        )
    }

    /// `clip(self, a_min, a_max)`.
    fn clip(
        slf: &Bound<'_, Self>,
        a_min: &Bound<'_, PyAny>,
        a_max: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let v = elemwise_py(
            py,
            ScalarOp::Clip,
            &[slf.clone().into_any(), a_min.clone(), a_max.clone()],
        )?;
        wrap(py, v)
    }

    /// Rounds half to even (`np.round`).
    #[pyo3(signature = (mode=None))]
    fn round(&self, py: Python<'_>, mode: Option<&str>) -> PyResult<Py<PyAny>> {
        builders::round_impl(py, &self.v, mode)
    }

    /// `pt.dot(self, other)`.
    fn dot(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let b = as_var(py, other)?;
        wrap_built(py, at_user_site(py, || build::dot(&self.v, &b)))
    }

    /// The variable itself (graphs are immutable, so a copy is never needed); `name` renames.
    #[pyo3(signature = (name=None))]
    fn copy(slf: &Bound<'_, Self>, name: Option<&str>) -> Py<PyAny> {
        if let Some(n) = name {
            slf.get().v.set_name(n);
        }
        slf.clone().into_any().unbind()
    }

    /// Evaluates the variable: compiles a function of the keys of `inputs_to_values` and calls
    /// it with the values.
    #[pyo3(signature = (inputs_to_values=None, **kwargs))]
    fn eval<'py>(
        slf: &Bound<'py, Self>,
        inputs_to_values: Option<&Bound<'py, PyAny>>,
        kwargs: Option<&Bound<'py, pyo3::types::PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let _ = kwargs;
        let f = py
            .import(intern!(py, "oxtensor.compile.function"))?
            .getattr(intern!(py, "_eval"))?;
        f.call1((slf, inputs_to_values))
    }
}
