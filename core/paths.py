"""Where sift keeps its files on this machine: `SIFT_HOME` and `SIFT_STORE` are read here
and nowhere else.

- `sift_home()`: `$SIFT_HOME`, else `~/.sift`;
- `default_store_location()`: `$SIFT_STORE`, else `<home>/store`: the store the CLI and
  `sift.open_store()` use when given no location. A store location is a folder or a URL
  (`weaviate://host:8080?collection=Docs`), kept as given; `default_store_path()` is the
  same store as a folder;
- `demo_store_path()`, `eval_cache_path()`, `collections_path()`: the folders of
  `sift demo`, `sift eval`'s indexed corpora and `sift serve`'s collections, under home.

Each call reads the environment afresh, so a process (or a test) that changes it is
followed. An empty variable counts as unset.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = [
    "SiftPaths",
    "collections_path",
    "default_store_location",
    "default_store_path",
    "demo_store_path",
    "eval_cache_path",
    "location_scheme",
    "sift_home",
]

# `scheme://...`; anything else (absolute, relative, `~/...`, `C:\...`) is a path.
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


def location_scheme(location: str) -> str:
    """The scheme a store location names (lower case); `file` for a plain path."""
    found = _SCHEME.match(location)
    return found.group(1).lower() if found else "file"


class SiftPaths(BaseSettings):
    """The two locations sift reads from the environment (`SIFT_HOME`, `SIFT_STORE`).

    Named one by one: `SIFT_` is `HarnessConfig`'s prefix, and a prefix names one
    settings class's variables (tests/test_settings_names.py)."""

    model_config = SettingsConfigDict(
        env_prefix="SIFT_PATHS_",
        env_ignore_empty=True,
        extra="ignore",
        frozen=True,
        populate_by_name=True,
    )

    home: Path = Field(
        Path("~/.sift"), validation_alias="SIFT_HOME", description="Folder of sift's own files."
    )
    store: str | None = Field(
        None,
        validation_alias="SIFT_STORE",
        description="The default store: a folder or a URL (weaviate://host:8080?collection="
        "Docs); None: the folder `store` under home.",
    )


def sift_home() -> Path:
    """`$SIFT_HOME`, else `~/.sift` (user-expanded)."""
    return SiftPaths().home.expanduser()


def default_store_location() -> str:
    """`$SIFT_STORE`, else `$SIFT_HOME/store`, else `~/.sift/store`: a URL as given, a
    path user-expanded."""
    paths = SiftPaths()
    if paths.store is None:
        return str(paths.home.expanduser() / "store")
    if location_scheme(paths.store) != "file" or paths.store.startswith("file://"):
        return paths.store
    return str(Path(paths.store).expanduser())


def default_store_path() -> Path:
    """The default store's folder (`default_store_location()`, a `file://` URL read as
    its path). A ValueError when `$SIFT_STORE` names a store that is not a folder."""
    location = default_store_location()
    scheme = location_scheme(location)
    if scheme == "file" and location.startswith("file://"):
        return Path(unquote(urlsplit(location).path))
    if scheme != "file":
        raise ValueError(
            f"SIFT_STORE names a {scheme}:// store, not a folder ({location!r}): "
            "use sift.paths.default_store_location() or sift.open_store()"
        )
    return Path(location)


def demo_store_path() -> Path:
    """The store `sift demo` indexes its shipped passages into: `<home>/demo`."""
    return sift_home() / "demo"


def eval_cache_path() -> Path:
    """Where `sift eval` caches indexed corpora: `<home>/eval-cache`, outside any checkout."""
    return sift_home() / "eval-cache"


def collections_path() -> Path:
    """The root of `sift serve`'s collections (one store each): `<home>/collections`."""
    return sift_home() / "collections"
