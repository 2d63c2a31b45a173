"""What a model call costs: its token usage, the user's price table, and the one cost rule.

docs/costs.md, the rule: the cost of one call is

    ((prompt_tokens - cached_tokens) * input + cached_tokens * cached_input + completion_tokens * output) / 1e6

in USD, with prices per 1M tokens. ``reasoning_tokens`` are part of ``completion_tokens`` and are not charged
again; without a ``cached_input`` price, cached tokens cost ``input``. A tier (``tiers``) prices the whole call
when its prompt is longer than the tier's ``above`` (long-context prices apply to every token of such a call,
not to the tokens past the threshold). A model with no price has no cost (``None``, shown as ``NA``), never 0.
No price ships with evalnb: prices change, and a table that goes stale would misprice without a word.

Agents, judges, the runner, the frames and the budget all price calls here.

Example::

    table = price_table({"gpt-4o-mini": {"input": 0.15, "output": 0.60, "cached_input": 0.075}})
    usage = usage_of({"prompt_tokens": 1000, "completion_tokens": 200,
                      "prompt_tokens_details": {"cached_tokens": 400}})
    table.cost(usage, "gpt-4o-mini-2024-07-18")
    # 0.00024  ((600 * 0.15 + 400 * 0.075 + 200 * 0.60) / 1e6)
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalnb.errors import ConfigError

__all__ = [
    "TOKEN_KEYS",
    "Price",
    "PriceTable",
    "Tier",
    "add_usage",
    "price_table",
    "total_tokens",
    "usage_of",
]

TOKEN_KEYS = ("prompt_tokens", "completion_tokens", "cached_tokens", "reasoning_tokens")
"""The four token counts evalnb keeps per call (and per row of ``result.runs`` / ``result.scores``)."""

# Where providers put each count: the OpenAI chat shape first, then the Responses API and flat forms.
_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "prompt_tokens": (("prompt_tokens",), ("input_tokens",)),
    "completion_tokens": (("completion_tokens",), ("output_tokens",)),
    "cached_tokens": (
        ("cached_tokens",),
        ("prompt_tokens_details", "cached_tokens"),
        ("input_tokens_details", "cached_tokens"),
    ),
    "reasoning_tokens": (
        ("reasoning_tokens",),
        ("completion_tokens_details", "reasoning_tokens"),
        ("output_tokens_details", "reasoning_tokens"),
    ),
}


# _PATHS as (key, ((first key, key inside it or None), ...)): read on every call an agent or judge makes.
_STEPS = tuple(
    (key, tuple((path[0], path[1] if len(path) > 1 else None) for path in paths))
    for key, paths in _PATHS.items()
)


def _count(value: Any) -> int | None:
    # A missing count and a JSON integer first: the ABC check of numbers.Real costs more than the rest, and
    # every provider response is read this way (two paths of three miss for each count).
    if value is None:
        return None
    if type(value) is int:
        return value if value >= 0 else None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    if not math.isfinite(float(value)) or value < 0:
        return None
    return int(float(value))


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)  # parsed JSON is a dict: no ABC check for it


def usage_of(raw: Mapping[str, Any] | None) -> dict[str, int] | None:
    """A provider's usage object as evalnb's four counts (only those it reports); None when it reports none.

    Reads ``prompt_tokens`` / ``completion_tokens`` (or ``input_tokens`` / ``output_tokens``),
    ``prompt_tokens_details.cached_tokens`` and ``completion_tokens_details.reasoning_tokens`` (or the flat
    ``cached_tokens`` / ``reasoning_tokens`` an agent of one's own may report).

    Example::

        usage_of({"prompt_tokens": 10, "completion_tokens": 5,
                  "completion_tokens_details": {"reasoning_tokens": 3}})
        # {'prompt_tokens': 10, 'completion_tokens': 5, 'reasoning_tokens': 3}
    """
    if not _is_mapping(raw) or not raw:
        return None
    out: dict[str, int] = {}
    get = raw.get
    for key, paths in _STEPS:
        for first, part in paths:
            value: Any = get(first)
            if value is None:
                continue
            if part is not None:  # a count inside a details object
                value = value.get(part) if _is_mapping(value) else None
            n = _count(value)
            if n is not None:
                out[key] = n
                break
    return out or None


def add_usage(total: dict[str, int], raw: Mapping[str, Any] | None) -> dict[str, int]:
    """Add one call's usage (any shape :func:`usage_of` reads) to ``total`` in place; returns ``total``.

    Example::

        total: dict[str, int] = {}
        add_usage(total, {"prompt_tokens": 10, "completion_tokens": 5})
        add_usage(total, {"prompt_tokens": 10, "completion_tokens": 5})
        # {'prompt_tokens': 20, 'completion_tokens': 10}
    """
    usage = usage_of(raw)
    for key, n in (usage or {}).items():
        total[key] = total.get(key, 0) + n
    return total


def total_tokens(usage: Mapping[str, Any] | None) -> int:
    """Prompt plus completion tokens of a usage (reasoning and cached tokens are already inside them)."""
    u = usage_of(usage) or {}
    return u.get("prompt_tokens", 0) + u.get("completion_tokens", 0)


@dataclass(frozen=True)
class Tier:
    """Prices for calls whose prompt is longer than ``above`` tokens (USD per 1M tokens)."""

    above: int
    input: float
    output: float
    cached_input: float | None = None


@dataclass(frozen=True)
class Price:
    """One model's prices, USD per 1M tokens; ``tiers`` for calls with long prompts.

    Example::

        Price(input=3.0, output=15.0).cost({"prompt_tokens": 1000, "completion_tokens": 100})
        # 0.0045
    """

    input: float
    output: float
    cached_input: float | None = None
    tiers: tuple[Tier, ...] = ()

    def cost(self, usage: Mapping[str, Any]) -> float:
        """The cost of one call (docs/costs.md, the rule); ``usage`` in any shape :func:`usage_of` reads."""
        u = usage_of(usage) or {}
        prompt = u.get("prompt_tokens", 0)
        completion = u.get("completion_tokens", 0)
        cached = min(u.get("cached_tokens", 0), prompt)
        inp, out, cached_price = self.input, self.output, self.cached_input
        for tier in self.tiers:  # sorted by `above`: the last one the prompt is longer than applies
            if prompt > tier.above:
                inp, out, cached_price = tier.input, tier.output, tier.cached_input
        if cached_price is None:
            cached_price = inp
        return ((prompt - cached) * inp + cached * cached_price + completion * out) / 1e6


@dataclass(frozen=True)
class PriceTable:
    """Model name -> :class:`Price`. A model is found by its exact name, else by the longest name in the table
    that starts it (servers report a dated name, ``gpt-4o-mini-2024-07-18``, for the alias asked for).

    Example::

        table = PriceTable({"gpt-4o": Price(2.5, 10.0)})
        table.find("gpt-4o-2024-08-06")
        # Price(input=2.5, output=10.0, cached_input=None, tiers=())
    """

    models: Mapping[str, Price] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.models)

    def find(self, model: str | None) -> Price | None:
        """The price of ``model``, or None when the table has none."""
        if not model:
            return None
        price = self.models.get(model)
        if price is not None:
            return price
        best = max((name for name in self.models if model.startswith(name)), key=len, default=None)
        return self.models[best] if best is not None else None

    def cost(self, usage: Mapping[str, Any] | None, model: str | None) -> float | None:
        """The cost of one call of ``model`` with ``usage``; None when the model has no price or there is no
        usage (unknown is never 0)."""
        price = self.find(model)
        if price is None or not usage_of(usage):
            return None
        return price.cost(usage)  # type: ignore[arg-type]

    def merged(self, other: PriceTable | None) -> PriceTable:
        """This table with ``other``'s prices on top (``other`` wins for a model both price)."""
        if not other:
            return self
        return PriceTable({**self.models, **other.models})


# --------------------------------------------------------------------------------------------------
# Reading a price table: a mapping, a TOML / YAML / JSON file, or ``[prices.MODEL]`` of evalnb.toml
# --------------------------------------------------------------------------------------------------

_PRICE_KEYS = ("input", "output", "cached_input", "tiers")
_TIER_KEYS = ("above", "input", "output", "cached_input")


def price_table(value: Any, *, where: str = "prices", per_1k_pairs: bool = False) -> PriceTable | None:
    """A :class:`PriceTable` from what ``run(prices=...)`` takes; None for None or an empty table.

    Args:
        value: a PriceTable; a mapping model -> ``{"input", "output", "cached_input", "tiers"}`` (USD per 1M
            tokens; ``tiers`` a list of ``{"above": prompt tokens, "input", "output", "cached_input"}``); or
            the path of a TOML, YAML or JSON file of that shape (its models at the top or under ``prices``).
        where: what the messages call it (a file name, ``--prices``).
        per_1k_pairs: also take ``[price per 1k prompt tokens, price per 1k completion tokens]`` pairs (the
            judges' ``prices=`` of evalnb 0.2).

    Raises:
        ConfigError: naming the file, the model and the key, for anything that is not a price.

    Example::

        price_table({"m": {"input": 1.0, "output": 2.0, "tiers": [{"above": 200000, "input": 2.0,
                                                                 "output": 4.0}]}})
    """
    if value is None:
        return None
    if isinstance(value, PriceTable):
        return value or None
    sep = "."
    if isinstance(value, (str, os.PathLike)):
        path = Path(value)
        value, where, sep = _read(path), f"{path}:", " "
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{where}: give a mapping model -> {{input, output, cached_input}} (USD per 1M tokens) or the path "
            f"of a TOML/YAML file, not {type(value).__name__}",
            code="INVALID_VALUE",
        )
    if set(value) == {"prices"} and isinstance(value["prices"], Mapping):
        value = value["prices"]
    models = {
        str(model): _price(entry, f"{where}{sep}{model}", per_1k_pairs=per_1k_pairs)
        for model, entry in value.items()
    }
    return PriceTable(models) if models else None


