//! Checked reading of JSON values: each accessor names the path of the field it reads, so a
//! malformed document is reported precisely ([`SerialError::Invalid`]).

use crate::SerialError;
use serde_json::{Map, Value};

/// A JSON object being read, with its path in the document.
pub struct Obj<'a> {
    map: &'a Map<String, Value>,
    /// Where the object is (`nodes[3].op`).
    pub at: String,
}

/// Reads `value` as an object at `at`.
pub fn obj<'a>(value: &'a Value, at: &str) -> Result<Obj<'a>, SerialError> {
    match value {
        Value::Object(map) => Ok(Obj {
            map,
            at: at.to_string(),
        }),
        _ => Err(SerialError::invalid(at, "expected an object")),
    }
}

/// Reads `value` as an array at `at`.
pub fn array<'a>(value: &'a Value, at: &str) -> Result<&'a [Value], SerialError> {
    value
        .as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| SerialError::invalid(at, "expected an array"))
}

/// Reads `value` as a non-negative integer at `at`.
pub fn usize_of(value: &Value, at: &str) -> Result<usize, SerialError> {
    value
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| SerialError::invalid(at, "expected a non-negative integer"))
}

/// Reads `value` as an integer (of either sign) at `at`.
pub fn i64_of(value: &Value, at: &str) -> Result<i64, SerialError> {
    value
        .as_i64()
        .ok_or_else(|| SerialError::invalid(at, "expected an integer"))
}

/// Reads `value` as `null` or a non-negative integer.
pub fn opt_usize_of(value: &Value, at: &str) -> Result<Option<usize>, SerialError> {
    if value.is_null() {
        Ok(None)
    } else {
        usize_of(value, at).map(Some)
    }
}

impl<'a> Obj<'a> {
    /// The path of field `key`.
    pub fn path(&self, key: &str) -> String {
        format!("{}.{key}", self.at)
    }

    /// Field `key`, which must be present.
    pub fn get(&self, key: &str) -> Result<&'a Value, SerialError> {
        self.map
            .get(key)
            .ok_or_else(|| SerialError::invalid(&self.at, format!("missing field {key:?}")))
    }

    /// Field `key` if present and not `null`.
    pub fn opt(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// A string field.
    pub fn str(&self, key: &str) -> Result<&'a str, SerialError> {
        self.get(key)?
            .as_str()
            .ok_or_else(|| SerialError::invalid(&self.path(key), "expected a string"))
    }

    /// A string field that may be absent or `null`.
    pub fn opt_str(&self, key: &str) -> Result<Option<&'a str>, SerialError> {
        match self.opt(key) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(Some)
                .ok_or_else(|| SerialError::invalid(&self.path(key), "expected a string")),
        }
    }

    /// A boolean field.
    pub fn bool(&self, key: &str) -> Result<bool, SerialError> {
        self.get(key)?
            .as_bool()
            .ok_or_else(|| SerialError::invalid(&self.path(key), "expected true or false"))
    }

    /// A non-negative integer field.
    pub fn usize(&self, key: &str) -> Result<usize, SerialError> {
        usize_of(self.get(key)?, &self.path(key))
    }

    /// A field holding `null` or a non-negative integer (absent counts as `null`).
    pub fn opt_usize(&self, key: &str) -> Result<Option<usize>, SerialError> {
        match self.opt(key) {
            None => Ok(None),
            Some(v) => usize_of(v, &self.path(key)).map(Some),
        }
    }

    /// An array field.
    pub fn array(&self, key: &str) -> Result<&'a [Value], SerialError> {
        array(self.get(key)?, &self.path(key))
    }

    /// An array of non-negative integers.
    pub fn usizes(&self, key: &str) -> Result<Vec<usize>, SerialError> {
        let at = self.path(key);
        self.array(key)?
            .iter()
            .enumerate()
            .map(|(i, v)| usize_of(v, &format!("{at}[{i}]")))
            .collect()
    }

    /// An array of `null`s and non-negative integers.
    pub fn opt_usizes(&self, key: &str) -> Result<Vec<Option<usize>>, SerialError> {
        let at = self.path(key);
        self.array(key)?
            .iter()
            .enumerate()
            .map(|(i, v)| opt_usize_of(v, &format!("{at}[{i}]")))
            .collect()
    }

    /// An array of booleans.
    pub fn bools(&self, key: &str) -> Result<Vec<bool>, SerialError> {
        let at = self.path(key);
        self.array(key)?
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_bool()
                    .ok_or_else(|| SerialError::invalid(&format!("{at}[{i}]"), "expected a bool"))
            })
            .collect()
    }

    /// A nested object field.
    pub fn obj(&self, key: &str) -> Result<Obj<'a>, SerialError> {
        obj(self.get(key)?, &self.path(key))
    }
}
