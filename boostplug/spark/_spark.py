"""pyspark, imported when first needed, and the checks every entry point makes of its DataFrame."""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["pyspark_module", "require_frame", "require_columns"]


def pyspark_module() -> Any:
    """``pyspark``, or an ImportError saying what to install."""
    try:
        import pyspark
    except ImportError as exc:  # pragma: no cover - exercised only without pyspark
        raise ImportError("boostplug.spark needs pyspark (and Java 17 or newer): pip install 'boostplug[spark]'") \
            from exc
    return pyspark


def require_frame(df: Any, who: str, columns: Sequence[str] = ()) -> None:
    """A ``pyspark.sql.DataFrame``, else a TypeError naming what was given, holding ``columns``
    (:func:`require_columns`)."""
    pyspark_module()
    from pyspark.sql import DataFrame

    if not isinstance(df, DataFrame):
        raise TypeError(f"{who} takes a pyspark.sql.DataFrame, got {type(df).__name__}")
    require_columns(df, columns)


def require_columns(df: Any, columns: Sequence[str]) -> None:
    """Every column of ``columns`` is in ``df``, else a ValueError naming the first missing one."""
    for c in columns:
        if c not in df.columns:
            raise ValueError(f"no column {c!r} in the DataFrame; its columns are {list(df.columns)}")
