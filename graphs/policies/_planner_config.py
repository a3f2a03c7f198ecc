"""HeuristicPlannerConfig: every number the heuristic planner uses, documented once.

The planner's modules take their numbers from two views of the configuration, built here:
`TextLimits` (how questions and passages are read: _plan_text, _plan_ja) and `Weights`
(how surfaced chunks are ranked and bridge names picked: _plan_rank).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from sift.fusion import RRF_K

__all__ = ["HeuristicPlannerConfig", "TextLimits", "Weights", "default_text_limits"]


@dataclass(frozen=True)
class TextLimits:
    """How the planner reads text (`HeuristicPlannerConfig.text_limits()`)."""

    quote_min_chars: int
    quote_max_chars: int
    option_max_chars: int
    number_min_digits: int
    number_max_digits: int
    content_word_min_chars: int
    residual_word_min_chars: int
    cue_word_min_chars: int
    cue_prefix_chars: int
    cue_entity_min_chars: int
    cjk_name_min_chars: int


@dataclass(frozen=True)
class Weights:
    """The knobs of the ranking (`HeuristicPlannerConfig.weights()` builds them from the
    planner's configuration; `fork` perturbs them for rollouts)."""

    title: float
    entity: float
    coverage: float
    rank: float
    link: float
    multi: float
    # Per doubling of a chunk's tokens: at equal relevance the shorter chunk is better
    # evidence (coverage alone favours long chunks, which mention more words by chance).
    length: float
    mention: float
    # How many anchor documents are searched for links, the coverage that makes a chunk
    # an anchor, and the step down of each further chunk of one document in the ranking.
    max_anchor_docs: int
    anchor_coverage: float
    same_doc_step: float
    question_rank: float
    question_rank_latin: float
    other_tool_rank_part: float
    entity_hits_cap: int
    multi_cap: int
    length_floor_tokens: int
    length_reference_tokens: int
    title_match_jaccard: float
    question_titles: bool
    link_min_title_chars: int
    mention_anchors: int
    mention_spans: int
    proximity_default_distance: float
    proximity_distance_scale: float
    proximity_position_weight: float
    proximity_position_scale: float
    span_min_chars: int
    span_word_bonus: float
    span_word_bonus_cap: int
    sentence_start_factor: float
    text_limits: TextLimits


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
    max_greps: int = Field(default=3, ge=0)
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
    # Identifiers grepped verbatim (letters and digits mixed, "B-52"): at least this long.
    identifier_min_chars: int = Field(default=3, ge=1)

    # --- depth follows the question (issue 44; docs/decisions/0018) ---
    # The first round is the plain search of the question, with a grep of every name it
    # types; the sub-queries of its entities wait for the second round unless this is set.
    first_round_entities: bool = False
    # The episode stops after the first round when one of the question search's best
    # `early_stop_top` chunks covers at least `early_stop_coverage` of the question's
    # content words (IDF-weighted; 1.0: every one) and every name the question types was
    # found; comparisons and relation chains ("the director of ...") always go on.
    early_stop: bool = True
    early_stop_top: int = Field(default=3, ge=1)
    early_stop_coverage: float = Field(default=0.5, ge=0.0, le=1.0)
    # The final list is the planner's ranking fused (weighted reciprocal rank, ranks
    # counted from `question_fusion_k`) with the order of the question's own search, so
    # that what one plain search ranks high is not dropped (0: the planner's alone).
    question_search_weight: float = Field(default=0.0, ge=0.0)
    question_fusion_k: int = Field(default=RRF_K, ge=1)
    # A question of one place by its shape (no comparison, no chain of relations) that
    # the first search did not cover gets this many rounds in all (the plain search,
    # then its entities and words), not the hops of a multi-hop question; its final list
    # weighs the plain search's order by `lean_question_weight`.
    lean_max_rounds: int = Field(default=2, ge=1)
    lean_question_weight: float = Field(default=3.0, ge=0.0)
    # Its second round searches its entities only when it names at least this many (the
    # parts of a question about two places).
    lean_entity_min: int = Field(default=2, ge=0)
    # Chunks that write a name the question types (an option, variable, function, file)
    # come first in the final list.
    names_first: bool = True
    # A comparison's first pick leads, above the plain search's first (docs/decisions/0024).
    compared_first: bool = True
    # The planner's first pick leads, above the plain search's first, where the two
    # agree on the pick and not on that search's first: the plain search ranks the
    # pick's document within its first `confirmed_within`, while the planner ranks the
    # search's first document `confirmed_below`th or lower (0: off; docs/decisions/0026).
    confirmed_below: int = Field(default=5, ge=0)
    confirmed_within: int = Field(default=10, ge=1)
    # The result is flagged `not_found` when the surfaced chunks together hold less than
    # this share of the question's content words (IDF-weighted), or `not_found:<name>`
    # when a name the question types occurs nowhere (its grep found nothing).
    not_found_coverage: float = Field(default=0.5, ge=0.0, le=1.0)
    # A question that asks for its parts one by one ("both A and B", "A and B each",
    # 「A」と「B」, それぞれ) in a corpus of pages or sections: after the first round each
    # part is searched on its own with the question's scope, and the final list takes
    # the best of the plain search and of each part's search in turn (then stops).
    part_searches: bool = True
    # How many of each part's search (after the chunks under a heading that names the
    # part) take turns with the plain search's; past them the plain search's order goes
    # on alone, so what one plain search ranked 6th is not pushed past the top 10.
    part_depth: int = Field(default=3, ge=0)

    # --- how questions and passages are read (TextLimits) ---
    # A quoted string of this many characters is a name to search and grep.
    quote_min_chars: int = Field(default=2, ge=1)
    quote_max_chars: int = Field(default=120, ge=1)
    # A comparison option ("A or B") longer than this is a clause, not a name.
    option_max_chars: int = Field(default=80, ge=1)
    # Numbers of this many digits are kept as numbers (years).
    number_min_digits: int = Field(default=3, ge=1)
    number_max_digits: int = Field(default=4, ge=1)
    # Content words (coverage terms) have at least this many letters (one kanji is enough).
    content_word_min_chars: int = Field(default=2, ge=1)
    # Words of the question outside its names, appended to hop queries, at least this long.
    residual_word_min_chars: int = Field(default=3, ge=1)
    # Relation cues: question words this long, matched by their first `cue_prefix_chars`
    # letters ("marri" for married, marriage); question names this long are cues too.
    cue_word_min_chars: int = Field(default=4, ge=1)
    cue_prefix_chars: int = Field(default=5, ge=1)
    cue_entity_min_chars: int = Field(default=4, ge=1)
    # In Japanese, names and cue words this long (two kanji make a name: 東京, 京都).
    cjk_name_min_chars: int = Field(default=2, ge=1)

    # --- ranking weights (Weights; see _plan_rank.score_chunks) ---
    title_weight: float = 3.0
    entity_weight: float = 1.0
    coverage_weight: float = 4.0
    rank_weight: float = 0.5
    link_weight: float = 2.0
    multi_weight: float = 0.0
    # Per doubling of a chunk's tokens: at equal relevance the shorter chunk is better
    # evidence (coverage alone favours long chunks, which mention more words by chance).
    # length 0.25 and mention 3 (from 0.4 and 2) once the entity graph joined the final
    # list: the best sum of the three English dev sets' tuning halves of 10 settings,
    # JSQuAD hit@10 kept (benchmarks/results/entity_graph.md, docs/decisions/0014).
    length_weight: float = 0.25
    mention_weight: float = 3.0
    # How far the search of the whole question ranked a chunk (1 / (1 + rank)), for a
    # question in a script without spaces: there the question's own search is the best
    # single signal (single-shot BM25 puts the gold paragraph first for 0.89 of JSQuAD's
    # questions), while coverage, counted over character bigrams, is noisy: on JSQuAD
    # weights 0 / 0.5 / 1 / 1.5 / 3 gave hit@10 0.9875 / 0.9875 / 0.99 / 0.99 / 0.99 and
    # MRR@10 0.9450 / 0.9383 / 0.9429 / 0.9397 / 0.9318. English questions do not use it.
    cjk_question_rank_weight: float = 1.0
    # The same for a question written with spaces between its words (English).
    question_rank_weight: float = 0.0
    # A chunk first found by a tool other than search (grep, read) gets this rank part.
    other_tool_rank_part: float = 0.3
    # Entity hits count up to this many; sub-queries that found a chunk up to this many.
    entity_hits_cap: int = Field(default=3, ge=1)
    multi_cap: int = Field(default=2, ge=0)
    # The length penalty measures tokens against this reference, from this floor up.
    length_floor_tokens: int = Field(default=16, ge=1)
    length_reference_tokens: int = Field(default=128, ge=1)
    # A page is about an entity when their names share this share of their words.
    title_match_jaccard: float = Field(default=2 / 3, gt=0.0, le=1.0)
    # A surfaced page whose title of two words or more the question writes word for word
    # is about a question entity, and a page titled by only a part of that ("Glory"
    # inside "Jump for Glory") is not.
    question_titles: bool = True
    # Titles shorter than this are not looked for in anchors' text (too many false hits).
    link_min_title_chars: int = Field(default=4, ge=1)
    # Bridge names of the best `mention_anchors` anchors, `mention_spans` per anchor,
    # lift the pages that mention them.
    mention_anchors: int = Field(default=2, ge=0)
    mention_spans: int = Field(default=3, ge=0)
    # proximity(): 1 / (1 + distance / scale) + weight / (1 + position / position scale),
    # distance being the default when the text has no cue.
    proximity_default_distance: float = Field(default=400.0, ge=0.0)
    proximity_distance_scale: float = Field(default=40.0, gt=0.0)
    proximity_position_weight: float = Field(default=0.3, ge=0.0)
    proximity_position_scale: float = Field(default=200.0, gt=0.0)
    # Bridge names in Latin letters are at least this long (CJK: `cjk_name_min_chars`).
    span_min_chars: int = Field(default=3, ge=1)
    # Multi-word names are likelier names: this bonus per word, up to the cap.
    span_word_bonus: float = Field(default=0.1, ge=0.0)
    span_word_bonus_cap: int = Field(default=3, ge=0)
    # A lone capitalised word opening a sentence is as often a plain word: its score is
    # scaled by this.
    sentence_start_factor: float = Field(default=0.5, ge=0.0, le=1.0)
    # Anchor documents searched for links, the coverage that makes a page an anchor for
    # links, and the step down of each further chunk of one document.
    max_anchor_docs: int = Field(default=6, ge=1)
    link_anchor_coverage: float = Field(default=0.3, ge=0.0, le=1.0)
    same_doc_step: float = Field(default=1.0, ge=0.0)
    # --- the entity graph of what the episode has read (_plan_graph) ---
    # The final list fuses the ranking above with a walk over the chunks' entity graph
    # (seeded by the question's entities and the best `graph_seed_chunks` chunks) by
    # weighted reciprocal rank fusion: the walk's list weighs `graph_weight` (0: off),
    # ranks counted from `graph_fusion_k`. Tuned on the hash-chosen half of the dev sets
    # (benchmarks/results/entity_graph.md); the walk's own numbers are SIFT_ENTITY_GRAPH_*.
    graph_weight: float = Field(default=1.0, ge=0.0)
    graph_seed_chunks: int = Field(default=3, ge=0)
    graph_fusion_k: int = Field(default=RRF_K, ge=1)
    # Each later round also searches this many bridge names ranked by that walk.
    graph_bridges: int = Field(default=0, ge=0)
    # A forked rollout scales the title, coverage and link weights by a random factor in
    # 1 +- fork_weight_spread, the rank weight in 1 +- fork_rank_spread.
    fork_weight_spread: float = Field(default=0.2, ge=0.0, lt=1.0)
    fork_rank_spread: float = Field(default=0.3, ge=0.0, lt=1.0)

    @model_validator(mode="after")
    def _ranges_are_ordered(self) -> HeuristicPlannerConfig:
        for low, high in (
            ("quote_min_chars", "quote_max_chars"),
            ("number_min_digits", "number_max_digits"),
        ):
            if getattr(self, low) > getattr(self, high):
                raise ValueError(
                    f"{low} ({getattr(self, low)}) is above {high} ({getattr(self, high)})"
                )
        return self

    def text_limits(self) -> TextLimits:
        """How questions and passages are read, from these settings."""
        return TextLimits(
            quote_min_chars=self.quote_min_chars,
            quote_max_chars=self.quote_max_chars,
            option_max_chars=self.option_max_chars,
            number_min_digits=self.number_min_digits,
            number_max_digits=self.number_max_digits,
            content_word_min_chars=self.content_word_min_chars,
            residual_word_min_chars=self.residual_word_min_chars,
            cue_word_min_chars=self.cue_word_min_chars,
            cue_prefix_chars=self.cue_prefix_chars,
            cue_entity_min_chars=self.cue_entity_min_chars,
            cjk_name_min_chars=self.cjk_name_min_chars,
        )

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
            question_rank=self.cjk_question_rank_weight,
            question_rank_latin=self.question_rank_weight,
            other_tool_rank_part=self.other_tool_rank_part,
            entity_hits_cap=self.entity_hits_cap,
            multi_cap=self.multi_cap,
            length_floor_tokens=self.length_floor_tokens,
            length_reference_tokens=self.length_reference_tokens,
            title_match_jaccard=self.title_match_jaccard,
            question_titles=self.question_titles,
            link_min_title_chars=self.link_min_title_chars,
            mention_anchors=self.mention_anchors,
            mention_spans=self.mention_spans,
            proximity_default_distance=self.proximity_default_distance,
            proximity_distance_scale=self.proximity_distance_scale,
            proximity_position_weight=self.proximity_position_weight,
            proximity_position_scale=self.proximity_position_scale,
            span_min_chars=self.span_min_chars,
            span_word_bonus=self.span_word_bonus,
            span_word_bonus_cap=self.span_word_bonus_cap,
            sentence_start_factor=self.sentence_start_factor,
            text_limits=self.text_limits(),
        )


@lru_cache(maxsize=1)
def default_text_limits() -> TextLimits:
    """The text limits of the default configuration (the environment included), for
    callers that pass none."""
    return HeuristicPlannerConfig().text_limits()
