//! Scalar math with NumPy/SciPy semantics.
