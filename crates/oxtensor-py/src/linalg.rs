//! Linear algebra for Python: one entry point, `_core.linalg(name, inputs, **params)`, that
//! builds the named [`LinalgOp`] with its static parameters (already normalised by the
//! pure-Python `oxtensor.tensor.linalg`, which holds PyTensor's signatures), and
//! `_core.matrix_fn(name, x, k)` for the matrix helpers built from other ops (`tril`, `triu`,
//! `diagonal`, `diag_embed`, `trace`, `matrix_transpose`); and `pt.einsum`'s builders
//! (`_core.einsum`, `_core.einsum_sublists`, `_core.einsum_path`), whose whole logic is
//! [`oxtensor_graph::build::einsum`].

use oxtensor_graph::build::einsum::{self as es, Optimize, Sub};
use oxtensor_graph::build::linalg as la;
use oxtensor_graph::{AssumeA, GraphError, LinalgOp, QrMode, Var};
use pyo3::prelude::*;
use std::collections::HashMap;

use crate::errors::{graph_err, value_err};
use crate::site::at_user_site;
use crate::var::{as_var, wrap, wrap_built};

/// Registers the linear-algebra builders.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(linalg, m)?)?;
    m.add_function(wrap_pyfunction!(matrix_fn, m)?)?;
    m.add_function(wrap_pyfunction!(einsum, m)?)?;
    m.add_function(wrap_pyfunction!(einsum_sublists, m)?)?;
    m.add_function(wrap_pyfunction!(einsum_path, m)?)?;
    Ok(())
}

fn assume_a(name: &str) -> PyResult<AssumeA> {
    match name {
        "gen" | "general" => Ok(AssumeA::General),
        "sym" | "symmetric" | "her" | "hermitian" => Ok(AssumeA::Symmetric),
        "pos" | "positive definite" => Ok(AssumeA::PositiveDefinite),
        "tridiagonal" => Ok(AssumeA::Tridiagonal),
        "banded" => Ok(AssumeA::Banded),
        other => Err(value_err(format!(
            "solve: assume_a={other:?} is not supported; expected 'gen', 'sym', 'her', 'pos', 'tridiagonal' or 'banded'"
        ))),
    }
}

fn qr_mode(name: &str) -> PyResult<QrMode> {
    match name {
        "reduced" | "economic" => Ok(QrMode::Reduced),
        "complete" | "full" => Ok(QrMode::Complete),
        "r" => Ok(QrMode::R),
        other => Err(value_err(format!(
            "qr: mode={other:?} is not supported; expected 'reduced', 'complete', 'economic', 'full' or 'r'"
        ))),
    }
}

/// The right-hand side's core rank, PyTensor's default `min(b.ndim, 2)` when not given.
fn rhs_ndim(b: Option<&Var>, given: Option<usize>) -> PyResult<usize> {
    match (given, b) {
        (Some(n @ (1 | 2)), _) => Ok(n),
        (Some(n), _) => Err(value_err(format!("b_ndim must be 1 or 2, got {n}"))),
        (None, Some(b)) => Ok(b.ndim().clamp(1, 2)),
        (None, None) => Ok(2),
    }
}

/// Builds linear-algebra op `name` on `inputs`; returns its outputs as a list.
#[pyfunction]
#[pyo3(signature = (
    name, inputs, lower=true, nan_on_error=true, assume_a="gen", transposed=false,
    unit_diagonal=false, b_ndim=None, full_matrices=true, compute_uv=true, mode="reduced",
    p_indices=false
))]
#[allow(clippy::too_many_arguments)]
fn linalg(
    py: Python<'_>,
    name: &str,
    inputs: Vec<Bound<'_, PyAny>>,
    lower: bool,
    nan_on_error: bool,
    assume_a: &str,
    transposed: bool,
    unit_diagonal: bool,
    b_ndim: Option<usize>,
    full_matrices: bool,
    compute_uv: bool,
    mode: &str,
    p_indices: bool,
) -> PyResult<Vec<Py<PyAny>>> {
    let xs: Vec<Var> = inputs
        .iter()
        .map(|x| as_var(py, x))
        .collect::<PyResult<_>>()?;
    let rhs = |i: usize| rhs_ndim(xs.get(i), b_ndim);
    let op = match name {
        "cholesky" => LinalgOp::Cholesky {
            lower,
            nan_on_error,
        },
        "solve" => LinalgOp::Solve {
            assume_a: self::assume_a(assume_a)?,
            lower,
            transposed,
            b_ndim: rhs(1)?,
        },
        "solve_triangular" => LinalgOp::SolveTriangular {
            lower,
            trans: transposed,
            unit_diagonal,
            b_ndim: rhs(1)?,
        },
        "cho_solve" => LinalgOp::ChoSolve {
            lower,
            b_ndim: rhs(1)?,
        },
        "lu_solve" => LinalgOp::LuSolve {
            trans: transposed,
            b_ndim: rhs(2)?,
        },
        "inv" => LinalgOp::Inv,
        "pinv" => LinalgOp::Pinv,
        "det" => LinalgOp::Det,
        "slogdet" => LinalgOp::SLogDet,
        "eigh" => LinalgOp::Eigh { lower },
        "eigvalsh" => LinalgOp::Eigvalsh { lower },
        "eig" => LinalgOp::Eig,
        "svd" => LinalgOp::Svd {
            full_matrices,
            compute_uv,
        },
        "qr" => LinalgOp::Qr {
            mode: qr_mode(mode)?,
        },
        "lu" => LinalgOp::Lu { p_indices },
        "lu_factor" => LinalgOp::LuFactor,
        "expm" => LinalgOp::Expm,
        "kron" => LinalgOp::Kron,
        "solve_sylvester" => LinalgOp::SolveSylvester,
        "solve_continuous_lyapunov" => LinalgOp::SolveContinuousLyapunov,
        "solve_discrete_lyapunov" => LinalgOp::SolveDiscreteLyapunov,
        other => return Err(value_err(format!("unknown linear-algebra op {other:?}"))),
    };
    let outs = at_user_site(py, || la::linalg(op, &xs)).map_err(graph_err)?;
    outs.into_iter().map(|v| wrap(py, v)).collect()
}

