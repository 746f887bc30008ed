//! Python arguments to graph values: operands of arithmetic (variables, weak Python scalars,
//! constants from arrays and lists, typed as PyTensor types literals) and index items
//! (`x[1:3, None, ..., idx]`).

use oxtensor_data::DType;
use oxtensor_graph::build::{self, Idx, Scalar};
use oxtensor_graph::{Op, ScalarOp, Var};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyComplex, PyEllipsis, PyFloat, PyInt, PyList, PyNone, PySlice, PyString, PyTuple,
};

use crate::convert::{self, any_to_tensor, owned};
use crate::errors::{graph_err, type_err};
use crate::site::at_user_site;
use crate::var::{PyVar, wrap};

/// The graph variable of a `TensorVariable`, if `obj` is one.
pub fn var_of(obj: &Bound<'_, PyAny>) -> Option<Var> {
    obj.cast::<PyVar>().ok().map(|b| b.get().v.clone())
}

static NUMPY_GENERIC: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn is_numpy_scalar(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let generic = NUMPY_GENERIC.get_or_try_init(py, || -> PyResult<_> {
        Ok(py.import("numpy")?.getattr("generic")?.unbind())
    })?;
    obj.is_instance(generic.bind(py))
}

pub use oxtensor_graph::build::Operand;

/// Classifies `obj`: variables and Python numbers as they are; NumPy scalars, arrays and lists
/// become constants of their NumPy dtype.
pub fn operand(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Operand> {
    if let Some(v) = var_of(obj) {
        return Ok(Operand::Var(v));
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Operand::Scalar(Scalar::Bool(obj.extract()?)));
    }
    if !is_numpy_scalar(py, obj)? {
        if obj.is_instance_of::<PyInt>()
            && let Ok(i) = obj.extract::<i64>()
        {
            return Ok(Operand::Scalar(Scalar::Int(i)));
        }
        if obj.is_instance_of::<PyFloat>() {
            return Ok(Operand::Scalar(Scalar::Float(obj.extract()?)));
        }
    }
    Ok(Operand::Var(constant_var(py, obj, None)?))
}

/// A constant holding `np.asarray(obj, dtype)`.
pub fn constant_var(py: Python<'_>, obj: &Bound<'_, PyAny>, dtype: Option<DType>) -> PyResult<Var> {
    let t = owned(any_to_tensor(py, obj, dtype)?)?;
    Ok(at_user_site(py, || Var::constant(t)))
}

/// `obj` as a variable: itself if it is one, else a constant — Python numbers with PyTensor's
/// literal dtypes ([`literal_constant`]), arrays, lists and NumPy scalars with NumPy's.
pub fn as_var(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Var> {
    match operand(py, obj)? {
        Operand::Var(v) => Ok(v),
        Operand::Scalar(s) => literal_constant(py, s),
    }
}

/// A Python number standing alone (no tensor to adapt to), typed as PyTensor types literals
/// ([`build::literal`], with the configured `floatX`).
pub fn literal_constant(py: Python<'_>, s: Scalar) -> PyResult<Var> {
    let float_x = float_x(py)?;
    Ok(at_user_site(py, || build::literal(s, float_x)))
}

/// The configured `floatX`.
fn float_x(py: Python<'_>) -> PyResult<DType> {
    let floatx: String = convert::helpers(py)?
        .getattr(intern!(py, "floatx"))?
        .call0()?
        .extract()?;
    Ok(if floatx == "float32" {
        DType::F32
    } else {
        DType::F64
    })
}

/// The constant for a Python number meeting tensors of dtype `like` ([`build::scalar_like`]).
pub fn scalar_like(s: Scalar, like: DType) -> Var {
    build::scalar_like(s, like)
}

/// Turns operands into variables with the graph's literal rules ([`build::resolve`]), at the
/// user's creation site.
pub fn resolve(py: Python<'_>, ops: Vec<Operand>, skip: usize) -> PyResult<Vec<Var>> {
    let float_x = float_x(py)?;
    Ok(at_user_site(py, || build::resolve(ops, skip, float_x)))
}

/// Applies a scalar op elementwise to Python operands.
pub fn elemwise_py(py: Python<'_>, op: ScalarOp, args: &[Bound<'_, PyAny>]) -> PyResult<Var> {
    let ops = args
        .iter()
        .map(|a| operand(py, a))
        .collect::<PyResult<Vec<_>>>()?;
    let skip = usize::from(op == ScalarOp::Switch);
    let vars = resolve(py, ops, skip)?;
    at_user_site(py, || build::elemwise(op, &vars)).map_err(graph_err)
}

