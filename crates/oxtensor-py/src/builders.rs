//! Module-level graph builders of `oxtensor._core`, called by the pure-Python `oxtensor.tensor`
//! with PyTensor's signatures already normalised. Each converts its arguments, calls the
//! matching [`oxtensor_graph::build`] function at the user's creation site, and wraps the result.

use oxtensor_data::DType;
use oxtensor_graph::build::{self, Idx};
use oxtensor_graph::{Op, PrintOptions, ReduceOp, ScalarOp, TensorType, Var};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::convert::{self, owned};
use crate::errors::{graph_err, type_err, value_err};
use crate::site::at_user_site;
use crate::var::{
    Operand, as_var, constant_var, elemwise_py, operand, resolve, var_of, wrap, wrap_built,
};

/// Registers the builders.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(tensor, m)?)?;
    m.add_function(wrap_pyfunction!(constant, m)?)?;
    m.add_function(wrap_pyfunction!(shared, m)?)?;
    m.add_function(wrap_pyfunction!(elemwise, m)?)?;
    m.add_function(wrap_pyfunction!(scalar_op_names, m)?)?;
    m.add_function(wrap_pyfunction!(cast, m)?)?;
    m.add_function(wrap_pyfunction!(reduce, m)?)?;
    m.add_function(wrap_pyfunction!(moment, m)?)?;
    m.add_function(wrap_pyfunction!(argreduce, m)?)?;
    m.add_function(wrap_pyfunction!(reshape, m)?)?;
    m.add_function(wrap_pyfunction!(flatten, m)?)?;
    m.add_function(wrap_pyfunction!(transpose, m)?)?;
    m.add_function(wrap_pyfunction!(expand_dims, m)?)?;
    m.add_function(wrap_pyfunction!(squeeze, m)?)?;
    m.add_function(wrap_pyfunction!(shape, m)?)?;
    m.add_function(wrap_pyfunction!(specify_shape, m)?)?;
    m.add_function(wrap_pyfunction!(alloc, m)?)?;
    m.add_function(wrap_pyfunction!(full_like, m)?)?;
    m.add_function(wrap_pyfunction!(arange, m)?)?;
    m.add_function(wrap_pyfunction!(eye, m)?)?;
    m.add_function(wrap_pyfunction!(concatenate, m)?)?;
    m.add_function(wrap_pyfunction!(stack, m)?)?;
    m.add_function(wrap_pyfunction!(split, m)?)?;
    m.add_function(wrap_pyfunction!(matmul, m)?)?;
    m.add_function(wrap_pyfunction!(dot, m)?)?;
    m.add_function(wrap_pyfunction!(outer, m)?)?;
    m.add_function(wrap_pyfunction!(set_subtensor, m)?)?;
    m.add_function(wrap_pyfunction!(inc_subtensor, m)?)?;
    m.add_function(wrap_pyfunction!(take, m)?)?;
    m.add_function(wrap_pyfunction!(round, m)?)?;
    m.add_function(wrap_pyfunction!(debugprint, m)?)?;
    m.add_function(wrap_pyfunction!(as_variable, m)?)?;
    Ok(())
}

/// `axis` as a list of ints: `None` → `None`, an int → `[i]`, a sequence → its ints.
pub fn axes_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<i64>>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => {
            if let Ok(i) = o.extract::<i64>() {
                return Ok(Some(vec![i]));
            }
            o.extract::<Vec<i64>>().map(Some).map_err(|_| {
                type_err(format!(
                    "axis must be None, an int or a tuple of ints, got {}",
                    o.repr().map(|r| r.to_string()).unwrap_or_default()
                ))
            })
        }
    }
}

