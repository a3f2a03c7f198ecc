"""The task message: the first user message of an episode (DESIGN "What the model is told").

As in the public Context-1 harness, the tools are declared to the model and the task
arrives as the first user message; there are no other instructions.
"""

from __future__ import annotations

__all__ = ["task_prompt"]


def task_prompt(
    question: str, top_k: int = 30, *, constrained: bool = False, graded: bool = False
) -> str:
    """The first user message of an episode. `constrained`: the model's replies are
    decoded against the decision's JSON schema (`decision_schema`), so the final list is
    written in that shape, not as `<Document>` blocks; `graded` (with `constrained`): as
    a grade of each chunk id shown (HarnessConfig.constrained_final "grades")."""
    if constrained and graded:
        finish = '{"final": {...}}, a grade for each chunk id shown, as the system message says.'
    elif constrained:
        finish = f'{{"final": [...]}} with up to {top_k} chunk ids, most relevant first.'
    else:
        finish = f"""up to {top_k} \
documents, most relevant first, each as
<Document id=CHUNK_ID><Justification>One to three sentences on why it matters.\
</Justification></Document>
and nothing else."""
    return f"""You are a retrieval sub-agent. Your job is to find the documents needed to \
answer the question below. You never answer the question yourself.

Tools: search_corpus (hybrid search), grep_corpus (regular expressions over all chunks), \
read_document (read a promising but partial document in full), prune_chunks (drop chunks \
from your context to free tokens).

How to work:
- Break the question into its concepts and plan distinct, non-overlapping searches; issue \
them as parallel tool calls.
- After each round, think: what do I know, what is still missing, which chunks can be \
pruned, is the set complete? Change approach when a strategy fails. Never repeat a search. \
Follow the evidence in the text: names and facts found in one document lead to the next.
- Prune before the token budget runs out; the token usage is shown after each step.

When the set of documents covers every part of the question, finish with {finish}

Question: {question}"""
