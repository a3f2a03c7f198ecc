"""The graph's state schemas (defined with the nodes that read and write them).

- `EpisodeInput`: question, filters, top_k, max_turns (what a caller or parent gives);
- `EpisodeOutput`: evidence, usage, stopped_because, error, trace, result;
- `EpisodeState`: both, plus the episode (saved as plain data by a checkpointer) and the
  turn's tool outcomes;
- `ToolTask`: the payload of a tool call's `Send`.
"""

from __future__ import annotations

from sift.nodes import EpisodeInput, EpisodeOutput, EpisodeState, ToolOutcome, ToolTask

__all__ = ["EpisodeInput", "EpisodeOutput", "EpisodeState", "ToolOutcome", "ToolTask"]
