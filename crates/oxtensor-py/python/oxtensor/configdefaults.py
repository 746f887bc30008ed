"""Configuration: ``oxtensor.config``, as PyTensor's ``pytensor.config``.

Flags are read from the ``OXTENSOR_FLAGS`` environment variable at import
(``OXTENSOR_FLAGS="floatX=float32,mode=FAST_COMPILE"``), may be set as attributes
(``oxtensor.config.floatX = "float32"``), and changed temporarily with
``config.change_flags(floatX="float32")`` (a context manager and a decorator).
"""

from __future__ import annotations

import functools
import os
import warnings

__all__ = ["config", "Config"]

_CHOICES = {
    "floatX": ("float64", "float32"),
    "mode": ("FAST_RUN", "FAST_COMPILE"),
    "on_unused_input": ("raise", "warn", "ignore"),
    "cast_policy": ("custom",),
    "device": ("cpu",),
}

_DEFAULTS = {
    "floatX": "float64",
    "mode": "FAST_RUN",
    "on_unused_input": "raise",
    "cast_policy": "custom",
    "device": "cpu",
    "compute_test_value": "off",
    "allow_gc": True,
    "warn_float64": "ignore",
    "print_global_stats": False,
}


class _ChangeFlags:
    """Sets flags on entry and restores them on exit; also usable as a decorator."""

    def __init__(self, config: Config, flags: dict):
        self._config = config
        self._flags = flags
        self._saved: list[dict] = []

    def __enter__(self):
        self._saved.append({k: getattr(self._config, k) for k in self._flags})
        for k, v in self._flags.items():
            setattr(self._config, k, v)
        return self

    def __exit__(self, *exc):
        for k, v in self._saved.pop().items():
            setattr(self._config, k, v)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with _ChangeFlags(self._config, self._flags):
                return func(*args, **kwargs)

        return wrapper


class Config:
    """The configuration flags (``floatX``, ``mode``, ``on_unused_input``, …)."""

    def __init__(self, env: str | None = None):
        object.__setattr__(self, "_values", dict(_DEFAULTS))
        for item in (env or "").split(","):
            item = item.strip()
            if not item:
                continue
            key, sep, value = item.partition("=")
            if not sep:
                warnings.warn(f"OXTENSOR_FLAGS: ignoring {item!r} (expected key=value)")
                continue
            key, value = key.strip(), value.strip()
            if key not in _DEFAULTS:
                warnings.warn(f"OXTENSOR_FLAGS: unknown flag {key!r}")
            if isinstance(_DEFAULTS.get(key), bool):
                value = value.lower() in ("1", "true", "yes", "on")
            setattr(self, key, value)

    def __getattr__(self, key):
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(f"oxtensor.config has no flag {key!r}") from None

    def __setattr__(self, key, value):
        choices = _CHOICES.get(key)
        if choices is not None and value not in choices:
            raise ValueError(
                f"invalid value {value!r} for config.{key}; expected one of {choices}"
            )
        self._values[key] = value

    def change_flags(self, **flags) -> _ChangeFlags:
        """Temporarily sets flags: ``with config.change_flags(floatX="float32"): ...``."""
        for k in flags:
            if k not in self._values:
                raise AttributeError(f"oxtensor.config has no flag {k!r}")
        return _ChangeFlags(self, flags)

    def __dir__(self):
        return sorted(set(self._values) | {"change_flags"})

    def __repr__(self):
        items = ", ".join(f"{k}={v!r}" for k, v in sorted(self._values.items()))
        return f"Config({items})"


config = Config(os.environ.get("OXTENSOR_FLAGS"))