/// True when `obj` can be an operand of an arithmetic operator (else the operator returns
/// `NotImplemented`, letting Python try the other side).
pub(crate) fn is_operand(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(obj.is_instance_of::<PyVar>()
        || obj.is_instance_of::<PyInt>()
        || obj.is_instance_of::<PyFloat>()
        || obj.is_instance_of::<PyComplex>()
        || obj.is_instance_of::<PyBool>()
        || obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyTuple>()
        || convert::is_ndarray(py, obj)
        || is_numpy_scalar(py, obj)?)
}

pub(crate) fn binop(
    py: Python<'_>,
    op: ScalarOp,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    other: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    if !is_operand(py, other)? {
        return Ok(py.NotImplemented());
    }
    wrap(py, elemwise_py(py, op, &[a.clone(), b.clone()])?)
}

pub(crate) fn is_comparison(v: &Var) -> bool {
    matches!(
        v.owner(),
        Some((
            Op::Elemwise(ScalarOp::Lt | ScalarOp::Gt | ScalarOp::Le | ScalarOp::Ge),
            _
        ))
    )
}

/// One Python index item as an [`Idx`].
fn index_item(py: Python<'_>, item: &Bound<'_, PyAny>) -> PyResult<Idx> {
    if item.is_instance_of::<PyNone>() {
        return Ok(Idx::NewAxis);
    }
    if item.is_instance_of::<PyEllipsis>() {
        return Ok(Idx::Ellipsis);
    }
    if let Ok(s) = item.cast::<PySlice>() {
        let bound = |name: &Bound<'_, PyString>| -> PyResult<Option<Var>> {
            let b = s.getattr(name)?;
            if b.is_none() {
                Ok(None)
            } else {
                index_scalar(py, &b).map(Some)
            }
        };
        return Ok(Idx::Slice(
            bound(intern!(py, "start"))?,
            bound(intern!(py, "stop"))?,
            bound(intern!(py, "step"))?,
        ));
    }
    if item.is_instance_of::<PyBool>() {
        return Err(PyErr::new::<pyo3::exceptions::PyIndexError, _>(
            "boolean indices are not supported; use an integer index or pt.switch",
        ));
    }
    if let Some(v) = var_of(item) {
        return Ok(Idx::At(v));
    }
    if let Ok(i) = item.extract::<i64>() {
        return Ok(at_user_site(py, || Idx::int(i)));
    }
    let v = constant_var(py, item, None)?;
    if v.dtype().is_bool() {
        return Err(PyErr::new::<pyo3::exceptions::PyIndexError, _>(
            "boolean mask indexing is not supported; use integer indices (np.nonzero(mask)[0])",
        ));
    }
    Ok(Idx::At(v))
}

/// A slice bound: an integer or a symbolic integer scalar.
fn index_scalar(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Var> {
    if let Some(v) = var_of(obj) {
        return Ok(v);
    }
    let i: i64 = obj.extract().map_err(|_| {
        type_err(format!(
            "slice indices must be integers, None or symbolic integer scalars, got {}",
            obj.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })?;
    Ok(at_user_site(py, || Var::int_constant(i)))
}

/// Parses `x[key]`.
pub fn parse_index(py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Vec<Idx>> {
    if let Ok(t) = key.cast::<PyTuple>() {
        t.iter().map(|i| index_item(py, &i)).collect()
    } else {
        Ok(vec![index_item(py, key)?])
    }
}
