"""Pickling, copies and files of compiled functions and symbolic variables.

Everything goes through one format: the versioned JSON document of ``oxtensor-serial``
(``docs/serialization.md``), which describes a graph, its constants, the values of its shared
variables and the states of its random generators, and which loads without running any code.

- ``pickle.dumps(f)`` stores the document of the graph ``f`` was built from, with how
  ``oxtensor.function`` was called (mode, names, defaults, ...); ``pickle.loads`` compiles it
  again (the generated C comes from the on-disk cache when it is there).
- ``pickle.dumps(x)`` of a variable stores its graph; loading gives fresh variables (but for
  shared variables pickled with it, see below).
- ``copy.copy(f)`` / ``f.copy(share_memory=True)`` compile the same graph again with the same
  shared variables; ``copy.deepcopy(f)`` / ``f.copy()`` with copies of them; ``swap`` replaces
  shared variables.
- ``save(f, path)`` / ``load(path)`` write and read the document itself, for files that may
  come from untrusted places (``pickle`` must never load those).

Shared variables keep their identity within one pickle, as in PyTensor: a function, the
shared variables it reads and other functions reading them, pickled together (``pickle.dumps((f,
w))``), load as a function that reads and updates the loaded ``w`` itself. Each shared
variable is pickled through one ``_SharedRef`` per live variable, which pickle's memo writes
once (the Python wrappers of one variable are distinct objects, so the memo alone would not
see them as one); a function's pickle lists the refs of the shared variables it reads, and
loading compiles its graph with the loaded variables in place of the document's copies.
Expressions do the same (``pickle.dumps((y, w))`` with ``y`` reading ``w``): loading rebuilds
the expression on the loaded ``w`` (``clone_replace``).
Objects pickled separately load with separate copies.
"""

from __future__ import annotations

import base64
import json
import os
import weakref

import numpy as np

from oxtensor import _core

__all__ = ["save", "load", "SerializationError", "copy_function"]

_DTYPES = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64",
}


class SerializationError(ValueError):
    """A file or pickle that is not a valid oxtensor document (corrupt, truncated, written by a
    newer oxtensor, or describing an invalid graph)."""


def _array_json(value):
    a = np.array(value, order="C")  # (ascontiguousarray would make a 0-d value 1-d)
    le = a.astype(a.dtype.newbyteorder("<"), copy=False)
    return {"dtype": a.dtype.name, "shape": list(a.shape), "data": base64.b64encode(le.tobytes()).decode()}


def _array_from(doc, where):
    try:
        dtype = doc["dtype"]
        shape = tuple(int(d) for d in doc["shape"])
        data = base64.b64decode(doc["data"], validate=True)
    except (KeyError, TypeError, ValueError) as e:
        raise SerializationError(f"invalid array at {where}: {e}") from None
    if dtype not in _DTYPES or any(d < 0 for d in shape):
        raise SerializationError(f"invalid array at {where}: dtype {dtype!r}, shape {shape}")
    dt = np.dtype(dtype).newbyteorder("<")
    if len(data) != dt.itemsize * int(np.prod(shape, dtype=np.int64)):
        raise SerializationError(f"invalid array at {where}: {len(data)} bytes for shape {shape}")
    return np.frombuffer(data, dtype=dt).reshape(shape).astype(np.dtype(dtype))


def _decode(text):
    try:
        return _core.deserialize(text)
    except ValueError as e:
        raise SerializationError(str(e)) from None


# --- variables ---------------------------------------------------------------------------


def _variable_from_document(text):
    _, outputs, _, _, _ = _decode(text)
    return outputs[0]


class _SharedRef:
    """A shared variable as pickle sees it: one object per live shared variable (while a
    pickling holds it), so that every object of one pickle reading the variable refers to
    the same ``_SharedRef``, which pickle writes once and loads as one fresh variable."""

    __slots__ = ("var", "__weakref__")

    def __init__(self, var):
        self.var = var

    def __reduce__(self):
        return (_variable_from_document, (_core.serialize([], [self.var], meta=json.dumps({"kind": "variable"})),))


_REFS = weakref.WeakValueDictionary()


def _ref(var):
    """The ``_SharedRef`` of a shared variable (the same one for every wrapper of it)."""
    ref = _REFS.get(var)
    if ref is None:
        ref = _SharedRef(var)
        _REFS[var] = ref
    return ref


