"""Method specifications as text: ``name[key=value,...]`` and ``name:key=value,...``.

How ``--methods``, ``--config`` and ``get_method`` read a method with its settings, and how a
configured method's name shows them back: :func:`split_specs` (a list of specifications),
:func:`split_spec` (one, into its name and settings) and back (:func:`format_spec`), :func:`parse_value` and
:func:`format_value` (one setting's value, as text and back), :func:`parse_number` (a number, by one rule).
"""

from __future__ import annotations

import json
from typing import Any, Container

import numpy as np

__all__ = ["plain_number", "parse_number", "parse_value", "format_value", "format_spec", "split_specs", "split_spec",
           "split_top"]


def plain_number(text: str) -> bool:
    """The one rule for a number written as text: ASCII digits and no underscores (Python's ``int``
    and ``float`` also read ``'٠.١'`` and ``'1_0'``)."""
    return text.isascii() and "_" not in text


def parse_number(text: str) -> int | float | None:
    """``text`` as an ``int`` or a ``float``; ``None`` when it is no number; a ``ValueError`` for a
    number that breaks :func:`plain_number`."""
    for kind in (int, float):
        try:
            value = kind(text)
        except ValueError:
            continue
        if not plain_number(text):
            raise ValueError(f"{text!r} is not a number in ASCII digits without underscores")
        return value
    return None


def parse_value(text: str) -> Any:
    """A setting's value from text: ``true``/``false``, ``none``, a number (:func:`parse_number`), a
    JSON list (``[0,1,3,7]``), else the text itself (``ldd``, ``ndcg@5``)."""
    t = text.strip()
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    if t.startswith("["):
        try:
            return json.loads(t)
        except json.JSONDecodeError:
            raise ValueError(f"{t!r} is not a JSON list") from None
    number = parse_number(t)
    return t if number is None else number


def format_value(value: Any) -> str:
    """The text :func:`parse_value` reads back as ``value`` (numpy scalars as plain numbers)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return json.dumps(list(value), separators=(",", ":"))
    return str(value)


def format_spec(name: str, params: dict[str, Any]) -> str:
    """``name[key=value,...]`` (values by :func:`format_value`), which :func:`split_spec` reads back; ``name`` alone
    without ``params``."""
    return f"{name}[{','.join(f'{k}={format_value(v)}' for k, v in params.items())}]" if params else name


def split_specs(text: str) -> list[str]:
    """Method specs from a comma-separated list: commas inside ``[...]`` and a ``key=value``
    after ``name:key=value`` belong to that method (``mpboost-ldd:alpha=0.3,lam=2,lambdarank``
    is two methods); ``;`` also separates."""
    out: list[str] = []
    for p in split_top(text.replace(";", ",")):
        if p.startswith("["):
            raise ValueError(f"{p!r} follows no method name: settings go right after the name, without a space"
                             + (f": {out[-1]}{p}" if out else ": name[key=value,...]"))
        head = p.split("=", 1)[0]
        if out and "=" in p and ":" not in head and "[" not in head and "[" not in out[-1]:
            out[-1] += "," + p  # a further key=value of the method before
        else:
            out.append(p)
    return out


def split_spec(spec: str, names: Container[str], what: str = "method") -> tuple[str, dict[str, Any]]:
    """``name[k=v,...]`` or ``name:k=v,...`` -> ``(name, {k: v})``; a name may itself hold ``:``
    (``xgb-rank:ndcg``), so the name is the first prefix that is one of ``names`` (the methods).
    ``what``: how messages name the spec."""
    spec = spec.strip()
    if "[" in spec:
        if not spec.endswith("]"):
            raise ValueError(f"{what} {spec!r}: expected name[key=value,...]")
        base, body = spec[:-1].split("[", 1)
        if base != base.rstrip():
            raise ValueError(f"{what} {spec!r}: no space before the bracket: {base.strip()}[{body}]")
    else:
        cut = next((i for i, ch in enumerate(spec) if ch == ":" and spec[:i] in names), None)
        if cut is None:
            head = spec.split("=", 1)[0]
            if "=" not in spec or ":" not in head:
                return spec, {}
            cut = head.rindex(":")  # an unknown name with settings: the name is what comes before them
        base, body = spec[:cut], spec[cut + 1:]
    params: dict[str, Any] = {}
    for item in split_top(body):
        key, sep, value = (t.strip() for t in item.partition("="))
        if not sep or not key:
            raise ValueError(f"{what} {spec!r}: {item!r} is not key=value")
        if key in params:
            raise ValueError(f"{what} {base.strip()!r}: {key} is given twice ({format_value(params[key])} and {value})")
        try:
            params[key] = parse_value(value)
        except ValueError as e:
            raise ValueError(f"{what} {base.strip()!r}: {key}={value}: {e}") from None
    return base.strip(), params


def split_top(body: str) -> list[str]:
    """``body`` split at the commas outside ``[...]``, each part stripped, empty ones left out."""
    out, depth, cur = [], 0, ""
    for ch in body:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth <= 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [o.strip() for o in out if o.strip()]
