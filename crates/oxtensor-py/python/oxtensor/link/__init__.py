"""Other engines a graph runs on (PyTensor's ``pytensor.link``): ``oxtensor.link.jax``."""
