"""Data frames LightGBM reads through Arrow (polars, pyarrow), made safe before LightGBM sees them.

LightGBM reads a polars DataFrame or a pyarrow Table column by column through the Arrow C
interface and handles only integer, floating and boolean columns there: any other column (a
polars ``Categorical``/``Enum``, an Arrow dictionary, a string, a date, a decimal...) ends the
process (``[LightGBM] [Fatal] Unsupported Arrow type``, ``terminate called``) instead of
raising. :func:`lightgbm_frame` converts a frame with categorical columns to the pandas frame
LightGBM treats as usual (each category column its codes, a categorical feature, the categories
stored in the model, as for pandas ``category`` columns) and refuses every other such column with
a ``ValueError`` naming it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["lightgbm_frame"]


def _narwhals_frame(X: Any) -> Any:
    """``X`` as a narwhals DataFrame when LightGBM would read it through Arrow, else ``None``.

    LightGBM (4.7+, which reads such frames through narwhals) takes a pandas DataFrame through
    its own pandas path and every other eager frame narwhals knows through Arrow."""
    if type(X).__module__.startswith("pandas"):
        return None
    try:
        import narwhals as nw
        import narwhals.dependencies as nwd
    except ImportError:  # LightGBM before 4.7: no Arrow path for polars
        return None
    return nw.from_native(X, eager_only=True) if nwd.is_into_dataframe(X) else None


def lightgbm_frame(X: Any, what: str = "X") -> Any:
    """``X`` ready for LightGBM: unchanged unless it is a frame LightGBM reads through Arrow
    (polars DataFrame, pyarrow Table) with a column LightGBM cannot read there.

    Categorical columns (polars ``Categorical`` and ``Enum``, Arrow dictionaries) make the whole
    frame a pandas DataFrame in which each is an unordered ``category`` column with the same
    categories: LightGBM then trains on their codes as categorical features (unless
    ``categorical_feature=`` says otherwise) and stores the categories in the model, so a frame
    predicted on later is mapped by category value, not by code. Boolean columns become floats
    there (a missing value NaN, as pandas cannot hold it in a boolean column).

    Raises:
        ValueError: a column of another type LightGBM cannot read (string, date, time, decimal,
            nested, null), naming it and its type; or categorical columns without pandas
            installed for the conversion.
    """
    frame = _narwhals_frame(X)
    if frame is None:
        return X
    import narwhals as nw

    categorical: list[str] = []
    booleans: list[str] = []
    for name, dtype in frame.schema.items():
        if isinstance(dtype, (nw.Categorical, nw.Enum)):
            categorical.append(name)
        elif dtype == nw.Boolean:
            booleans.append(name)
        elif not (dtype.is_integer() or dtype.is_float()):
            raise ValueError(
                f"{what}: column {name!r} has type {dtype}, which LightGBM cannot read from a "
                f"{type(X).__module__.split('.')[0]} frame (it would end the process, not raise): "
                "use integer, float, boolean or categorical columns (e.g. cast strings to a categorical type)"
            )
    if not categorical:
        return X
    try:
        converted = frame.with_columns(*(nw.col(b).cast(nw.Float64) for b in booleans)).to_pandas()
    except ImportError as exc:
        raise ValueError(
            f"{what}: column {categorical[0]!r} is categorical, which LightGBM cannot read from a "
            f"{type(X).__module__.split('.')[0]} frame (it would end the process); boostplug converts such a "
            f"frame to pandas, which needs {exc.name or 'pandas and pyarrow'}: install it, or pass the "
            "categories' integer codes with categorical_feature=[...]"
        ) from None
    for name in categorical:
        converted[name] = converted[name].cat.as_unordered()
    return converted
