//! `Op::CheckAndRaise` in the format: `{"op": "CheckAndRaise", "exc": <kind>, "msg": <text>}`,
//! the exception's kind as `oxtensor_graph::Check::exc` names it (a builtin exception's name,
//! or the module-qualified name of a user's class, which the reading process resolves).

use crate::SerialError;
use crate::json::Obj;
use oxtensor_graph::Check;
use serde_json::{Value, json};

/// Writes the check's exception kind and message through `put`.
pub fn encode_check(c: &Check, put: &mut impl FnMut(&str, Value)) {
    put("exc", json!(c.exc));
    put("msg", json!(c.msg));
}

/// Reads a check written by [`encode_check`].
pub fn decode_check(o: &Obj<'_>) -> Result<Check, SerialError> {
    Ok(Check::new(o.str("exc")?, o.str("msg")?))
}
