"""Where sift keeps its files on this machine: `SIFT_HOME` and `SIFT_STORE` are read here
and nowhere else.

- `sift_home()`: `$SIFT_HOME`, else `~/.sift`;
- `default_store_path()`: `$SIFT_STORE`, else `<home>/store` (the store the CLI and
  `sift.open_store()` use when given no location);
- `demo_store_path()`, `eval_cache_path()`, `collections_path()`: the folders of
  `sift demo`, `sift eval`'s indexed corpora and `sift serve`'s collections, under home.

Each call reads the environment afresh, so a process (or a test) that changes it is
followed. An empty variable counts as unset.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = [
    "SiftPaths",
    "collections_path",
    "default_store_path",
    "demo_store_path",
    "eval_cache_path",
    "sift_home",
]


class SiftPaths(BaseSettings):
    """The two locations sift reads from the environment (`SIFT_HOME`, `SIFT_STORE`)."""

    model_config = SettingsConfigDict(
        env_prefix="SIFT_", env_ignore_empty=True, extra="ignore", frozen=True
    )

    home: Path = Field(Path("~/.sift"), description="Folder of sift's own files.")
    store: Path | None = Field(
        None, description="The default store; None: the folder `store` under home."
    )


def sift_home() -> Path:
    """`$SIFT_HOME`, else `~/.sift` (user-expanded)."""
    return SiftPaths().home.expanduser()


def default_store_path() -> Path:
    """`$SIFT_STORE`, else `$SIFT_HOME/store`, else `~/.sift/store`."""
    paths = SiftPaths()
    if paths.store is not None:
        return paths.store.expanduser()
    return paths.home.expanduser() / "store"


def demo_store_path() -> Path:
    """The store `sift demo` indexes its shipped passages into: `<home>/demo`."""
    return sift_home() / "demo"


def eval_cache_path() -> Path:
    """Where `sift eval` caches indexed corpora: `<home>/eval-cache`, outside any checkout."""
    return sift_home() / "eval-cache"


def collections_path() -> Path:
    """The root of `sift serve`'s collections (one store each): `<home>/collections`."""
    return sift_home() / "collections"
