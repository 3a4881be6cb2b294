"""tests/autodiff: JaxLoss and from_rax, skipped where jax (or, for its tests, rax) is not installed."""

import pytest

pytest.importorskip("jax")
