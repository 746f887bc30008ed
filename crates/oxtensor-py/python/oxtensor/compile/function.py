"""``oxtensor.function``: compile a graph into a callable ``Function``.

Argument normalisation happens here, once; the returned ``Function`` is the Rust object, so
calling it runs no Python code on the fast path.
"""

from __future__ import annotations

from collections.abc import Mapping

from oxtensor import _core
from oxtensor.compile.io import In, Out
from oxtensor.compile.mode import get_mode
from oxtensor.configdefaults import config

__all__ = ["function", "Function"]

Function = _core.Function


def _as_var(value, like=None):
    from oxtensor.tensor.basic import as_tensor_variable, constant

    if isinstance(value, _core.TensorVariable):
        return value
    if like is not None:
        return constant(value, dtype=like.dtype)
    return as_tensor_variable(value)


def _pairs(spec, what):
    if spec is None:
        return []
    if isinstance(spec, Mapping):
        items = list(spec.items())
    else:
        items = list(spec)
    out = []
    for item in items:
        try:
            key, value = item
        except (TypeError, ValueError):
            raise TypeError(f"{what} must be (variable, expression) pairs, got {item!r}") from None
        if not isinstance(key, _core.TensorVariable):
            raise TypeError(f"{what}: {key!r} is not a symbolic variable")
        out.append((key, _as_var(value, like=key)))
    return out


def function(
    inputs,
    outputs=None,
    mode=None,
    updates=None,
    givens=None,
    no_default_updates=False,
    accept_inplace=False,
    name=None,
    rebuild_strict=True,
    allow_input_downcast=None,
    profile=None,
    on_unused_input=None,
    trust_input=False,
):
    """Compiles a function from ``inputs`` to ``outputs``, as ``pytensor.function``.

    - ``inputs``: a list of variables or ``In(var, value=..., name=...)``.
    - ``outputs``: a variable (the function returns an array), a list (it returns a list), or
      ``None`` (it returns ``[]``; useful with ``updates``).
    - ``updates``: ``(shared_variable, new_value)`` pairs, as a list or a dict, applied after
      each successful call (a failing call changes nothing).
    - ``givens``: ``(variable, replacement)`` pairs substituted before compiling.
    - ``mode``: ``None``, ``"FAST_RUN"``, ``"FAST_COMPILE"`` or a ``Mode``.
    - ``on_unused_input``: ``"raise"`` (default), ``"warn"`` or ``"ignore"``.
    - ``trust_input``: skip argument checks on each call (also settable as ``f.trust_input``).
    - ``allow_input_downcast``: accept lossy dtype conversions of arguments.
    - ``profile``: record the time of every call and every node; read it from ``f.profile``
      (``f.profile.summary()`` prints the report).
    """
    if not isinstance(inputs, (list, tuple)):
        raise TypeError(
            "Input variables of an oxtensor function should be contained in a list, "
            "even when there is a single input."
        )
    in_vars, defaults, names = [], [], []
    for i in inputs:
        if isinstance(i, In):
            var, default, nm = i.variable, i.value, i.name
        else:
            var, default, nm = i, None, getattr(i, "name", None)
        if not isinstance(var, _core.TensorVariable):
            raise TypeError(f"function inputs must be symbolic variables, got {var!r}")
        in_vars.append(var)
        defaults.append(default)
        names.append(nm)

    single = False
    if outputs is None:
        out_vars = []
    elif isinstance(outputs, (list, tuple)):
        out_vars = [_as_var(o.variable if isinstance(o, Out) else o) for o in outputs]
    else:
        single = True
        out_vars = [_as_var(outputs.variable if isinstance(outputs, Out) else outputs)]

    update_pairs = _pairs(updates, "updates")
    if not no_default_updates:
        update_pairs += _default_updates(out_vars, update_pairs)
    mode_obj = get_mode(mode)
    fn = _compile_recorded(
        in_vars,
        out_vars,
        single,
        update_pairs,
        _pairs(givens, "givens"),
        mode_obj._spec(),
        name,
        on_unused_input if on_unused_input is not None else config.on_unused_input,
        bool(trust_input),
        allow_input_downcast,
        defaults,
        names,
        bool(profile),
    )
    from oxtensor.tensor.random.variable import _GeneratorFunction, _is_generator_value

    in_gen = [_is_generator_value(v) and not getattr(v, "_is_shared", False) for v in in_vars]
    out_gen = [_is_generator_value(v) for v in out_vars]
    if any(in_gen) or any(out_gen):
        return _GeneratorFunction(fn, in_gen, out_gen, single)
    return fn


def _compile_recorded(inputs, outputs, single, updates, givens, mode_spec, name, on_unused_input,
                      trust_input, allow_input_downcast, defaults, input_names, profile):
    """``_core.compile``, remembering its arguments on the function (what pickling, ``copy``
    and ``oxtensor.save`` rebuild it from); a JAX mode builds a ``JAXFunction`` instead, a
    PyTorch one a ``PyTorchFunction``."""
    recipe = {
        "inputs": list(inputs), "outputs": list(outputs), "single": single,
        "updates": list(updates), "givens": list(givens), "mode": tuple(mode_spec), "name": name,
        "on_unused_input": on_unused_input, "allow_input_downcast": allow_input_downcast,
        "defaults": list(defaults), "input_names": list(input_names), "profile": bool(profile),
    }
    if mode_spec[0] == "JAX":
        from oxtensor.link.jax.function import JAXFunction

        return JAXFunction(recipe, trust_input)
    if mode_spec[0] in ("PYTORCH", "PYTORCH_COMPILED"):
        from oxtensor.link.pytorch.function import PyTorchFunction

        return PyTorchFunction(recipe, trust_input)
    fn = _core.compile(inputs, outputs, single, updates, givens, tuple(mode_spec), name, on_unused_input,
                       trust_input, allow_input_downcast, defaults, input_names, profile)
    fn._set_recipe(recipe)
    return fn


def _default_updates(out_vars, explicit):
    """The ``default_update``s of the shared variables the outputs and updates read (PyTensor's
    rule: an explicit update wins), followed through the graphs they add."""
    targets = {k for k, _ in explicit}
    roots = list(out_vars) + [v for _, v in explicit]
    added = []
    while True:
        new = [(k, v) for k, v in _core.default_updates(roots) if k not in targets]
        if not new:
            return added
        for k, v in new:
            targets.add(k)
            added.append((k, v))
            roots.append(v)


def _find_named_inputs(var, names):
    """Graph inputs reachable from ``var`` whose names are in ``names``."""
    found, seen, stack = {}, set(), [var]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v._kind == "input" and v.name in names:
            found.setdefault(v.name, v)
        stack.extend(v._inputs)
    return found


def _eval(var, inputs_to_values=None):
    """``TensorVariable.eval``: compiles a function of the given inputs and calls it."""
    if inputs_to_values is None:
        inputs_to_values = {}
    if not isinstance(inputs_to_values, Mapping):
        raise TypeError("eval expects a dict mapping input variables to values")
    keys = list(inputs_to_values)
    str_keys = [k for k in keys if isinstance(k, str)]
    lookup = _find_named_inputs(var, set(str_keys)) if str_keys else {}
    ins = []
    for k in keys:
        if isinstance(k, str):
            if k not in lookup:
                raise ValueError(f"eval: no input named {k!r} in the graph of {var!r}")
            ins.append(lookup[k])
        else:
            ins.append(k)
    fn = function(ins, var, on_unused_input="ignore")
    return fn(*[inputs_to_values[k] for k in keys])
