//! A versioned JSON format for oxtensor graphs that loads without running any code: the one
//! source of truth behind pickling, `oxtensor.save`/`load` and the JAX translation.
//!
//! A document (see `docs/serialization.md`) is
//!
//! ```json
//! {"format": "oxtensor-graph", "version": 1,
//!  "nodes": [ ... ], "inputs": [[n, 0], ...], "outputs": [[n, i], ...],
//!  "updates": [[shared, value], ...], "givens": [[var, replacement], ...],
//!  "generators": [[shared, default_update | null], ...], "meta": {...}}
//! ```
//!
//! `nodes` is a table in dependency order: every reference `[node, output]` points at an
//! earlier entry, so a graph of `n` nodes is read in one pass with no recursion but the
//! nesting of inner graphs. Decoding trusts nothing: each node is rebuilt through the graph
//! builder, which checks arity, dtypes and shapes as for a graph built by hand, and a file
//! written by a newer oxtensor, or one that is corrupt, gives a [`SerialError`] naming the
//! field.

mod check;
mod error;
mod family;
mod json;
mod ops;
mod reader;
mod scalar;
mod tensor;
mod writer;

pub use error::SerialError;

use json::{array, obj};
use oxtensor_graph::Var;
use reader::Decoder;
use serde_json::{Value, json};
use writer::Encoder;

/// The `format` field of every document.
pub const FORMAT: &str = "oxtensor-graph";

/// The format version this build writes, and the newest it reads.
pub const VERSION: u64 = 1;

/// A graph with everything a function needs: explicit inputs, outputs, updates of shared
/// variables, substitutions, which shared variables hold random generators (and their default
/// updates), and free-form metadata for the front end (a mode, names of keyword inputs, …).
#[derive(Clone, Default)]
pub struct Bundle {
    /// The explicit inputs, in call order.
    pub inputs: Vec<Var>,
    /// The outputs.
    pub outputs: Vec<Var>,
    /// `(shared variable, new value)` pairs.
    pub updates: Vec<(Var, Var)>,
    /// `(variable, replacement)` pairs.
    pub givens: Vec<(Var, Var)>,
    /// Shared variables holding random generators, with their default updates.
    pub generators: Vec<(Var, Option<Var>)>,
    /// Front-end data, stored as given (must be JSON; never interpreted here).
    pub meta: Value,
}

/// Writes `bundle` as a document (compact JSON text).
pub fn encode(bundle: &Bundle) -> String {
    encode_with_shared(bundle).0
}

/// Writes `bundle` as a document, also returning the shared variables of its node table in
/// table order (the order of its `"kind": "shared"` entries), so a reader of the document in
/// the same process (the JAX translation) can feed them their current values.
pub fn encode_with_shared(bundle: &Bundle) -> (String, Vec<Var>) {
    let mut enc = Encoder::default();
    let inputs: Vec<Value> = bundle.inputs.iter().map(|v| enc.var(v)).collect();
    let outputs: Vec<Value> = bundle.outputs.iter().map(|v| enc.var(v)).collect();
    let mut pairs = |list: &[(Var, Var)]| -> Vec<Value> {
        list.iter()
            .map(|(a, b)| json!([enc.var(a), enc.var(b)]))
            .collect()
    };
    let updates = pairs(&bundle.updates);
    let givens = pairs(&bundle.givens);
    let generators: Vec<Value> = bundle
        .generators
        .iter()
        .map(|(g, u)| json!([enc.var(g), u.as_ref().map_or(Value::Null, |u| enc.var(u))]))
        .collect();
    let (nodes, shared) = enc.finish();
    let text = json!({
        "format": FORMAT,
        "version": VERSION,
        "nodes": nodes,
        "inputs": inputs,
        "outputs": outputs,
        "updates": updates,
        "givens": givens,
        "generators": generators,
        "meta": bundle.meta,
    })
    .to_string();
    (text, shared)
}

fn refs(dec: &Decoder, doc: &json::Obj<'_>, key: &str) -> Result<Vec<Var>, SerialError> {
    let at = doc.path(key);
    doc.array(key)?
        .iter()
        .enumerate()
        .map(|(i, r)| dec.var(r, &format!("{at}[{i}]")))
        .collect()
}

fn pair_refs(
    dec: &Decoder,
    doc: &json::Obj<'_>,
    key: &str,
    second_optional: bool,
) -> Result<Vec<(Var, Option<Var>)>, SerialError> {
    let at = doc.path(key);
    let Some(list) = doc.opt(key) else {
        return Ok(Vec::new());
    };
    array(list, &at)?
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let here = format!("{at}[{i}]");
            let [a, b] = array(p, &here)? else {
                return Err(SerialError::invalid(&here, "expected a pair"));
            };
            let b = if second_optional && b.is_null() {
                None
            } else {
                Some(dec.var(b, &format!("{here}[1]"))?)
            };
            Ok((dec.var(a, &format!("{here}[0]"))?, b))
        })
        .collect()
}

fn complete(pairs: Vec<(Var, Option<Var>)>) -> Vec<(Var, Var)> {
    pairs
        .into_iter()
        .filter_map(|(a, b)| b.map(|b| (a, b)))
        .collect()
}

/// Reads a document, checking its format and version first and then every node.
pub fn decode(text: &str) -> Result<Bundle, SerialError> {
    let value: Value = serde_json::from_str(text).map_err(|e| SerialError::Json(e.to_string()))?;
    let doc = obj(&value, "document")
        .map_err(|_| SerialError::NotAGraph("the document is not a JSON object".into()))?;
    match doc.opt("format").and_then(Value::as_str) {
        Some(FORMAT) => {}
        Some(other) => {
            return Err(SerialError::NotAGraph(format!(
                "its format is {other:?}, expected {FORMAT:?}"
            )));
        }
        None => return Err(SerialError::NotAGraph("it has no \"format\" field".into())),
    }
    let version = doc
        .opt("version")
        .and_then(Value::as_u64)
        .ok_or_else(|| SerialError::invalid("document.version", "expected a positive integer"))?;
    if version > VERSION {
        return Err(SerialError::NewerVersion {
            found: version,
            supported: VERSION,
        });
    }
    if version == 0 {
        return Err(SerialError::invalid(
            "document.version",
            "version 0 does not exist",
        ));
    }
    let mut dec = Decoder::default();
    for (i, node) in doc.array("nodes")?.iter().enumerate() {
        dec.node(node, &format!("nodes[{i}]"))?;
    }
    let inputs = refs(&dec, &doc, "inputs")?;
    if let Some(i) = inputs.iter().position(|v| !v.is_input()) {
        return Err(SerialError::invalid(
            &format!("document.inputs[{i}]"),
            "expected a graph input",
        ));
    }
    let outputs = refs(&dec, &doc, "outputs")?;
    let updates = complete(pair_refs(&dec, &doc, "updates", false)?);
    if let Some(i) = updates.iter().position(|(s, _)| s.shared_value().is_none()) {
        return Err(SerialError::invalid(
            &format!("document.updates[{i}]"),
            "only shared variables may be updated",
        ));
    }
    let givens = complete(pair_refs(&dec, &doc, "givens", false)?);
    let generators = pair_refs(&dec, &doc, "generators", true)?;
    if let Some(i) = generators
        .iter()
        .position(|(s, _)| s.shared_value().is_none())
    {
        return Err(SerialError::invalid(
            &format!("document.generators[{i}]"),
            "expected a shared variable",
        ));
    }
    Ok(Bundle {
        inputs,
        outputs,
        updates,
        givens,
        generators,
        meta: doc.opt("meta").cloned().unwrap_or(Value::Null),
    })
}