/// Builds matrix helper `name` (`tril`, `triu` with offset `k`; `diagonal`, `diag_embed`,
/// `trace`, `matrix_transpose`) of `x`.
#[pyfunction]
#[pyo3(signature = (name, x, k=0))]
fn matrix_fn(py: Python<'_>, name: &str, x: &Bound<'_, PyAny>, k: i64) -> PyResult<Py<PyAny>> {
    let x = as_var(py, x)?;
    let built = at_user_site(py, || match name {
        "tril" => la::tril(&x, k),
        "triu" => la::triu(&x, k),
        "diagonal" => la::diagonal_k(&x, k),
        "diag_embed" => la::diag_embed(&x),
        "trace" => la::trace(&x),
        "matrix_transpose" => la::matrix_transpose(&x),
        other => Err(GraphError::Invalid {
            op: "matrix_fn".into(),
            message: format!("unknown matrix function {other:?}"),
        }),
    });
    wrap_built(py, built)
}

/// An einsum contraction order by name: `"auto"` (PyTensor's), `"greedy"`, `"optimal"`,
/// `"right_to_left"`.
fn einsum_strategy(name: &str) -> PyResult<Optimize> {
    match name {
        "auto" => Ok(Optimize::Auto),
        "greedy" => Ok(Optimize::Greedy),
        "optimal" => Ok(Optimize::Optimal),
        "right_to_left" => Ok(Optimize::RightToLeft),
        other => Err(value_err(format!(
            "einsum: unknown contraction order {other:?}; expected 'auto', 'greedy', 'optimal' \
             or 'right_to_left'"
        ))),
    }
}

/// `np.einsum(subscripts, *operands)` built by [`es::einsum_with`] along the contraction
/// order `optimize` (a name of [`einsum_strategy`]).
#[pyfunction]
#[pyo3(signature = (subscripts, operands, optimize="auto"))]
fn einsum(
    py: Python<'_>,
    subscripts: &str,
    operands: Vec<Bound<'_, PyAny>>,
    optimize: &str,
) -> PyResult<Py<PyAny>> {
    let strategy = einsum_strategy(optimize)?;
    let xs: Vec<Var> = operands
        .iter()
        .map(|x| as_var(py, x))
        .collect::<PyResult<_>>()?;
    wrap_built(
        py,
        at_user_site(py, || es::einsum_with(subscripts, &xs, strategy)),
    )
}

/// The subscripts string of the interleaved form: each sublist's integers (`None` for
/// `Ellipsis`) as letters, and the output's after `->` when given.
#[pyfunction]
#[pyo3(signature = (sublists, output=None))]
fn einsum_sublists(
    sublists: Vec<Vec<Option<i64>>>,
    output: Option<Vec<Option<i64>>>,
) -> PyResult<String> {
    let sub = |s: &[Option<i64>]| -> Vec<Sub> {
        s.iter()
            .map(|e| e.map_or(Sub::Ellipsis, Sub::Index))
            .collect()
    };
    let inputs: Vec<Vec<Sub>> = sublists.iter().map(|s| sub(s)).collect();
    let output = output.as_deref().map(sub);
    es::sublist_subscripts(&inputs, output.as_deref()).map_err(graph_err)
}

/// The pairwise contraction path (`[(i, j), ...]`, NumPy's convention) of `terms` (one string
/// of labels per operand) to `out` under the strategy named `optimize`, with `sizes` the extent
/// of every label.
#[pyfunction]
fn einsum_path(
    optimize: &str,
    terms: Vec<String>,
    out: &str,
    sizes: HashMap<char, usize>,
) -> PyResult<Vec<(usize, usize)>> {
    let terms: Vec<Vec<char>> = terms.iter().map(|t| t.chars().collect()).collect();
    let out: Vec<char> = out.chars().collect();
    es::contraction_path(einsum_strategy(optimize)?, &terms, &out, &sizes).map_err(graph_err)
}
