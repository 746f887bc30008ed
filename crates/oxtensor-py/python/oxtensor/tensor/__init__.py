"""``oxtensor.tensor`` — import it as ``pt``, as ``pytensor.tensor``.

Constructors (``scalar``, ``vector``, ``matrix``, ``tensor3``, ``tensor4``, ``tensor`` and
the dtype-prefixed ``dscalar``, ``fvector``, ``imatrix``, ``lscalar``, …), ``constant`` and
``as_tensor_variable``, elementwise functions under PyTensor's names, reductions, shape and
layout functions, products, and ``set_subtensor``/``inc_subtensor``.
"""

from oxtensor.tensor.basic import *  # noqa: F401,F403
from oxtensor.tensor.basic import __all__ as _basic_all
from oxtensor.tensor.math import *  # noqa: F401,F403
from oxtensor.tensor.math import __all__ as _math_all
from oxtensor.tensor.subtensor import *  # noqa: F401,F403
from oxtensor.tensor.subtensor import __all__ as _subtensor_all
from oxtensor.tensor._matrix import *  # noqa: F401,F403
from oxtensor.tensor._matrix import __all__ as _matrix_all
from oxtensor.tensor import linalg, nlinalg, slinalg, special  # noqa: F401
from oxtensor.tensor.special import log_softmax, softmax  # noqa: F401
from oxtensor.tensor.type import TensorType
from oxtensor.tensor.variable import TensorConstant, TensorVariable, Variable
from oxtensor.tensor.sharedvar import TensorSharedVariable
from oxtensor.gradient import grad, hessian, jacobian
from oxtensor.tensor import random
from oxtensor.tensor import extra_ops, shape as _shape_module, sort as _sort_module  # noqa: F401
from oxtensor.tensor.extra_ops import *  # noqa: F401,F403
from oxtensor.tensor.extra_ops import __all__ as _extra_ops_all
from oxtensor.tensor.sort import argsort, sort
from oxtensor.tensor.shape import shape_i, shape_tuple, specify_broadcastable
from oxtensor.tensor.basic import shape  # the function again: importing the module rebound it

__all__ = (
    list(_basic_all)
    + list(_math_all)
    + list(_subtensor_all)
    + list(_matrix_all)
    + ["linalg", "nlinalg", "slinalg", "special", "softmax", "log_softmax"]
    + ["TensorType", "TensorVariable", "TensorConstant", "TensorSharedVariable", "Variable"]
    + ["grad", "jacobian", "hessian"]
    + list(_extra_ops_all)
    + ["argsort", "sort", "shape_i", "shape_tuple", "specify_broadcastable", "extra_ops"]
)
