use crate::Error;
use oxtensor_data::Tensor;
use oxtensor_graph::Var;
use std::sync::PoisonError;

/// A shared variable: a graph leaf whose value persists across calls and may be updated by
/// functions (`updates=`) or by [`set_value`].
#[track_caller]
pub fn shared(value: Tensor, name: Option<&str>) -> Var {
    Var::shared(value, name)
}

/// The current value of a shared variable (a cheap view; the value is never mutated in place).
pub fn get_value(v: &Var) -> Result<Tensor, Error> {
    let cell = v
        .shared_value()
        .ok_or_else(|| Error::Update(format!("{} is not a shared variable", v.describe())))?;
    Ok(cell.read().unwrap_or_else(PoisonError::into_inner).clone())
}

/// Replaces the value of a shared variable; the dtype must match and the rank must agree.
pub fn set_value(v: &Var, value: Tensor) -> Result<(), Error> {
    check_value(v, &value)?;
    let cell = v
        .shared_value()
        .ok_or_else(|| Error::Update(format!("{} is not a shared variable", v.describe())))?;
    *cell.write().unwrap_or_else(PoisonError::into_inner) = value;
    Ok(())
}

/// Checks that `value` fits shared variable `v`'s type.
pub(crate) fn check_value(v: &Var, value: &Tensor) -> Result<(), Error> {
    if !v.ty().accepts(value.dtype(), value.shape()) {
        return Err(Error::Update(format!(
            "cannot store a value of dtype {} and shape {:?} in {}",
            value.dtype(),
            value.shape(),
            v.describe()
        )));
    }
    Ok(())
}
