"""`--set KEY=VALUE`: any field of the harness's settings (`HarnessConfig`, e.g.
`max_turns=6`), of the heuristic planner's (`HeuristicPlannerConfig`, as
`planner.<field>`, e.g. `planner.max_anchors=3`) or of the store's (`EmbeddedSettings` or
`WeaviateSettings` by the store's kind, as `store.<option>`, e.g.
`store.hybrid_candidates=200`) from the command line, without a flag per field. The
settings models validate every value; the environment still fills the rest.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args, get_origin

import typer
from pydantic import BaseModel, ValidationError

from sift.errors import SiftError

if TYPE_CHECKING:
    from sift.graphs import HarnessConfig

__all__ = [
    "Overrides",
    "SetOption",
    "SettingError",
    "parse_overrides",
    "setting_lines",
    "valid_keys",
]

PLANNER = "planner."
STORE = "store."
HELP = "help"


def _list_settings(ctx: typer.Context, values: list[str] | None) -> list[str] | None:
    """`--set help`: the keys, one a line on stdout, and exit 0 before anything else
    of the command (its question or dataset) is asked for."""
    if values and any(v.strip().lower() == HELP for v in values) and not ctx.resilient_parsing:
        typer.echo("\n".join(setting_lines(store=ctx.info_name == "search")))
        raise typer.Exit()
    return values


SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="A harness setting (max_turns=6, deadline_s=30, search_mode=bm25), a "
        "planner setting (planner.max_anchors=3) or a store option "
        "(store.hybrid_candidates=200); repeatable. `--set help` lists them.",
        callback=_list_settings,
        is_eager=True,
    ),
]


class SettingError(SiftError, ValueError):
    """A setting that does not exist, or a value its settings model refuses."""


def _harness_model() -> type[BaseModel]:
    from sift.graphs import HarnessConfig

    return HarnessConfig


def _planner_model() -> type[BaseModel]:
    from sift.graphs.policies import HeuristicPlannerConfig

    planner: type[BaseModel] = HeuristicPlannerConfig
    return planner


def _value(raw: str) -> Any:
    # The models parse numbers and booleans from text; only "no value" needs a word.
    return None if raw.strip().lower() in ("none", "null") else raw


@dataclass(frozen=True)
class Overrides:
    """Validated values by field name: the harness's, and the planner's (without the
    `planner.` prefix)."""

    harness: dict[str, Any] = field(default_factory=dict)
    planner: dict[str, Any] = field(default_factory=dict)
    # As given (text): which model checks them depends on the store they open.
    store: dict[str, str | None] = field(default_factory=dict)

    def store_options(self, location: str) -> dict[str, Any]:
        """The `store.` values for the store at `location`, checked by its kind's
        settings (a SettingError names a key that kind does not have, or a value it
        refuses)."""
        if not self.store:
            return {}
        model = _store_model(location)
        raw = {k: "" if v is None else v for k, v in self.store.items()}
        unknown = [k for k in self.store if k not in model.model_fields]
        if unknown:
            near = difflib.get_close_matches(unknown[0], list(model.model_fields), n=1)
            guess = f"; did you mean {STORE + near[0]!r}?" if near else ""
            raise SettingError(
                f"--set {STORE}{unknown[0]}: not an option of this store ({model.__name__}){guess}"
            )
        return _validated(model, dict(self.store), STORE, raw)

    def harness_config(self) -> HarnessConfig:
        """HarnessConfig from the environment with these values on top."""
        from sift.graphs import HarnessConfig

        return HarnessConfig(**self.harness)

    def planner_config(self) -> Any:
        """HeuristicPlannerConfig with these values on top of its defaults."""
        return _planner_model()(**self.planner)

    def refuse_store(self, command: str) -> None:
        """For a command that makes its own stores: `store.` keys would do nothing."""
        if self.store:
            key = STORE + next(iter(self.store))
            raise SettingError(
                f"--set {key}: sift {command} makes its own stores; store options apply "
                "to sift search"
            )

    def require_planner_policy(self, policy: str) -> None:
        if self.planner and policy != "heuristic":
            keys = ", ".join(PLANNER + k for k in self.planner)
            raise SettingError(
                f"--set {keys}: planner settings apply to --policy heuristic, not {policy}"
            )


def _store_model(location: str) -> type[BaseModel]:
    from sift.paths import location_scheme

    if location_scheme(location) in ("weaviate", "weaviates"):
        from sift.integrations.stores.weaviate import WeaviateSettings

        weaviate: type[BaseModel] = WeaviateSettings
        return weaviate
    from sift.integrations.stores.sqlite import EmbeddedSettings

    embedded: type[BaseModel] = EmbeddedSettings
    return embedded


def valid_keys() -> list[str]:
    return [*_harness_model().model_fields, *(PLANNER + k for k in _planner_model().model_fields)]


def _type_name(annotation: Any) -> str:
    if get_origin(annotation) is Literal:
        return "|".join(str(a) for a in get_args(annotation))
    name = getattr(annotation, "__name__", None)
    return name if isinstance(name, str) and get_origin(annotation) is None else str(annotation)


def setting_lines(*, store: bool = True) -> list[str]:
    """Each key as `key (type, default value)`: the declared default, which a `SIFT_*`
    variable of the environment may change; `store`: the store's options too (the
    commands that open a store by its location)."""
    lines = []
    models = [("", _harness_model()), (PLANNER, _planner_model())]
    if store:
        models.append((STORE, _store_model("")))
    for prefix, model in models:
        for name, info in model.model_fields.items():
            default = info.get_default(call_default_factory=True)
            lines.append(f"{prefix}{name} ({_type_name(info.annotation)}, default {default})")
    if store:
        lines.append(
            f"{STORE}<field> of WeaviateSettings for a weaviate:// store (docs/weaviate.md)"
        )
    return lines


def _unknown(key: str, command: str) -> SettingError:
    """An unknown key, with the nearest valid one when one is near (a typo)."""
    bare = key.removeprefix(PLANNER)
    if key != bare and bare in _harness_model().model_fields:
        near = [bare]  # a harness setting given the planner's prefix
    elif key == bare and key in _planner_model().model_fields:
        near = [PLANNER + key]  # a planner setting without its prefix
    else:
        near = difflib.get_close_matches(key, valid_keys(), n=1)
    guess = f"; did you mean {near[0]!r}?" if near else ""
    return SettingError(f"unknown setting {key!r}{guess} (sift {command} --set help lists them)")


def _validated(
    model: type[BaseModel], given: Mapping[str, Any], prefix: str, raw: Mapping[str, str]
) -> dict[str, Any]:
    """The values of `given` as the model holds them; a refused one is a SettingError
    naming its key and value (or, for a value from the environment, its variable)."""
    try:
        built = model(**given)
    except ValidationError as exc:
        error = exc.errors()[0]
        name = str(error["loc"][0]) if error["loc"] else ""
        message = error["msg"].removeprefix("Value error, ")
        if not name:
            raise SettingError(f"--set: {message}") from None
        if name in given:
            raise SettingError(f"--set {prefix}{name}={raw[name]!r}: {message}") from None
        variable = str(model.model_config.get("env_prefix", "")) + name.upper()
        raise SettingError(f"setting {prefix}{name} (from ${variable}): {message}") from None
    values = built.model_dump()
    return {name: values[name] for name in given}


def parse_overrides(
    items: Sequence[str] | None, *, command: str = "search", **flags: Any
) -> Overrides:
    """The `--set` items, with the values of dedicated flags (`max_turns=...`; None: the
    flag was not given) merged in as harness settings. A later item wins over an earlier
    one; a flag and an item that set one key differently are an error. `command` is the
    one an unknown key's error sends to for the list (`sift <command> --set help`)."""
    harness_fields = _harness_model().model_fields
    planner_fields = _planner_model().model_fields
    harness: dict[str, Any] = {}
    planner: dict[str, Any] = {}
    store: dict[str, str | None] = {}
    raw: dict[str, dict[str, str]] = {"harness": {}, "planner": {}}
    for item in items or ():
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise SettingError(f"--set {item!r}: expected KEY=VALUE, e.g. --set max_turns=6")
        if key.startswith(PLANNER) and key[len(PLANNER) :] in planner_fields:
            planner[key[len(PLANNER) :]] = _value(text)
            raw["planner"][key[len(PLANNER) :]] = text
        elif key in harness_fields:
            harness[key] = _value(text)
            raw["harness"][key] = text
        elif key.startswith(STORE) and len(key) > len(STORE):
            store[key[len(STORE) :]] = _value(text)  # checked once the store is known
        else:
            raise _unknown(key, command)
    for name, value in flags.items():
        if value is None:
            continue
        if name in harness and str(harness[name]) != str(value):
            flag = "--" + name.replace("_", "-")
            raise SettingError(
                f"{flag} {value} and --set {name}={raw['harness'][name]} disagree; give one"
            )
        harness[name] = value
        raw["harness"][name] = str(value)
    return Overrides(
        harness=_validated(_harness_model(), harness, "", raw["harness"]),
        planner=_validated(_planner_model(), planner, PLANNER, raw["planner"]),
        store=store,
    )