def _loaded(var):
    """A loaded shared variable as it is (what a pickled ``_SharedRef`` loads as)."""
    return var


def _reduce_variable(var):
    if var._kind == "shared":
        return (_loaded, (_ref(var),))
    document = _core.serialize([], [var], meta=json.dumps({"kind": "variable"}))
    shared = _shared_read([var])
    if not shared:
        return (_variable_from_document, (document,))
    return (_variable_with_shared, (document, [_ref(s) for s in shared]))


def _variable_with_shared(text, shared):
    """A pickled expression loaded with ``shared`` (the loaded variables of its pickle, in the
    order ``_shared_read`` finds them) in place of the document's own copies."""
    from oxtensor.graph import clone_replace

    loaded = _variable_from_document(text)
    found = _shared_read([loaded])
    if len(found) != len(shared):
        raise SerializationError(
            f"the pickle lists {len(shared)} shared variables, its graph reads {len(found)}"
        )
    return clone_replace(loaded, list(zip(found, shared)))


# --- functions ---------------------------------------------------------------------------


def _recipe(fn):
    recipe = fn._recipe
    if recipe is None:
        raise TypeError(f"{fn!r} was not built by oxtensor.function and cannot be serialized")
    return recipe


def function_document(fn) -> str:
    """The no-code document of a compiled function: its graph (before rewriting, so any
    oxtensor compiles it) and the arguments ``oxtensor.function`` was given."""
    r = _recipe(fn)
    meta = {
        "kind": "function",
        "single": r["single"],
        "mode": list(r["mode"]),
        "name": r["name"],
        "on_unused_input": r["on_unused_input"],
        "trust_input": bool(fn.trust_input),
        "allow_input_downcast": r["allow_input_downcast"],
        "defaults": [None if d is None else _array_json(d) for d in r["defaults"]],
        "input_names": r["input_names"],
        "profile": r["profile"],
    }
    return _core.serialize(r["inputs"], r["outputs"], r["updates"], r["givens"], json.dumps(meta))


def _compile(inputs, outputs, updates, givens, meta):
    from oxtensor.compile.function import _compile_recorded

    return _compile_recorded(
        inputs,
        outputs,
        meta["single"],
        updates,
        givens,
        tuple(meta["mode"]),
        meta["name"],
        meta["on_unused_input"],
        meta["trust_input"],
        meta["allow_input_downcast"],
        meta["defaults"],
        meta["input_names"],
        meta["profile"],
    )


def _check_meta(meta, where):
    fields = {
        "single": bool, "mode": list, "on_unused_input": str, "trust_input": bool,
        "defaults": list, "input_names": list, "profile": bool,
    }
    if not isinstance(meta, dict) or meta.get("kind") != "function":
        raise SerializationError(f"{where}: the document does not describe a function")
    for key, kind in fields.items():
        if not isinstance(meta.get(key), kind):
            raise SerializationError(f"{where}: field meta.{key} is missing or not a {kind.__name__}")
    mode = meta["mode"]
    if len(mode) != 6 or not all(m is None or isinstance(m, str) for m in mode[:3]) or not all(
        isinstance(tags, list) and all(isinstance(t, str) for t in tags) for tags in mode[3:]
    ):
        raise SerializationError(f"{where}: meta.mode is not a mode")


def function_from_document(text, where="the document"):
    """Compiles the function a document describes (see :func:`function_document`)."""
    inputs, outputs, updates, givens, meta = _decode(text)
    return _compile(inputs, outputs, updates, givens, _function_meta(meta, len(inputs), where))


def _function_meta(text, n_inputs, where):
    """The checked ``meta`` of a function's document, its default values as arrays."""
    meta = json.loads(text)
    _check_meta(meta, where)
    if len(meta["defaults"]) != n_inputs or len(meta["input_names"]) != n_inputs:
        raise SerializationError(f"{where}: meta.defaults and meta.input_names need one entry per input")
    meta["defaults"] = [
        None if d is None else _array_from(d, f"meta.defaults[{i}]") for i, d in enumerate(meta["defaults"])
    ]
    return meta


def _graph_roots(outputs, updates, givens):
    """What a function's graph is read from, in a fixed order (its shared variables are
    found in the same order in the original and in a loaded copy)."""
    return list(outputs) + [x for pair in updates for x in pair] + [g for _, g in givens]


