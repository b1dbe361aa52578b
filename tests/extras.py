"""Optional integrations in tests: skipped where the library is not installed,
except in CI (``CI`` set), where a missing library is a failure."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` (from the ``hsc[extra]`` install) or skip the test module."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        if os.environ.get("CI"):
            raise ImportError(
                f"{module} is missing in CI; install it with `make extras` ({error})"
            ) from error
        pytest.skip(
            f"{module} not installed (pip install 'hsc[{extra}]' or make extras)", allow_module_level=True
        )
