"""Public names a package imports on first use (PEP 562), so that importing a package
costs only what its caller uses.

The entity worker process (`python -P -m sift.entities._worker`) imports `sift`,
`sift.entities` and `sift.text` on its way to the extraction; with eager `__init__`s it
would load pydantic and the stemmer (0.15 s of its 0.2 s start, on a core the writer
also wants), and `sift` on the command line would pay for every type before parsing its
arguments. A package lists where each public name lives; type checkers and IDEs read the
same names from its `if TYPE_CHECKING:` imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_names(
    package: str, origins: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """A package's `__getattr__` and `__dir__`: each name of `origins[module]` is read
    from that module when first asked for, and then kept in the package's namespace."""
    namespace = sys.modules[package].__dict__
    where = {name: module for module, names in origins.items() for name in names}

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