/// A dtype argument: a NumPy name, `"floatX"` (the configured float type), or anything
/// `np.dtype` accepts (`np.float32`, `np.dtype("int8")`).
pub fn dtype_arg(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<DType> {
    if let Ok(s) = obj.cast::<PyString>() {
        let s = s.to_str()?;
        if s != "floatX" {
            return convert::parse_dtype(s);
        }
    }
    let name = convert::helpers(py)?
        .getattr(intern!(py, "dtype_name"))?
        .call1((obj,))?;
    convert::parse_dtype(name.extract::<&str>()?)
}

fn opt_dtype(py: Python<'_>, obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<DType>> {
    match obj {
        Some(o) if !o.is_none() => dtype_arg(py, o).map(Some),
        _ => Ok(None),
    }
}

/// A list or tuple of variables (or values made constants).
fn vars_arg(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Vec<Var>> {
    if let Some(v) = var_of(obj) {
        return Ok(vec![v]);
    }
    obj.try_iter()?.map(|item| as_var(py, &item?)).collect()
}

/// An integer scalar argument (Python int or symbolic integer scalar) as a variable.
fn int_scalar_arg(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Var> {
    if let Some(v) = var_of(obj) {
        return Ok(v);
    }
    let i: i64 = obj.extract().map_err(|_| {
        type_err(format!(
            "expected an integer or a symbolic integer scalar, got {}",
            obj.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })?;
    Ok(at_user_site(py, || Var::int_constant(i)))
}

/// The scalar items of a shape argument: a sequence of ints/scalars, or a symbolic vector of
/// static length (`x.shape`).
fn shape_items(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Vec<Var>> {
    if let Some(v) = var_of(obj) {
        if v.ndim() == 0 {
            return Ok(vec![v]);
        }
        let n = match (v.ndim(), v.ty().shape.first().copied().flatten()) {
            (1, Some(n)) => n,
            _ => {
                return Err(value_err(format!(
                    "a shape must be a sequence or a vector of static length, got {}",
                    v.describe()
                )));
            }
        };
        return (0..n)
            .map(|i| {
                at_user_site(py, || build::subtensor(&v, &[Idx::int(i as i64)])).map_err(graph_err)
            })
            .collect();
    }
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(vec![at_user_site(py, || Var::int_constant(i))]);
    }
    obj.try_iter()?
        .map(|item| int_scalar_arg(py, &item?))
        .collect()
}

/// A graph input of the given dtype and static shape.
#[pyfunction]
#[pyo3(signature = (name, dtype, shape))]
fn tensor(
    py: Python<'_>,
    name: Option<&str>,
    dtype: &Bound<'_, PyAny>,
    shape: Vec<Option<usize>>,
) -> PyResult<Py<PyAny>> {
    let d = dtype_arg(py, dtype)?;
    let v = at_user_site(py, || Var::input(name, TensorType::new(d, &shape)));
    wrap(py, v)
}

/// A constant holding `np.asarray(value, dtype)`.
#[pyfunction]
#[pyo3(signature = (value, name=None, dtype=None))]
fn constant(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    name: Option<&str>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let d = opt_dtype(py, dtype)?;
    let v = constant_var(py, value, d)?;
    if let Some(n) = name {
        v.set_name(n);
    }
    wrap(py, v)
}

/// A shared variable holding a copy of `np.asarray(value)`.
#[pyfunction]
#[pyo3(signature = (value, name=None))]
fn shared(py: Python<'_>, value: &Bound<'_, PyAny>, name: Option<&str>) -> PyResult<Py<PyAny>> {
    let t = owned(convert::any_to_tensor(py, value, None)?)?;
    let v = at_user_site(py, || oxtensor::shared(t, name));
    wrap(py, v)
}

/// `obj` as a variable (`pt.as_tensor_variable` after PyTensor's literal rules are applied in
/// Python).
#[pyfunction]
fn as_variable(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    if var_of(obj).is_some() {
        return Ok(obj.clone().unbind());
    }
    wrap(py, as_var(py, obj)?)
}

fn scalar_op_by_name(name: &str) -> Option<ScalarOp> {
    match name {
        "round" | "round_half_to_even" => return Some(ScalarOp::RoundHalfEven),
        "mod" | "modulo" => return Some(ScalarOp::Mod),
        "complex_from_polar" => return Some(ScalarOp::ComplexFromPolar),
        "conjugate" => return Some(ScalarOp::Conj),
        _ => {}
    }
    ScalarOp::from_name(name)
}

/// The names `elemwise` accepts.
#[pyfunction]
fn scalar_op_names() -> Vec<String> {
    ScalarOp::all_but_cast()
        .map(|op| match op {
            ScalarOp::Special(f) => f.py_name().to_string(),
            other => other.name().to_ascii_lowercase(),
        })
        .collect()
}

/// Applies the scalar op named `op` (PyTensor's lower-case name: `"exp"`, `"true_div"`,
/// `"switch"`…) elementwise, Python numbers acting as weak scalars.
#[pyfunction]
#[pyo3(signature = (op, *args))]
fn elemwise(py: Python<'_>, op: &str, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let sop =
        scalar_op_by_name(op).ok_or_else(|| value_err(format!("unknown scalar op {op:?}")))?;
    let args: Vec<Bound<'_, PyAny>> = args.iter().collect();
    wrap(py, elemwise_py(py, sop, &args)?)
}

/// Conversion to `dtype`.
#[pyfunction]
fn cast(py: Python<'_>, x: &Bound<'_, PyAny>, dtype: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let d = dtype_arg(py, dtype)?;
    let v = as_var(py, x)?;
    wrap_built(py, at_user_site(py, || build::cast(&v, d)))
}

/// Shared implementation of the reductions `sum`, `prod`, `max`, `min`, `all`, `any`, `mean`.
pub fn reduce_impl(
    py: Python<'_>,
    name: &str,
    x: &Var,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let axes = axes_arg(axis)?;
    let dtype = opt_dtype(py, dtype)?;
    let op = match name {
        "sum" => Some(ReduceOp::Sum),
        "prod" => Some(ReduceOp::Prod),
        "max" => Some(ReduceOp::Max),
        "min" => Some(ReduceOp::Min),
        "all" => Some(ReduceOp::All),
        "any" => Some(ReduceOp::Any),
        "mean" => None,
        other => return Err(value_err(format!("unknown reduction {other:?}"))),
    };
    let built = at_user_site(py, || {
        let r = match op {
            Some(op) => build::reduce(op, x, axes.as_deref(), keepdims)?,
            None => build::mean(x, axes.as_deref(), keepdims)?,
        };
        match dtype {
            Some(d) => build::cast(&r, d),
            None => Ok(r),
        }
    });
    wrap_built(py, built)
}

/// A reduction by name (`"sum"`, `"prod"`, `"max"`, `"min"`, `"all"`, `"any"`, `"mean"`).
#[pyfunction]
#[pyo3(signature = (name, x, axis=None, keepdims=false, dtype=None))]
fn reduce(
    py: Python<'_>,
    name: &str,
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let v = as_var(py, x)?;
    reduce_impl(py, name, &v, axis, keepdims, dtype)
}

/// Shared implementation of `var` and `std`.
pub fn moment_impl(
    py: Python<'_>,
    std: bool,
    x: &Var,
    axis: Option<&Bound<'_, PyAny>>,
    ddof: i64,
    keepdims: bool,
    corrected: bool,
) -> PyResult<Py<PyAny>> {
    let axes = axes_arg(axis)?;
    let ddof = if corrected && ddof == 0 { 1 } else { ddof };
    let built = at_user_site(py, || {
        if std {
            build::std(x, axes.as_deref(), ddof, keepdims)
        } else {
            build::var(x, axes.as_deref(), ddof, keepdims)
        }
    });
    wrap_built(py, built)
}

/// Variance (`std=False`) or standard deviation (`std=True`).
#[pyfunction]
#[pyo3(signature = (std, x, axis=None, ddof=0, keepdims=false, corrected=false))]
fn moment(
    py: Python<'_>,
    std: bool,
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    ddof: i64,
    keepdims: bool,
    corrected: bool,
) -> PyResult<Py<PyAny>> {
    let v = as_var(py, x)?;
    moment_impl(py, std, &v, axis, ddof, keepdims, corrected)
}

/// Shared implementation of `argmax` and `argmin`.
pub fn arg_impl(
    py: Python<'_>,
    max: bool,
    x: &Var,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
) -> PyResult<Py<PyAny>> {
    let axis = match axes_arg(axis)?.as_deref() {
        None => None,
        Some([a]) => Some(*a),
        Some(a) if a.len() == x.ndim() => None,
        Some(a) => {
            return Err(value_err(format!(
                "argmax/argmin take one axis or None, got {a:?}"
            )));
        }
    };
    let built = at_user_site(py, || {
        if max {
            build::argmax(x, axis, keepdims)
        } else {
            build::argmin(x, axis, keepdims)
        }
    });
    wrap_built(py, built)
}

/// `argmax` (`max=True`) or `argmin`.
#[pyfunction]
#[pyo3(signature = (max, x, axis=None, keepdims=false))]
fn argreduce(
    py: Python<'_>,
    max: bool,
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
) -> PyResult<Py<PyAny>> {
    let v = as_var(py, x)?;
    arg_impl(py, max, &v, axis, keepdims)
}

/// Shared implementation of `reshape`: constant extents, symbolic extents, or a symbolic shape
/// vector (whose static length, or `ndim`, gives the rank).
pub fn reshape_impl(
    py: Python<'_>,
    x: &Var,
    spec: &Bound<'_, PyAny>,
    ndim: Option<usize>,
) -> PyResult<Py<PyAny>> {
    if let Some(s) = var_of(spec)
        && s.ndim() == 1
    {
        let n = s.ty().shape[0].or(ndim).ok_or_else(|| {
            value_err(format!(
                "the new shape {} has no static length; pass ndim=",
                s.describe()
            ))
        })?;
        let built = at_user_site(py, || {
            let s = build::cast(&s, DType::I64)?;
            let s = if s.ty().shape[0].is_none() {
                build::specify_shape(&s, &[Some(n)])?
            } else {
                s
            };
            Var::apply1(Op::Reshape { ndim: n }, &[x.clone(), s])
        });
        return wrap_built(py, built);
    }
    if let Ok(ints) = spec.extract::<Vec<i64>>() {
        return wrap_built(py, at_user_site(py, || build::reshape(x, &ints)));
    }
    if let Ok(i) = spec.extract::<i64>() {
        return wrap_built(py, at_user_site(py, || build::reshape(x, &[i])));
    }
    let items = shape_items(py, spec)?;
    wrap_built(py, at_user_site(py, || build::reshape_sym(x, &items)))
}

/// `reshape(x, shape, ndim=None)`.
#[pyfunction]
#[pyo3(signature = (x, shape, ndim=None))]
fn reshape(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
    ndim: Option<usize>,
) -> PyResult<Py<PyAny>> {
    let v = as_var(py, x)?;
    reshape_impl(py, &v, shape, ndim)
}

/// `flatten(x, ndim=1)`.
#[pyfunction]
#[pyo3(signature = (x, ndim=1))]
fn flatten(py: Python<'_>, x: &Bound<'_, PyAny>, ndim: usize) -> PyResult<Py<PyAny>> {
    let v = as_var(py, x)?;
    wrap_built(py, at_user_site(py, || build::flatten(&v, ndim)))
}

/// `transpose(x, axes=None)`.
#[pyfunction]
#[pyo3(signature = (x, axes=None))]
fn transpose(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    axes: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let v = as_var(py, x)?;
    let axes = axes_arg(axes)?;
    wrap_built(
        py,
        at_user_site(py, || build::transpose(&v, axes.as_deref())),
    )
}

/// `expand_dims(x, axis)` with one axis or several (inserted in increasing order, as NumPy).
#[pyfunction]
fn expand_dims(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    axis: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let v = as_var(py, x)?;
    let axes = axes_arg(Some(axis))?.unwrap_or_default();
    let out_ndim = (v.ndim() + axes.len()) as i64;
    let mut norm: Vec<i64> = axes
        .iter()
        .map(|&a| if a < 0 { a + out_ndim } else { a })
        .collect();
    norm.sort_unstable();
    let built = at_user_site(py, || {
        let mut r = v.clone();
        for a in norm {
            r = build::expand_dims(&r, a)?;
        }
        Ok(r)
    });
    wrap_built(py, built)
}

/// `squeeze(x, axis=None)`.
#[pyfunction]
#[pyo3(signature = (x, axis=None))]
fn squeeze(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let v = as_var(py, x)?;
    let axes = axes_arg(axis)?;
    wrap_built(py, at_user_site(py, || build::squeeze(&v, axes.as_deref())))
}

/// The symbolic shape of `x`.
#[pyfunction]
fn shape(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let v = as_var(py, x)?;
    wrap_built(py, at_user_site(py, || build::shape(&v)))
}

/// `specify_shape(x, shape)` with `None` for unknown extents.
#[pyfunction]
fn specify_shape(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    shape: Vec<Option<usize>>,
) -> PyResult<Py<PyAny>> {
    let v = as_var(py, x)?;
    wrap_built(py, at_user_site(py, || build::specify_shape(&v, &shape)))
}

/// `alloc(value, *dims)`: `value` broadcast to the shape `dims` (ints or integer scalars, or a
/// single shape vector).
#[pyfunction]
#[pyo3(signature = (value, *dims))]
fn alloc(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    dims: &Bound<'_, PyTuple>,
) -> PyResult<Py<PyAny>> {
    let v = as_var(py, value)?;
    let items = if dims.len() == 1 {
        shape_items(py, &dims.get_item(0)?)?
    } else {
        shape_items(py, dims.as_any())?
    };
    wrap_built(py, at_user_site(py, || build::alloc(&v, &items)))
}

/// A tensor shaped like `x` filled with `value` (of `dtype`, default `x`'s).
#[pyfunction]
#[pyo3(signature = (x, value, dtype=None))]
fn full_like(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let v = as_var(py, x)?;
    let d = opt_dtype(py, dtype)?.unwrap_or(v.dtype());
    let fill = match operand(py, value)? {
        Operand::Scalar(s) => at_user_site(py, || crate::var::scalar_like(s, d)),
        Operand::Var(f) => f,
    };
    let built = at_user_site(py, || {
        let fill = build::cast(&fill, d)?;
        let dims: Vec<Var> = (0..v.ndim())
            .map(|i| build::shape_i(&v, i))
            .collect::<Result<_, _>>()?;
        build::alloc(&fill, &dims)
    });
    wrap_built(py, built)
}

/// `arange(start, stop, step)` of `dtype` (bounds may be symbolic scalars).
#[pyfunction]
fn arange(
    py: Python<'_>,
    start: &Bound<'_, PyAny>,
    stop: &Bound<'_, PyAny>,
    step: &Bound<'_, PyAny>,
    dtype: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let d = dtype_arg(py, dtype)?;
    let vars = resolve(
        py,
        vec![operand(py, start)?, operand(py, stop)?, operand(py, step)?],
        0,
    )?;
    wrap_built(
        py,
        at_user_site(py, || build::arange(&vars[0], &vars[1], &vars[2], d)),
    )
}

/// `eye(n, m, k)` of `dtype`.
#[pyfunction]
fn eye(
    py: Python<'_>,
    n: &Bound<'_, PyAny>,
    m: &Bound<'_, PyAny>,
    k: &Bound<'_, PyAny>,
    dtype: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let d = dtype_arg(py, dtype)?;
    let (n, m, k) = (
        int_scalar_arg(py, n)?,
        int_scalar_arg(py, m)?,
        int_scalar_arg(py, k)?,
    );
    wrap_built(py, at_user_site(py, || build::eye(&n, &m, &k, d)))
}

/// Joins tensors along an existing axis.
#[pyfunction]
#[pyo3(signature = (xs, axis=0))]
fn concatenate(py: Python<'_>, xs: &Bound<'_, PyAny>, axis: i64) -> PyResult<Py<PyAny>> {
    let vs = vars_arg(py, xs)?;
    wrap_built(py, at_user_site(py, || build::concatenate(&vs, axis)))
}

/// Joins tensors along a new axis.
#[pyfunction]
#[pyo3(signature = (xs, axis=0))]
fn stack(py: Python<'_>, xs: &Bound<'_, PyAny>, axis: i64) -> PyResult<Py<PyAny>> {
    let vs = vars_arg(py, xs)?;
    wrap_built(py, at_user_site(py, || build::stack(&vs, axis)))
}

/// Splits `x` along `axis` into pieces of the given sizes; returns a list.
#[pyfunction]
#[pyo3(signature = (x, sizes, axis=0))]
fn split<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    sizes: &Bound<'py, PyAny>,
    axis: i64,
) -> PyResult<Bound<'py, PyList>> {
    let v = as_var(py, x)?;
    let items = shape_items(py, sizes)?;
    let parts = at_user_site(py, || build::split(&v, &items, axis)).map_err(graph_err)?;
    let wrapped = parts
        .into_iter()
        .map(|p| wrap(py, p))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, wrapped)
}

/// `np.matmul`.
#[pyfunction]
fn matmul(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let (a, b) = (as_var(py, a)?, as_var(py, b)?);
    wrap_built(py, at_user_site(py, || build::matmul(&a, &b)))
}

/// `np.dot` (rank ≤ 2).
#[pyfunction]
fn dot(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let (a, b) = (as_var(py, a)?, as_var(py, b)?);
    wrap_built(py, at_user_site(py, || build::dot(&a, &b)))
}

/// Outer product of two vectors (flattened first).
#[pyfunction]
fn outer(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let (a, b) = (as_var(py, a)?, as_var(py, b)?);
    wrap_built(py, at_user_site(py, || build::outer(&a, &b)))
}

/// Shared implementation of `set_subtensor`/`inc_subtensor` and `x[idx].set/inc`.
pub fn update_subtensor(
    py: Python<'_>,
    indexed: &Var,
    y: &Bound<'_, PyAny>,
    set: bool,
) -> PyResult<Py<PyAny>> {
    let y = match operand(py, y)? {
        Operand::Var(v) => v,
        Operand::Scalar(s) => at_user_site(py, || crate::var::scalar_like(s, indexed.dtype())),
    };
    let built = at_user_site(py, || {
        if set {
            build::set_subtensor(indexed, &y)
        } else {
            build::inc_subtensor(indexed, &y)
        }
    });
    wrap_built(py, built)
}

fn indexed_arg(x: &Bound<'_, PyAny>) -> PyResult<Var> {
    var_of(x).ok_or_else(|| {
        type_err("the first argument must be the result of indexing a symbolic tensor (x[idx])")
    })
}

/// `set_subtensor(x[idx], y)`: `x` with the indexed elements replaced by `y`.
#[pyfunction]
fn set_subtensor(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    update_subtensor(py, &indexed_arg(x)?, y, true)
}

/// `inc_subtensor(x[idx], y)`: `x` with `y` added to the indexed elements.
#[pyfunction]
fn inc_subtensor(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    update_subtensor(py, &indexed_arg(x)?, y, false)
}

/// `take(x, indices, axis)`.
#[pyfunction]
#[pyo3(signature = (x, indices, axis=0))]
fn take(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    axis: i64,
) -> PyResult<Py<PyAny>> {
    let (x, i) = (as_var(py, x)?, as_var(py, indices)?);
    wrap_built(py, at_user_site(py, || build::take(&x, &i, axis)))
}

/// Shared implementation of `round`: half to even (NumPy's, the default), or half away from
/// zero (`sign(x) * floor(|x| + 0.5)`).
pub fn round_impl(py: Python<'_>, x: &Var, mode: Option<&str>) -> PyResult<Py<PyAny>> {
    let built = at_user_site(py, || match mode {
        None | Some("half_to_even") => Ok(Some(build::round(x)?)),
        Some("half_away_from_zero") => {
            let ax = build::abs(x)?;
            let half = build::weak_constant(build::Scalar::Float(0.5), ax.dtype());
            let a = build::add(&ax, &half)?;
            Ok(Some(build::mul(&build::sign(x)?, &build::floor(&a)?)?))
        }
        Some(_) => Ok(None),
    })
    .map_err(graph_err)?;
    match built {
        Some(v) => wrap(py, v),
        None => Err(value_err(format!(
            "round mode must be 'half_to_even' or 'half_away_from_zero', got {:?}",
            mode.unwrap_or_default()
        ))),
    }
}

/// `round(x, mode=None)`.
#[pyfunction]
#[pyo3(signature = (x, mode=None))]
fn round(py: Python<'_>, x: &Bound<'_, PyAny>, mode: Option<&str>) -> PyResult<Py<PyAny>> {
    let v = as_var(py, x)?;
    round_impl(py, &v, mode)
}

/// PyTensor's `debugprint` text of variables.
#[pyfunction]
#[pyo3(signature = (vars, print_type=false, depth=None))]
fn debugprint(vars: &Bound<'_, PyAny>, print_type: bool, depth: Option<usize>) -> PyResult<String> {
    let vs: Vec<Var> = if let Some(v) = var_of(vars) {
        vec![v]
    } else {
        vars.try_iter()?
            .map(|i| {
                let i = i?;
                var_of(&i).ok_or_else(|| type_err("debugprint takes variables"))
            })
            .collect::<PyResult<_>>()?
    };
    Ok(oxtensor::debugprint(
        &vs,
        PrintOptions { print_type, depth },
    ))
}
