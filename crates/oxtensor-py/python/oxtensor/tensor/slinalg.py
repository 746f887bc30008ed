"""``oxtensor.tensor.slinalg`` — PyTensor's older import path for the SciPy-style functions
of :mod:`oxtensor.tensor.linalg`."""

from oxtensor.tensor.linalg import (  # noqa: F401
    cho_solve,
    cholesky,
    eigvalsh,
    expm,
    lu,
    lu_factor,
    lu_solve,
    qr,
    solve,
    solve_continuous_lyapunov,
    solve_discrete_lyapunov,
    solve_sylvester,
    solve_triangular,
)
