"""`python -m sift`: the `sift` command."""

from __future__ import annotations

from sift.integrations.cli import main

main()
