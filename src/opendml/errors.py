"""The error classes of opendml.

DirectML answers most mistakes with E_INVALIDARG ("The parameter is incorrect") or by removing the device.
opendml raises one of these instead, with a message that names the operator, the DML field, the value
received and what is allowed.

The classes are opendml's (`opendml.ValidationError`): their `__module__` is "opendml", so tracebacks and reprs show
them as README and user code name them, and pickle (Dask sends a worker's error to the client) finds them there.
"""

from __future__ import annotations


class DmlError(Exception):
    """Base class of every error opendml raises on purpose."""

    __module__ = "opendml"


class ValidationError(DmlError, ValueError):
    """A descriptor breaks a rule of its operator (DML: E_INVALIDARG at CreateOperator)."""

    __module__ = "opendml"


class UnsupportedError(DmlError):
    """A valid request that this feature level or backend does not support.

    When a higher feature level would accept it, the message names the lowest such level.
    """

    __module__ = "opendml"


class BindingError(DmlError, ValueError):
    """A dispatch's bindings break a rule (DML: device removal); nothing was read or written."""

    __module__ = "opendml"
