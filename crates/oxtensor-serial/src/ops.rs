//! Ops in the format: one exhaustive `match` to encode, one to decode (by the `"op"` name).
//!
//! An op is an object `{"op": "<Name>", ...parameters}`; inner graphs (`Composite`,
//! `FusedReduce`, `FusedMatMul`, `OpFromGraph`, `IfElse`, `Scan`) hold frozen graphs
//! (`{"inputs": [types], "outputs": [refs]}`) whose nodes live in the document's node table.
//! The linear-algebra and random families are in [`crate::family`].

use crate::SerialError;
use crate::family;
use crate::json::Obj;
use crate::reader::Decoder;
use crate::scalar;
use crate::tensor::{decode_dtype, encode_dtype};
use crate::writer::Encoder;
use oxtensor_graph::{
    ArgReduceOp, Axes, GradMarker, IfElse, IndexEntry, IndexSpec, Op, OpFromGraph, ReduceOp,
    ScalarOp, Scan,
};
use serde_json::{Map, Value, json};
use std::sync::Arc;

fn reduce_of(o: &Obj<'_>) -> Result<ReduceOp, SerialError> {
    let name = o.str("fn")?;
    ReduceOp::ALL
        .into_iter()
        .find(|r| r.name() == name)
        .ok_or_else(|| SerialError::invalid(&o.path("fn"), format!("unknown reduction {name:?}")))
}

fn index_json(spec: &IndexSpec) -> Value {
    Value::Array(
        spec.iter()
            .map(|e| match e {
                IndexEntry::Index => json!("index"),
                IndexEntry::Slice { start, stop, step } => {
                    json!({"start": start, "stop": stop, "step": step})
                }
            })
            .collect(),
    )
}

fn index_of(o: &Obj<'_>, key: &str) -> Result<IndexSpec, SerialError> {
    let at = o.path(key);
    o.array(key)?
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let here = format!("{at}[{i}]");
            if e.as_str() == Some("index") {
                return Ok(IndexEntry::Index);
            }
            let s = crate::json::obj(e, &here)?;
            Ok(IndexEntry::Slice {
                start: s.bool("start")?,
                stop: s.bool("stop")?,
                step: s.bool("step")?,
            })
        })
        .collect()
}

fn axes_of(o: &Obj<'_>) -> Result<Axes, SerialError> {
    let axes = o.usizes("axes")?;
    if axes.windows(2).any(|w| w[0] >= w[1]) {
        return Err(SerialError::invalid(
            &o.path("axes"),
            "axes must be sorted and unique",
        ));
    }
    Ok(axes.into_iter().collect())
}

fn name_of(o: &Obj<'_>) -> Result<Option<Arc<str>>, SerialError> {
    Ok(o.opt_str("name")?.map(Arc::from))
}

fn taps_of(o: &Obj<'_>, key: &str) -> Result<Vec<Vec<i64>>, SerialError> {
    let at = o.path(key);
    o.array(key)?
        .iter()
        .enumerate()
        .map(|(i, list)| {
            let here = format!("{at}[{i}]");
            crate::json::array(list, &here)?
                .iter()
                .enumerate()
                .map(|(k, t)| crate::json::i64_of(t, &format!("{here}[{k}]")))
                .collect()
        })
        .collect()
}

