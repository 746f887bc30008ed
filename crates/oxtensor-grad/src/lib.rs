//! Automatic differentiation (in progress).
