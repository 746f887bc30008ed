//! Scalar ops by name. The format stores an `Elemwise` op as `ScalarOp::name()` (plus the
//! target dtype of a `Cast`), so the file does not depend on the enum's layout.

use crate::SerialError;
use oxtensor_data::DType;
use oxtensor_graph::ScalarOp;

/// The scalar op called `name` (`cast` gives the dtype of a `Cast`).
pub fn from_name(name: &str, cast: Option<DType>, at: &str) -> Result<ScalarOp, SerialError> {
    if let Some(d) = cast {
        return if name == ScalarOp::Cast(d).name() {
            Ok(ScalarOp::Cast(d))
        } else {
            Err(SerialError::invalid(
                at,
                format!("only Cast takes a dtype, not {name:?}"),
            ))
        };
    }
    ScalarOp::all_but_cast()
        .find(|s| s.name() == name)
        .ok_or_else(|| SerialError::invalid(at, format!("unknown scalar op {name:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_distinct_and_found() {
        for s in ScalarOp::all_but_cast() {
            assert_eq!(from_name(s.name(), None, "t").ok(), Some(s));
        }
        assert_eq!(
            from_name("Cast", Some(DType::F32), "t").ok(),
            Some(ScalarOp::Cast(DType::F32))
        );
        assert!(from_name("Cast", None, "t").is_err());
        assert!(from_name("Frobnicate", None, "t").is_err());
    }
}
