"""The default TokenCounter: sift's conservative estimate (never undercounts)."""

from __future__ import annotations

from sift.text import estimate_tokens

__all__ = ["EstimateTokenCounter"]


class EstimateTokenCounter:
    """Counts with `sift.text.estimate_tokens`; exact model counts correct it later."""

    def count(self, text: str) -> int:
        return estimate_tokens(text)
