"""`python -m sift.integrations.cli`: the `sift` command."""

from __future__ import annotations

from sift.integrations.cli import main

main()