def _read(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"price file not found: {path}", code="CONFIG_ERROR") from None
    except OSError as e:
        raise ConfigError(f"price file {path} could not be read: {e.strerror or e}") from None
    suffix = path.suffix.lower()
    try:
        if suffix == ".toml":
            import sys

            if sys.version_info >= (3, 11):
                import tomllib
            else:  # pragma: no cover - Python 3.10
                import tomli as tomllib
            return tomllib.loads(text)
        if suffix == ".json":
            import json

            return json.loads(text)
        if suffix in (".yaml", ".yml"):
            import yaml

            return yaml.safe_load(text)
    except Exception as e:  # any parser's error: the file is not what it says
        raise ConfigError(f"price file {path} does not parse as {suffix[1:].upper()}: {e}") from None
    raise ConfigError(f"price file {path}: use a .toml, .yaml, .yml or .json file", code="INVALID_VALUE")


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise ConfigError(f"{where}: give a number (USD per 1M tokens), not {value!r}", code="INVALID_VALUE")
    if value < 0:
        raise ConfigError(f"{where}: a price cannot be negative ({value!r})", code="INVALID_VALUE")
    return float(value)


def _keys(entry: Mapping[str, Any], valid: Iterable[str], required: Iterable[str], where: str) -> None:
    from evalnb._text import nearest

    valid = list(valid)
    for key in entry:
        if key not in valid:
            near = nearest(str(key), valid)
            hint = f"did you mean {near!r}?" if near else f"valid keys: {', '.join(valid)}"
            raise ConfigError(f"{where}: unknown key {key!r} ({hint})", code="UNKNOWN_FIELD")
    for key in required:
        if key not in entry:
            raise ConfigError(f"{where}: missing key {key!r} (USD per 1M tokens)", code="MISSING_FIELD")