/// The op as a JSON object, encoding its inner graphs into `enc`'s node table.
pub fn encode_op(op: &Op, enc: &mut Encoder) -> Value {
    let mut m = Map::new();
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    let name = match op {
        Op::Elemwise(s) => {
            put("scalar", json!(s.name()));
            if let ScalarOp::Cast(d) = s {
                put("dtype", encode_dtype(*d));
            }
            "Elemwise"
        }
        Op::Reduce { op, axes } => {
            put("fn", json!(op.name()));
            put("axes", json!(axes.to_vec()));
            "Reduce"
        }
        Op::ArgReduce { op, axis } => {
            let f = match op {
                ArgReduceOp::ArgMax => "argmax",
                ArgReduceOp::ArgMin => "argmin",
            };
            put("fn", json!(f));
            put("axis", json!(axis));
            "ArgReduce"
        }
        Op::DimShuffle { order } => {
            put("order", json!(order.to_vec()));
            "DimShuffle"
        }
        Op::Reshape { ndim } => {
            put("ndim", json!(ndim));
            "Reshape"
        }
        Op::Shape => "Shape",
        Op::ShapeI(i) => {
            put("axis", json!(i));
            "ShapeI"
        }
        Op::SpecifyShape(s) => {
            put("shape", json!(s.to_vec()));
            "SpecifyShape"
        }
        Op::Alloc { ndim } => {
            put("ndim", json!(ndim));
            "Alloc"
        }
        Op::Arange(d) => {
            put("dtype", encode_dtype(*d));
            "Arange"
        }
        Op::Eye(d) => {
            put("dtype", encode_dtype(*d));
            "Eye"
        }
        Op::MakeVector(d) => {
            put("dtype", encode_dtype(*d));
            "MakeVector"
        }
        Op::Join { axis } => {
            put("axis", json!(axis));
            "Join"
        }
        Op::Split { axis, n } => {
            put("axis", json!(axis));
            put("n", json!(n));
            "Split"
        }
        Op::Subtensor(spec) => {
            put("index", index_json(spec));
            "Subtensor"
        }
        Op::IncSubtensor { index, set } => {
            put("index", index_json(index));
            put("set", json!(set));
            "IncSubtensor"
        }
        Op::Take { axis } => {
            put("axis", json!(axis));
            "Take"
        }
        Op::IncTake { axis, set } => {
            put("axis", json!(axis));
            put("set", json!(set));
            "IncTake"
        }
        Op::Composite(body) => {
            put("body", enc.frozen(body));
            "Composite"
        }
        Op::FusedReduce { op, axes, body } => {
            put("fn", json!(op.name()));
            put("axes", json!(axes.to_vec()));
            put("body", enc.frozen(body));
            "FusedReduce"
        }
        Op::GradMarker(g) => {
            let k = match g {
                GradMarker::Zero => "zero",
                GradMarker::Disconnected => "disconnected",
                GradMarker::Clip => "clip",
                GradMarker::Undefined => "undefined",
            };
            put("marker", json!(k));
            "GradMarker"
        }
        Op::MatMul => "MatMul",
        Op::FusedMatMul { body } => {
            put("body", enc.frozen(body));
            "FusedMatMul"
        }
        Op::OpFromGraph(o) => {
            put("body", enc.frozen(&o.body));
            put("name", json!(o.name.as_deref()));
            put(
                "pullback",
                o.pullback.as_ref().map_or(Value::Null, |g| enc.frozen(g)),
            );
            put(
                "pushforward",
                o.pushforward
                    .as_ref()
                    .map_or(Value::Null, |g| enc.frozen(g)),
            );
            let implicit: Vec<Value> = o.implicit.iter().map(|v| enc.var(v)).collect();
            put("implicit", Value::Array(implicit));
            if let Some(subscripts) = &o.einsum {
                put("einsum", json!(&**subscripts));
            }
            "OpFromGraph"
        }
        Op::IfElse(b) => {
            put("then", enc.frozen(&b.then_branch));
            put("else", enc.frozen(&b.else_branch));
            "IfElse"
        }
        Op::Scan(s) => {
            put("body", enc.frozen(&s.body));
            put("sequence_taps", json!(s.sequence_taps));
            put("state_taps", json!(s.state_taps));
            put("n_mapped", json!(s.n_mapped));
            put("go_backwards", json!(s.go_backwards));
            put("until", json!(s.until));
            put("truncate_gradient", json!(s.truncate_gradient));
            put("last_only", json!(s.last_only));
            put("name", json!(s.name.as_deref()));
            "Scan"
        }
        Op::Linalg(l) => {
            family::encode_linalg(l, &mut put);
            "Linalg"
        }
        Op::Random(r) => {
            family::encode_random(r, &mut put);
            "Random"
        }
        Op::Extra(e) => {
            family::encode_extra(e, &mut put);
            "Extra"
        }
        Op::CheckAndRaise(c) => {
            crate::check::encode_check(c, &mut put);
            "CheckAndRaise"
        }
    };
    m.insert("op".to_string(), json!(name));
    Value::Object(m)
}

