"""Names a package exports but loads on first use (PEP 562), so importing it stays light."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, names: Mapping[str, str],
               namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module `__getattr__` that imports `names[name]` (a module relative to `package`)
    the first time `name` is asked for, and keeps the value in `namespace` after that."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        namespace[name] = value
        return value

    return __getattr__
