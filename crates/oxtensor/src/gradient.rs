//! Gradients: re-exports of `oxtensor-grad` plus `verify_grad` (in progress).
