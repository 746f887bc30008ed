use crate::KernelError;
use oxtensor_data::{DType, Tensor};

/// `np.matmul(a, b)` computed in `dtype`.
pub fn matmul(a: &Tensor, b: &Tensor, dtype: DType) -> Result<Tensor, KernelError> {
    let _ = (a, b, dtype);
    Err(KernelError::Value("matmul: not yet implemented".into()))
}
