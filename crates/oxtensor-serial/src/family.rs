//! The op families with their own enums: linear algebra (`Op::Linalg`), random draws
//! (`Op::Random`) and the extra tensor ops (`Op::Extra`). A linear-algebra op is
//! `{"op": "Linalg", "name": LinalgOp::name(), ...its parameters}`; a draw is
//! `{"op": "Random", "dist": Distribution::name(), "dtype", "size_ndim"}`; an extra op
//! `{"op": "Extra", "name": "sort", ...its parameters}`.

use crate::SerialError;
use crate::json::Obj;
use crate::tensor::{decode_dtype, encode_dtype};
use oxtensor_graph::{AssumeA, Distribution, ExtraOp, LinalgOp, QrMode, RandomOp};
use serde_json::{Value, json};

fn assume_name(a: AssumeA) -> &'static str {
    match a {
        AssumeA::General => "gen",
        AssumeA::Symmetric => "sym",
        AssumeA::PositiveDefinite => "pos",
        AssumeA::Tridiagonal => "tridiagonal",
        AssumeA::Banded => "banded",
    }
}

fn qr_name(m: QrMode) -> &'static str {
    match m {
        QrMode::Reduced => "reduced",
        QrMode::Complete => "complete",
        QrMode::R => "r",
    }
}

/// Writes a linear-algebra op's name and parameters through `put`.
pub fn encode_linalg(l: &LinalgOp, put: &mut impl FnMut(&str, Value)) {
    put("name", json!(l.name()));
    match l {
        LinalgOp::Cholesky {
            lower,
            nan_on_error,
        } => {
            put("lower", json!(lower));
            put("nan_on_error", json!(nan_on_error));
        }
        LinalgOp::Solve {
            assume_a,
            lower,
            transposed,
            b_ndim,
        } => {
            put("assume_a", json!(assume_name(*assume_a)));
            put("lower", json!(lower));
            put("transposed", json!(transposed));
            put("b_ndim", json!(b_ndim));
        }
        LinalgOp::SolveTriangular {
            lower,
            trans,
            unit_diagonal,
            b_ndim,
        } => {
            put("lower", json!(lower));
            put("trans", json!(trans));
            put("unit_diagonal", json!(unit_diagonal));
            put("b_ndim", json!(b_ndim));
        }
        LinalgOp::ChoSolve { lower, b_ndim } => {
            put("lower", json!(lower));
            put("b_ndim", json!(b_ndim));
        }
        LinalgOp::Eigh { lower } | LinalgOp::Eigvalsh { lower } => put("lower", json!(lower)),
        LinalgOp::Svd {
            full_matrices,
            compute_uv,
        } => {
            put("full_matrices", json!(full_matrices));
            put("compute_uv", json!(compute_uv));
        }
        LinalgOp::Qr { mode } => put("mode", json!(qr_name(*mode))),
        LinalgOp::Lu { p_indices } => put("p_indices", json!(p_indices)),
        LinalgOp::LuSolve { trans, b_ndim } => {
            put("trans", json!(trans));
            put("b_ndim", json!(b_ndim));
        }
        LinalgOp::Inv
        | LinalgOp::Pinv
        | LinalgOp::Det
        | LinalgOp::SLogDet
        | LinalgOp::Eig
        | LinalgOp::LuFactor
        | LinalgOp::Expm
        | LinalgOp::Kron
        | LinalgOp::SolveSylvester
        | LinalgOp::SolveContinuousLyapunov
        | LinalgOp::SolveDiscreteLyapunov => {}
    }
}

fn b_ndim(o: &Obj<'_>) -> Result<usize, SerialError> {
    let b = o.usize("b_ndim")?;
    if b == 1 || b == 2 {
        Ok(b)
    } else {
        Err(SerialError::invalid(&o.path("b_ndim"), "expected 1 or 2"))
    }
}

