"""``pytensor.raise_op``: ops that return their value and raise an exception at run time when a
condition fails — ``CheckAndRaise(exc_type, msg)``, ``Assert(msg)`` and ``assert_op``. PyMC
builds every distribution's ``check_parameters`` on ``CheckAndRaise``.

``op(x, *conds)`` returns ``x`` unchanged (a view); a call computing it raises
``exc_type(msg)`` when any condition is false. Conditions are scalars (0-d variables, Python or
NumPy numbers) of any dtype, nonzero meaning true, as PyTensor's ``as_scalar`` accepts them; an
array condition is a ``TypeError`` (reduce it with ``all()`` first). The gradient flows to
``x`` only. Conditions known to hold at compile time are removed by the rewrites, with the
whole check when none is left.

The graph (the Rust core's ``Op::CheckAndRaise``) records the exception's kind as text: a
builtin exception's name, or a key this module registers for a user's class (its module and
qualified name). :func:`_exception` maps the kind back to the class when a call fails, so a
subclass such as PyMC's ``ParameterValueError`` is raised as itself; ``str(exc)`` is the message,
and a note names the node and where it was built. A graph loaded in another process resolves a
user's class by importing its module (``ValueError`` when that fails).
"""

from __future__ import annotations

import builtins
import importlib

from oxtensor import _core

__all__ = ["Assert", "CheckAndRaise", "ExceptionType", "assert_op", "exception_type"]

# The exception classes by kind, and each class's kind (user classes; builtins go by name).
_CLASSES: dict[str, type] = {}
_KINDS: dict[type, str] = {}


def _kind_of(exc_type: type) -> str:
    """The kind naming ``exc_type`` in graphs: a builtin's name, or ``module.QualName`` for any
    other class (``#n`` appended when another class already has that name)."""
    name = exc_type.__name__
    if exc_type.__module__ == "builtins" and getattr(builtins, name, None) is exc_type:
        return name
    kind = _KINDS.get(exc_type)
    if kind is not None:
        return kind
    base = f"{exc_type.__module__}.{exc_type.__qualname__}"
    kind, n = base, 1
    while kind in _CLASSES:
        n += 1
        kind = f"{base}#{n}"
    _CLASSES[kind] = exc_type
    _KINDS[exc_type] = kind
    return kind


def _class_of(kind: str) -> type | None:
    """The exception class ``kind`` names: registered here, a builtin, or importable."""
    if kind in _CLASSES:
        return _CLASSES[kind]
    builtin = getattr(builtins, kind, None)
    if isinstance(builtin, type) and issubclass(builtin, BaseException):
        return builtin
    path = kind.split("#", 1)[0]
    module, _, qualname = path.rpartition(".")
    while module:
        try:
            obj = importlib.import_module(module)
        except ImportError:
            module, _, head = module.rpartition(".")
            qualname = f"{head}.{qualname}"
            continue
        for part in qualname.split("."):
            obj = getattr(obj, part, None)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            return obj
        return None
    return None


def _exception(kind: str, msg: str, note: str) -> BaseException:
    """The exception a failed check of ``kind`` raises (called by the Rust core): the class
    built with the message alone, as PyTensor raises it, and ``note`` (the node and where it
    was built) attached as a note."""
    cls = _class_of(kind)
    try:
        exc = cls(msg) if cls is not None else ValueError(f"{kind}: {msg}")
    except Exception:  # a class whose constructor does not take one message
        exc = ValueError(f"{kind}: {msg}")
    exc.add_note(note)
    return exc


class ExceptionType:
    """PyTensor's type of an exception-class parameter; all instances are equal. Kept for code
    that names it; oxtensor's ops hold the exception's kind directly."""

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))


exception_type = ExceptionType()


def _short(msg: str) -> str:
    """The message as PyTensor prints it: at most 30 characters."""
    return msg[:27] + "..." if len(msg) > 30 else msg


class CheckAndRaise:
    """An op that returns its value and raises ``exc_type(msg)`` when a condition is false.

    ``CheckAndRaise(exc_type, msg="")(x, *conds)``: ``exc_type`` must be an ``Exception``
    subclass (a ``ValueError`` for another class, a ``TypeError`` for a non-class, as in
    PyTensor); each condition a scalar.
    """

    __props__ = ("msg", "exc_type")
    view_map = {0: [0]}

    def __init__(self, exc_type, msg=""):
        # As PyTensor: a class that is no Exception is a ValueError, anything else a TypeError.
        if not issubclass(exc_type, Exception):
            raise ValueError("`exc_type` must be an Exception subclass")
        self.exc_type = exc_type
        self.msg = msg

    def __eq__(self, other):
        return type(self) is type(other) and (self.msg, self.exc_type) == (other.msg, other.exc_type)

    def __hash__(self):
        return hash((type(self), self.msg, self.exc_type))

    def __str__(self):
        return f"{type(self).__name__}{{raises={self.exc_type.__name__}, msg='{_short(self.msg)}'}}"

    __repr__ = __str__

    def __call__(self, value, *conds):
        """``value``, checked by ``conds`` when the function runs."""
        # Imported here, not at the top: this module must not import ``oxtensor.tensor``
        # while that package is being imported.
        from oxtensor.tensor.basic import as_tensor_variable

        x = as_tensor_variable(value)
        cs = [as_tensor_variable(c) for c in conds]
        return _core.check_and_raise(x, cs, _kind_of(self.exc_type), str(self.msg))

    def make_node(self, value, *conds):
        """PyTensor's ``make_node``: the node (``owner``) of ``self(value, *conds)``."""
        return self(value, *conds).owner


class Assert(CheckAndRaise):
    """Assertion in a graph: returns its value, raises ``AssertionError(msg)`` when a condition
    is false. Like PyTensor's, it can be removed by the rewrites when its conditions are known
    to hold, and it only runs when its output is used.

    >>> import oxtensor as pytensor
    >>> import oxtensor.tensor as pt
    >>> x = pt.vector("x")
    >>> f = pytensor.function([x], Assert("x is too long")(x, x.size < 2))
    """

    def __init__(self, msg="PyTensor Assert failed!"):
        super().__init__(AssertionError, msg)

    def __str__(self):
        return f"Assert{{msg='{_short(self.msg)}'}}"

    __repr__ = __str__


assert_op = Assert()
