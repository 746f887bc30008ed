"""A serialized graph (``docs/serialization.md``) turned into one Python function of an
engine's calls; shared by every engine (``oxtensor.link.jax``, ``oxtensor.link.pytorch``),
which differ only in their translators and in how they hold constants.

The document's node table is read as it is: a graph (outer, or the body of a Composite, an
IfElse branch, a Scan step, an OpFromGraph) is the set of nodes its outputs reach through node
inputs, run in table order (the table is in dependency order). Each apply node is translated
once, by the engine's registry, into a callable of the input values returning the tuple of
output values; an op without a translation raises ``NotImplementedError`` naming it while the
function is built, not when it runs.
"""

from __future__ import annotations

import base64
import json

import numpy as np


def array_of(doc):
    """A constant or shared value of the document as a NumPy array."""
    dt = np.dtype(doc["dtype"]).newbyteorder("<")
    data = base64.b64decode(doc["data"])
    return np.frombuffer(data, dtype=dt).reshape(doc["shape"]).astype(np.dtype(doc["dtype"]))


class Document:
    """A parsed document: its node table, with translations cached per node.

    ``translate(node, document)`` is the engine's translator of one apply node;
    ``constant(array)`` turns a constant's NumPy value into the engine's value (NumPy arrays
    themselves by default)."""

    def __init__(self, doc, translate, constant=None):
        self.doc = doc
        self.nodes = doc["nodes"]
        self._translate = translate
        self._constant = constant or (lambda a: a)
        self._translated = {}

    def reachable(self, refs):
        """Node indices reachable from ``refs`` through node inputs, in table order."""
        seen, stack = set(), [r[0] for r in refs]
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            node = self.nodes[n]
            if node["kind"] == "apply":
                stack.extend(r[0] for r in node["inputs"])
        return sorted(seen)

    def dtype_of(self, ref):
        """The NumPy dtype of the value ``ref`` (``[node, output]``) stands for."""
        node = self.nodes[ref[0]]
        if node["kind"] == "apply":
            return np.dtype(node["types"][ref[1]]["dtype"])
        if node["kind"] in ("constant", "shared"):
            return np.dtype(node["value"]["dtype"])
        return np.dtype(node["type"]["dtype"])

    def translated(self, n):
        if n not in self._translated:
            self._translated[n] = self._translate(self.nodes[n], self)
        return self._translated[n]

    def program(self, out_refs, bound):
        """A function of the values of the ``bound`` leaves (node index -> argument position)
        computing ``out_refs``; constants are embedded, any other leaf is an error."""
        order = self.reachable(out_refs)
        steps = []
        for n in order:
            node = self.nodes[n]
            kind = node["kind"]
            if n in bound:
                steps.append((n, "arg", bound[n]))
            elif kind == "constant":
                steps.append((n, "const", self._constant(array_of(node["value"]))))
            elif kind == "apply":
                steps.append((n, "apply", (self.translated(n), [tuple(r) for r in node["inputs"]])))
            else:
                raise ValueError(f"the graph reads node {n} ({kind}) without a value for it")
        outs = [tuple(r) for r in out_refs]

        def run(*args):
            env = {}
            for n, what, data in steps:
                if what == "arg":
                    env[n] = (args[data],)
                elif what == "const":
                    env[n] = (data,)
                else:
                    fn, refs = data
                    env[n] = fn(*[env[i][o] for i, o in refs])
            return tuple(env[i][o] for i, o in outs)

        return run

    def frozen(self, graph):
        """The function of an inner graph (``{"inputs", "outputs"}``): its positional
        arguments are the placeholders' values."""
        outs = graph["outputs"]
        bound = {
            n: self.nodes[n]["index"]
            for n in self.reachable(outs)
            if self.nodes[n]["kind"] == "placeholder"
        }
        return self.program(outs, bound)


class Translation:
    """A function's document translated by one engine: ``run(*inputs, *shared_values)``
    returns the outputs, then the new values of the updated shared variables."""

    def __init__(self, text, shared, translate, constant=None):
        doc = json.loads(text)
        self.document = Document(doc, translate, constant)
        nodes = doc["nodes"]
        self.input_nodes = [r[0] for r in doc["inputs"]]
        shared_nodes = [i for i, n in enumerate(nodes) if n["kind"] == "shared"]
        if len(shared_nodes) != len(shared):
            raise RuntimeError("internal error: the shared variables do not match the document")
        self.shared = list(shared)
        bound = {n: k for k, n in enumerate(self.input_nodes)}
        position = {n: len(self.input_nodes) + k for k, n in enumerate(shared_nodes)}
        bound.update(position)
        self.n_outputs = len(doc["outputs"])
        self.update_targets = [self.shared[position[t[0]] - len(self.input_nodes)] for t, _ in doc["updates"]]
        refs = doc["outputs"] + [v for _, v in doc["updates"]]
        self.run = self.document.program(refs, bound)
        #: The dtypes of what ``run`` returns.
        self.result_dtypes = [self.document.dtype_of(r) for r in refs]
        self.input_types = [nodes[n]["type"] for n in self.input_nodes]

    def shared_values(self):
        """The shared variables' values as arrays: a generator's as its six PCG64 state words
        (the graph's generator values)."""
        return [_words(s) if _is_generator(s) else np.asarray(s.get_value(borrow=True)) for s in self.shared]

    def store_updates(self, values):
        """Writes the update values into their shared variables; a generator's words become a
        NumPy ``Generator`` in that state."""
        from oxtensor.tensor.random.variable import _generator_from_words

        for target, value in zip(self.update_targets, values):
            if _is_generator(target):
                target.set_value(_generator_from_words(np.asarray(value)), borrow=True)
            else:
                target.set_value(value, borrow=True)


def _is_generator(shared):
    from oxtensor.tensor.random.variable import RandomGeneratorSharedVariable

    return isinstance(shared, RandomGeneratorSharedVariable)


def _words(shared):
    from oxtensor.tensor.random.variable import _words_from_generator

    return np.asarray(_words_from_generator(shared.get_value(borrow=True)), dtype=np.uint64)