/// Reads a linear-algebra op.
pub fn decode_linalg(o: &Obj<'_>) -> Result<LinalgOp, SerialError> {
    Ok(match o.str("name")? {
        "Cholesky" => LinalgOp::Cholesky {
            lower: o.bool("lower")?,
            nan_on_error: o.bool("nan_on_error")?,
        },
        "Solve" => LinalgOp::Solve {
            assume_a: match o.str("assume_a")? {
                "gen" => AssumeA::General,
                "sym" => AssumeA::Symmetric,
                "pos" => AssumeA::PositiveDefinite,
                "tridiagonal" => AssumeA::Tridiagonal,
                "banded" => AssumeA::Banded,
                other => {
                    return Err(SerialError::invalid(
                        &o.path("assume_a"),
                        format!("unknown assume_a {other:?}"),
                    ));
                }
            },
            lower: o.bool("lower")?,
            transposed: o.bool("transposed")?,
            b_ndim: b_ndim(o)?,
        },
        "SolveTriangular" => LinalgOp::SolveTriangular {
            lower: o.bool("lower")?,
            trans: o.bool("trans")?,
            unit_diagonal: o.bool("unit_diagonal")?,
            b_ndim: b_ndim(o)?,
        },
        "CholeskySolve" => LinalgOp::ChoSolve {
            lower: o.bool("lower")?,
            b_ndim: b_ndim(o)?,
        },
        "MatrixInverse" => LinalgOp::Inv,
        "MatrixPinv" => LinalgOp::Pinv,
        "Det" => LinalgOp::Det,
        "SLogDet" => LinalgOp::SLogDet,
        "Eigh" => LinalgOp::Eigh {
            lower: o.bool("lower")?,
        },
        "Eigvalsh" => LinalgOp::Eigvalsh {
            lower: o.bool("lower")?,
        },
        "Eig" => LinalgOp::Eig,
        "SVD" => LinalgOp::Svd {
            full_matrices: o.bool("full_matrices")?,
            compute_uv: o.bool("compute_uv")?,
        },
        "QR" => LinalgOp::Qr {
            mode: match o.str("mode")? {
                "reduced" => QrMode::Reduced,
                "complete" => QrMode::Complete,
                "r" => QrMode::R,
                other => {
                    return Err(SerialError::invalid(
                        &o.path("mode"),
                        format!("unknown QR mode {other:?}"),
                    ));
                }
            },
        },
        "LU" => LinalgOp::Lu {
            p_indices: o.bool("p_indices")?,
        },
        "LUFactor" => LinalgOp::LuFactor,
        "LUSolve" => LinalgOp::LuSolve {
            trans: o.bool("trans")?,
            b_ndim: b_ndim(o)?,
        },
        "Expm" => LinalgOp::Expm,
        "Kron" => LinalgOp::Kron,
        "SolveSylvester" => LinalgOp::SolveSylvester,
        "SolveContinuousLyapunov" => LinalgOp::SolveContinuousLyapunov,
        "SolveDiscreteLyapunov" => LinalgOp::SolveDiscreteLyapunov,
        other => {
            return Err(SerialError::invalid(
                &o.path("name"),
                format!("unknown linear-algebra op {other:?}"),
            ));
        }
    })
}

/// Writes a random op's distribution, dtype and size rank through `put`.
pub fn encode_random(r: &RandomOp, put: &mut impl FnMut(&str, Value)) {
    put("dist", json!(r.dist.name()));
    put("dtype", encode_dtype(r.dtype));
    put("size_ndim", json!(r.size_ndim));
}

/// Reads a random op.
pub fn decode_random(o: &Obj<'_>) -> Result<RandomOp, SerialError> {
    let name = o.str("dist")?;
    Ok(RandomOp {
        dist: Distribution::by_name(name).ok_or_else(|| {
            SerialError::invalid(&o.path("dist"), format!("unknown distribution {name:?}"))
        })?,
        dtype: decode_dtype(o.get("dtype")?, &o.path("dtype"))?,
        size_ndim: o.opt_usize("size_ndim")?,
    })
}

/// Writes an `Op::Extra` op as `{"name": <kind>, ...its parameters}` through `put`.
pub fn encode_extra(e: &ExtraOp, put: &mut impl FnMut(&str, Value)) {
    let name = match e {
        ExtraOp::Cumulate { axis, mul } => {
            put("axis", json!(axis));
            put("mul", json!(mul));
            "cumulate"
        }
        ExtraOp::Sort { axis } => {
            put("axis", json!(axis));
            "sort"
        }
        ExtraOp::ArgSort { axis } => {
            put("axis", json!(axis));
            "argsort"
        }
        ExtraOp::SearchSorted { right } => {
            put("right", json!(right));
            "searchsorted"
        }
        ExtraOp::Repeat { axis } => {
            put("axis", json!(axis));
            "repeat"
        }
        ExtraOp::Unique {
            index,
            inverse,
            counts,
        } => {
            put("index", json!(index));
            put("inverse", json!(inverse));
            put("counts", json!(counts));
            "unique"
        }
        ExtraOp::Bincount {
            weighted,
            minlength,
        } => {
            put("weighted", json!(weighted));
            put("minlength", json!(minlength));
            "bincount"
        }
        ExtraOp::Nonzero => "nonzero",
    };
    put("name", json!(name));
}

/// Reads an `Op::Extra` op written by [`encode_extra`].
pub fn decode_extra(o: &Obj<'_>) -> Result<ExtraOp, SerialError> {
    Ok(match o.str("name")? {
        "cumulate" => ExtraOp::Cumulate {
            axis: o.usize("axis")?,
            mul: o.bool("mul")?,
        },
        "sort" => ExtraOp::Sort {
            axis: o.usize("axis")?,
        },
        "argsort" => ExtraOp::ArgSort {
            axis: o.usize("axis")?,
        },
        "searchsorted" => ExtraOp::SearchSorted {
            right: o.bool("right")?,
        },
        "repeat" => ExtraOp::Repeat {
            axis: o.usize("axis")?,
        },
        "unique" => ExtraOp::Unique {
            index: o.bool("index")?,
            inverse: o.bool("inverse")?,
            counts: o.bool("counts")?,
        },
        "bincount" => ExtraOp::Bincount {
            weighted: o.bool("weighted")?,
            minlength: o.usize("minlength")?,
        },
        "nonzero" => ExtraOp::Nonzero,
        other => {
            return Err(SerialError::invalid(
                &o.path("name"),
                format!("unknown extra op {other:?}"),
            ));
        }
    })
}