/// Reads an op; inner graphs and implicit inputs refer to nodes `dec` has already read.
pub fn decode_op(o: &Obj<'_>, dec: &Decoder) -> Result<Op, SerialError> {
    let name = o.str("op")?;
    Ok(match name {
        "Elemwise" => {
            let cast = o
                .opt("dtype")
                .map(|d| decode_dtype(d, &o.path("dtype")))
                .transpose()?;
            Op::Elemwise(scalar::from_name(
                o.str("scalar")?,
                cast,
                &o.path("scalar"),
            )?)
        }
        "Reduce" => Op::Reduce {
            op: reduce_of(o)?,
            axes: axes_of(o)?,
        },
        "ArgReduce" => Op::ArgReduce {
            op: match o.str("fn")? {
                "argmax" => ArgReduceOp::ArgMax,
                "argmin" => ArgReduceOp::ArgMin,
                other => {
                    return Err(SerialError::invalid(
                        &o.path("fn"),
                        format!("unknown arg-reduction {other:?}"),
                    ));
                }
            },
            axis: o.opt_usize("axis")?,
        },
        "DimShuffle" => Op::DimShuffle {
            order: o.opt_usizes("order")?.into_iter().collect(),
        },
        "Reshape" => Op::Reshape {
            ndim: o.usize("ndim")?,
        },
        "Shape" => Op::Shape,
        "ShapeI" => Op::ShapeI(o.usize("axis")?),
        "SpecifyShape" => Op::SpecifyShape(o.opt_usizes("shape")?.into_iter().collect()),
        "Alloc" => Op::Alloc {
            ndim: o.usize("ndim")?,
        },
        "Arange" => Op::Arange(decode_dtype(o.get("dtype")?, &o.path("dtype"))?),
        "Eye" => Op::Eye(decode_dtype(o.get("dtype")?, &o.path("dtype"))?),
        "MakeVector" => Op::MakeVector(decode_dtype(o.get("dtype")?, &o.path("dtype"))?),
        "Join" => Op::Join {
            axis: o.usize("axis")?,
        },
        "Split" => Op::Split {
            axis: o.usize("axis")?,
            n: o.usize("n")?,
        },
        "Subtensor" => Op::Subtensor(index_of(o, "index")?),
        "IncSubtensor" => Op::IncSubtensor {
            index: index_of(o, "index")?,
            set: o.bool("set")?,
        },
        "Take" => Op::Take {
            axis: o.usize("axis")?,
        },
        "IncTake" => Op::IncTake {
            axis: o.usize("axis")?,
            set: o.bool("set")?,
        },
        "Composite" => Op::Composite(dec.scalar_program(o.get("body")?, &o.path("body"))?),
        "FusedReduce" => Op::FusedReduce {
            op: reduce_of(o)?,
            axes: axes_of(o)?,
            body: dec.scalar_program(o.get("body")?, &o.path("body"))?,
        },
        "GradMarker" => Op::GradMarker(match o.str("marker")? {
            "zero" => GradMarker::Zero,
            "disconnected" => GradMarker::Disconnected,
            "clip" => GradMarker::Clip,
            "undefined" => GradMarker::Undefined,
            other => {
                return Err(SerialError::invalid(
                    &o.path("marker"),
                    format!("unknown gradient marker {other:?}"),
                ));
            }
        }),
        "MatMul" => Op::MatMul,
        "FusedMatMul" => Op::FusedMatMul {
            body: dec.scalar_program(o.get("body")?, &o.path("body"))?,
        },
        "OpFromGraph" => {
            let optional = |key: &str| o.opt(key).map(|g| dec.frozen(g, &o.path(key))).transpose();
            let at = o.path("implicit");
            let implicit = o
                .array("implicit")?
                .iter()
                .enumerate()
                .map(|(i, r)| dec.shared_ref(r, &format!("{at}[{i}]")))
                .collect::<Result<Vec<_>, _>>()?;
            Op::OpFromGraph(Arc::new(OpFromGraph {
                body: dec.frozen(o.get("body")?, &o.path("body"))?,
                name: name_of(o)?,
                pullback: optional("pullback")?,
                pushforward: optional("pushforward")?,
                implicit,
                einsum: o.opt_str("einsum")?.map(Arc::from),
            }))
        }
        "IfElse" => Op::IfElse(Arc::new(IfElse {
            then_branch: dec.frozen(o.get("then")?, &o.path("then"))?,
            else_branch: dec.frozen(o.get("else")?, &o.path("else"))?,
        })),
        "Scan" => Op::Scan(Arc::new(Scan {
            body: dec.frozen(o.get("body")?, &o.path("body"))?,
            sequence_taps: taps_of(o, "sequence_taps")?,
            state_taps: taps_of(o, "state_taps")?,
            n_mapped: o.usize("n_mapped")?,
            go_backwards: o.bool("go_backwards")?,
            until: o.bool("until")?,
            truncate_gradient: o.opt_usize("truncate_gradient")?,
            last_only: o.bools("last_only")?,
            name: name_of(o)?,
        })),
        "Linalg" => Op::Linalg(family::decode_linalg(o)?),
        "Random" => Op::Random(family::decode_random(o)?),
        "Extra" => Op::Extra(family::decode_extra(o)?),
        "CheckAndRaise" => Op::CheckAndRaise(crate::check::decode_check(o)?),
        other => {
            return Err(SerialError::invalid(
                &o.path("op"),
                format!("unknown op {other:?}"),
            ));
        }
    })
}
