"""Every test here: `boostplug compare` called in-process trains in this process (tests/_interrupts.py)."""

from tests._interrupts import compare_trains_in_this_process  # noqa: F401