def _price(entry: Any, where: str, *, per_1k_pairs: bool) -> Price:
    if isinstance(entry, Price):
        return entry
    if per_1k_pairs and isinstance(entry, (list, tuple)) and len(entry) == 2:
        # evalnb 0.2's judge prices: USD per 1k prompt and completion tokens.
        return Price(_number(entry[0], where) * 1000, _number(entry[1], where) * 1000)
    if not isinstance(entry, Mapping):
        raise ConfigError(
            f"{where}: give {{input = ..., output = ..., cached_input = ...}} in USD per 1M tokens, not {entry!r}",
            code="INVALID_VALUE",
        )
    _keys(entry, _PRICE_KEYS, ("input", "output"), where)
    tiers_raw = entry.get("tiers") or []
    if not isinstance(tiers_raw, list):
        raise ConfigError(f"{where}.tiers: give a list of {{above, input, output}}", code="INVALID_VALUE")
    tiers = []
    for i, t in enumerate(tiers_raw):
        at = f"{where}.tiers[{i}]"
        if not isinstance(t, Mapping):
            raise ConfigError(f"{at}: give {{above = PROMPT_TOKENS, input, output}}", code="INVALID_VALUE")
        _keys(t, _TIER_KEYS, ("above", "input", "output"), at)
        above = t["above"]
        if isinstance(above, bool) or not isinstance(above, numbers.Integral) or above < 0:
            raise ConfigError(f"{at}.above: give a whole number of prompt tokens, not {above!r}")
        cached = t.get("cached_input")
        tiers.append(
            Tier(
                int(above),
                _number(t["input"], f"{at}.input"),
                _number(t["output"], f"{at}.output"),
                None if cached is None else _number(cached, f"{at}.cached_input"),
            )
        )
    cached = entry.get("cached_input")
    return Price(
        _number(entry["input"], f"{where}.input"),
        _number(entry["output"], f"{where}.output"),
        None if cached is None else _number(cached, f"{where}.cached_input"),
        tuple(sorted(tiers, key=lambda t: t.above)),
    )