def _reduce_function(fn):
    r = _recipe(fn)
    shared = _shared_read(_graph_roots(r["outputs"], r["updates"], r["givens"]))
    return (_function_with_shared, (function_document(fn), [_ref(s) for s in shared]))


def _function_with_shared(text, shared):
    """A pickled function loaded with ``shared`` (the loaded variables of its pickle, in the
    order ``_graph_roots`` reads them) in place of the document's own copies."""
    inputs, outputs, updates, givens, meta = _decode(text)
    found = _shared_read(_graph_roots(outputs, updates, givens))
    if len(found) != len(shared):
        raise SerializationError(
            f"the pickle lists {len(shared)} shared variables, its graph reads {len(found)}"
        )
    mapping = dict(zip(found, shared))
    meta = _function_meta(meta, len(inputs), "the pickle")
    updates = [(mapping.get(k, k), v) for k, v in updates]
    return _compile(inputs, outputs, updates, list(givens) + list(mapping.items()), meta)


def _shared_read(roots):
    """The shared variables the graphs of ``roots`` read, each once, in a stable order."""
    found, seen, stack = [], set(), list(reversed(roots))
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v._kind == "shared":
            found.append(v)
        stack.extend(reversed(v._inputs))
    return found


def copy_function(fn, share_memory=False, swap=None, delete_updates=False, name=None, profile=None):
    """PyTensor's ``Function.copy``: the same graph compiled again. With ``share_memory`` the
    copy reads and updates the same shared variables; without, copies of them (values and
    generator states as they are now). ``swap`` maps shared variables to the ones the copy uses
    instead (same type); ``delete_updates`` drops the updates."""
    r = _recipe(fn)
    mapping = dict(swap or {})
    for old, new in mapping.items():
        if old._kind != "shared" or new._kind != "shared":
            raise TypeError("swap must map shared variables to shared variables")
        if old.type != new.type:
            raise TypeError(f"swap: {old!r} and {new!r} have different types")
    updates = [] if delete_updates else r["updates"]
    if not share_memory:
        roots = list(r["outputs"]) + [x for pair in updates for x in pair] + [g for _, g in r["givens"]]
        for s in _shared_read(roots):
            if s not in mapping:
                mapping[s] = _variable_from_document(_core.serialize([], [s]))
    meta = {
        "single": r["single"],
        "mode": r["mode"],
        "name": r["name"] if name is None else name,
        "on_unused_input": r["on_unused_input"],
        "trust_input": bool(fn.trust_input),
        "allow_input_downcast": r["allow_input_downcast"],
        "defaults": r["defaults"],
        "input_names": r["input_names"],
        "profile": r["profile"] if profile is None else bool(profile),
    }
    new_updates = [(mapping.get(k, k), v) for k, v in updates]
    givens = list(r["givens"]) + list(mapping.items())
    return _compile(r["inputs"], r["outputs"], new_updates, givens, meta)


# --- files -------------------------------------------------------------------------------


def save(obj, path):
    """Writes a compiled function, a variable or a list of variables to ``path`` in the no-code
    format (JSON; see ``docs/serialization.md``). Load it with :func:`load`."""
    if isinstance(obj, _core.Function) or hasattr(obj, "_recipe"):
        text = function_document(obj)
    elif isinstance(obj, _core.TensorVariable):
        text = _core.serialize([], [obj], meta=json.dumps({"kind": "variable"}))
    elif isinstance(obj, (list, tuple)) and all(isinstance(v, _core.TensorVariable) for v in obj):
        text = _core.serialize([], list(obj), meta=json.dumps({"kind": "variables"}))
    else:
        raise TypeError(f"save takes a compiled Function or symbolic variables, got {type(obj).__name__}")
    tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def load(path):
    """Reads what :func:`save` wrote: a compiled function (compiled again here), a variable or a
    list of variables. Runs no code from the file; a corrupt file, or one written by a newer
    oxtensor, raises :class:`SerializationError` naming the problem."""
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8")
    except UnicodeDecodeError:
        raise SerializationError(f"{path}: not an oxtensor graph file (not UTF-8 text)") from None
    _, outputs, _, _, meta = _decode(text)
    meta = json.loads(meta)
    kind = meta.get("kind") if isinstance(meta, dict) else None
    if kind == "function":
        return function_from_document(text, where=str(path))
    if kind == "variable" and len(outputs) == 1:
        return outputs[0]
    if kind == "variables":
        return list(outputs)
    raise SerializationError(f"{path}: unknown document kind {kind!r}")
