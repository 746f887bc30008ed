"""Other engines a graph runs on (PyTensor's ``pytensor.link``): ``oxtensor.link.jax`` and
``oxtensor.link.pytorch``, translating the graph document with the shared walker
(``document.py``), registry (``registry.py``) and function base (``translated.py``)."""
