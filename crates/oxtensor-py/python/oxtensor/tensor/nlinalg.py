"""``oxtensor.tensor.nlinalg`` — PyTensor's older import path for the NumPy-style functions
of :mod:`oxtensor.tensor.linalg`."""

from oxtensor.tensor.linalg import (  # noqa: F401
    det,
    eig,
    eigh,
    inv,
    kron,
    matrix_dot,
    matrix_inverse,
    matrix_power,
    norm,
    pinv,
    slogdet,
    svd,
    tensorinv,
    tensorsolve,
    trace,
)
