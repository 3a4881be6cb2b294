"""Joachims et al.'s strategies for reading relative preferences out of one impression.

Joachims, Granka, Pan, Hembrooke, Radlinski, Gay, "Evaluating the accuracy of implicit
feedback from clicks and query reformulations in Web search", ACM TOIS 25(2), 2007
(SIGIR 2005: "Accurately interpreting clickthrough data as implicit feedback").
For a shown ranking ``(l_1, l_2, ...)`` with clicked positions ``C``, a strategy yields
preferences ``rel(l_i) > rel(l_j)`` ("``l_i`` is preferred to ``l_j``"):

=========================  ============================================================
name                       preferences
=========================  ============================================================
``click>skip-above``       ``i`` in C, ``j < i``, ``j`` not in C
``last-click>skip-above``  ``i`` the click that came last in time, ``j < i``, ``j`` not in C
``click>earlier-click``    ``i, j`` in C, ``i`` clicked after ``j``
``click>skip-previous``    ``i`` in C, ``j = i - 1`` not in C
``click>no-click-next``    ``i`` in C, ``j = i + 1`` not in C (``l_{i+1}`` shown)
=========================  ============================================================

Strategies combine as a union: a pair that several strategies yield in one impression
counts once for that impression. The two strategies that need the time of each click
(``last-click>skip-above``, ``click>earlier-click``) read the log's order column (a time
or a sequence number); two clicks with the same time are taken in position order.

Which strategies prefer against the shown order (``click>skip-above``, ``last-click>skip-above``,
``click>skip-previous``; ``click>no-click-next`` with it), and why the default reads both
directions from the same neighbours: docs/clicks.md, "Which pairs" and "Recommended default".

Example:
    >>> from boostplug.clicks import strategies
    >>> strategies.mask(("click>skip-above", "click>no-click-next")) == (
    ...     strategies.BITS["click>skip-above"] | strategies.BITS["click>no-click-next"])
    True
"""

from __future__ import annotations

from typing import Iterable

from .._validation import did_you_mean

__all__ = ["NAMES", "BITS", "NEEDS_ORDER", "DEFAULT", "mask", "names"]

# The strategies' bits, named for the compiled extraction (boostplug.clicks._kernels), which
# tests them in a mask.
SKIP_ABOVE, LAST_SKIP_ABOVE, EARLIER_CLICK, SKIP_PREVIOUS, NO_CLICK_NEXT = 1, 2, 4, 8, 16

#: Bit of each strategy (the compiled extraction takes their union as one integer).
BITS: dict[str, int] = {
    "click>skip-above": SKIP_ABOVE,
    "last-click>skip-above": LAST_SKIP_ABOVE,
    "click>earlier-click": EARLIER_CLICK,
    "click>skip-previous": SKIP_PREVIOUS,
    "click>no-click-next": NO_CLICK_NEXT,
}
#: The strategies, in the order Joachims et al. list them.
NAMES: tuple[str, ...] = tuple(BITS)
#: Strategies that need the time (or order) of each click.
NEEDS_ORDER: tuple[str, ...] = ("last-click>skip-above", "click>earlier-click")
#: Adjacent pairs both ways (Click > Skip Previous, Click > No-Click Next): the recommended default.
DEFAULT: tuple[str, ...] = ("click>skip-previous", "click>no-click-next")


def names(strategies: str | Iterable[str]) -> tuple[str, ...]:
    """The strategy names of ``strategies`` (one name, or several), checked, duplicates removed,
    in :data:`NAMES` order; ``"all"`` is every strategy. ``ValueError`` names an unknown one."""
    if isinstance(strategies, str):
        given = [strategies]
    else:
        try:
            given = list(strategies)
        except TypeError:
            raise TypeError(f"strategies must be a strategy name or a sequence of names, got "
                            f"{type(strategies).__name__}") from None
    if not given:
        raise ValueError(f"strategies is empty; choose from {list(NAMES)} (or 'all')")
    chosen: set[str] = set()
    for s in given:
        if s == "all":
            chosen.update(NAMES)
        elif isinstance(s, str) and s in BITS:
            chosen.add(s)
        else:
            raise ValueError(f"unknown click strategy {s!r}; {_hint(s)}choose from {list(NAMES)} (or 'all')")
    return tuple(n for n in NAMES if n in chosen)


def _hint(value: object) -> str:
    """"did you mean ...? " for a misspelt strategy or one given without its ``click>`` side
    (``"skip-above"``: the strategies whose either side it names)."""
    text = str(value).strip().lower().replace(" ", "")
    sides = [n for n in NAMES if text and text in n.split(">")]
    hint = f"did you mean {' or '.join(repr(n) for n in sides)}?" if sides else did_you_mean(text, NAMES, quote=True)
    return f"{hint} " if hint else ""


def mask(strategies: str | Iterable[str]) -> int:
    """The union of the strategies' bits (:data:`BITS`): their sum, each bit distinct and named once."""
    return sum(BITS[n] for n in names(strategies))
