"""HeuristicPlannerConfig: every number the heuristic planner uses, documented once."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from sift.graphs.policies._plan_rank import Weights

__all__ = ["HeuristicPlannerConfig"]


class HeuristicPlannerConfig(BaseSettings):
    """The planner's limits and ranking weights, each readable from the environment as
    `SIFT_PLANNER_<FIELD>` (e.g. `SIFT_PLANNER_MAX_ANCHORS=3`)."""

    model_config = SettingsConfigDict(env_prefix="SIFT_PLANNER_", extra="ignore", frozen=True)

    max_entity_queries: int = Field(default=6, ge=0)
    max_anchors: int = Field(default=2, ge=1)
    # Anchors are looked for among this many best documents (spent ones are skipped).
    anchor_window: int = Field(default=4, ge=1)
    # Bridge names searched alone per anchor, then further names searched in groups.
    bridges_per_anchor: int = Field(default=1, ge=0)
    names_per_group: int = Field(default=6, ge=1)
    groups_per_anchor: int = Field(default=2, ge=0)
    max_calls_per_turn: int = Field(default=10, ge=1)
    max_reads_per_turn: int = Field(default=2, ge=0)
    max_greps: int = Field(default=2, ge=0)
    # Prune once the context passes this share of the threshold, down to `prune_to`.
    prune_at: float = Field(default=0.85, gt=0.0, le=1.0)
    prune_to: float = Field(default=0.6, gt=0.0, le=1.0)
    # Chunks ranked above this are never pruned by the planner itself.
    keep_top: int = Field(default=10, ge=0)
    # The final list keeps chunks scoring at least this share of the best one (never fewer
    # than `min_final`): evidence, not everything the episode happened to surface.
    min_relative_score: float = Field(default=0.0, ge=0.0, le=1.0)
    min_final: int = Field(default=5, ge=1)
    # Hop queries are the bridge name alone (its own page); the first `hop_context` names
    # of each anchor are also searched with the rest of the question (a page *about* the
    # bridge in the question's sense: "Alcohol laws of Indiana" for "Indiana" + "booze").
    hop_context: int = Field(default=0, ge=0)
    seed: int = 0
    # A chunk this long that does not end a sentence is taken for a cut-off document.
    partial_chunk_chars: int = Field(default=200, ge=0)
    # Later rounds hop from pages with at least this share of the question's content.
    hop_anchor_coverage: float = Field(default=0.25, ge=0.0, le=1.0)
    # Ranking weights (see _plan_rank.score_chunks).
    title_weight: float = 3.0
    entity_weight: float = 1.0
    coverage_weight: float = 4.0
    rank_weight: float = 0.5
    link_weight: float = 2.0
    multi_weight: float = 0.0
    # Per doubling of a chunk's tokens: at equal relevance the shorter chunk is better
    # evidence (coverage alone favours long chunks, which mention more words by chance).
    length_weight: float = 0.4
    mention_weight: float = 2.0
    # Anchor documents searched for links, the coverage that makes a page an anchor for
    # links, and the step down of each further chunk of one document.
    max_anchor_docs: int = Field(default=6, ge=1)
    link_anchor_coverage: float = Field(default=0.3, ge=0.0, le=1.0)
    same_doc_step: float = Field(default=1.0, ge=0.0)
    # A forked rollout scales the title, coverage and link weights by a random factor in
    # 1 +- fork_weight_spread, the rank weight in 1 +- fork_rank_spread.
    fork_weight_spread: float = Field(default=0.2, ge=0.0, lt=1.0)
    fork_rank_spread: float = Field(default=0.3, ge=0.0, lt=1.0)

    def weights(self) -> Weights:
        """The ranking's weights from these settings."""
        return Weights(
            title=self.title_weight,
            entity=self.entity_weight,
            coverage=self.coverage_weight,
            rank=self.rank_weight,
            link=self.link_weight,
            multi=self.multi_weight,
            length=self.length_weight,
            mention=self.mention_weight,
            max_anchor_docs=self.max_anchor_docs,
            anchor_coverage=self.link_anchor_coverage,
            same_doc_step=self.same_doc_step,
        )
