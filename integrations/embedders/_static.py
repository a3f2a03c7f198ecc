"""The offline default embedder: a static (model2vec) model distilled from all-MiniLM-L6-v2.

A static model is a table of token vectors; a text's embedding is the mean of its tokens'
vectors. The files are model2vec's format (`model.safetensors`, `tokenizer.json`,
`config.json`) and `model2vec.StaticModel.from_pretrained` reads them too, but this module
reads them itself with safetensors and tokenizers: a local folder is all it ever touches
(model2vec's loader falls back to a hub download when a path is missing), and pooling all
texts of a batch in one numpy pass is faster than model2vec's per-length buckets.

Tokenising is most of the cost, and with a BERT tokenizer most of it is repeated work: the
tokenizer splits text at white space before anything else, and everything it does after
(normalising, splitting off punctuation, WordPiece) stays inside one white-space-separated
piece. So a text's tokens are its pieces' tokens, in order, and each distinct piece is
tokenised once and remembered. The vectors are bit for bit those of tokenising every
text whole (tests/integrations/data/static_vectors.jsonl).

The remembered pieces and the pooling of texts made of them run in C when the package was
built with its C part (`_pieces.c`; `StaticEmbedder.native`): the same sums, bit for bit,
five to six times faster, and with the GIL released, so threads embed side by side. Texts
with new pieces are split and learnt here, then pooled in C; texts tokenised whole, and
every text when the C part is missing, are pooled here.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from sift.integrations.embedders._pieces import PieceTable

try:
    from sift.integrations.embedders import _pieces
except ImportError as missing:  # built without its C part (no compiler): numpy does it all
    _pieces = None  # type: ignore[assignment]
    # Said once, where it can be fixed: setup.py lets an install without a compiler go
    # on, and the only sign was an embedder several times slower.
    warnings.warn(
        f"sift's static embedder runs without its C part ({missing}): the same vectors, "
        "2.4-5.7x slower. To build it, install a C compiler and Python's headers (Debian: "
        "apt install gcc python3-dev) and reinstall sift (pip install --force-reinstall "
        "--no-cache-dir sift, or pip install -e . in a clone). `sift stats` says which runs.",
        RuntimeWarning,
        stacklevel=2,
    )

__all__ = ["DEFAULT_MODEL_DIR", "StaticEmbedder"]

DEFAULT_MODEL_DIR = Path(__file__).resolve().parent / "data" / "static-minilm"

# A static model has no sequence limit, so long chunks are embedded whole; the caps only
# bound the cost of a pathological input (a whole book passed as one text).
_MAX_TOKENS = 8192
_MAX_CHARS = _MAX_TOKENS * 8
# Texts pooled per pass.
_BATCH = 1024
# Characters Python's str.split() splits at but BERT's normaliser deletes (control
# characters that are also white space): a text holding one is tokenised whole.
_SPLIT_DIFFERS = re.compile("[\x0b\x0c\x1c-\x1f\x85]")
# Distinct pieces remembered (about 150 bytes each); past it, new pieces are tokenised
# every time they occur. The frequent ones come early, so they are the ones kept.
_MAX_PIECES = 500_000
# Longer pieces (URLs, a CJK sentence with no space) rarely repeat: never remembered.
_MAX_PIECE_CHARS = 48
# A text whose pieces average more characters than this is tokenised whole.
_WHOLE_PIECE_CHARS = 24
# Batches smaller than this (a query) learn no pieces: tokenising a few texts whole is
# cheaper than setting up the piece tokenizer.
_LEARN_FROM = 16
# New pieces are tokenised joined by spaces, in strings of about this many characters.
_JOIN_CHARS = 4096


class StaticEmbedder:
    """Mean of static token vectors, L2-normalised; `embed` of a text with no known token
    (the empty string, say) is the zero vector, which scores 0 against every query.

    Args:
        path: the model folder; None is the shipped model.
        remember_pieces: tokenise each distinct white-space piece once and remember its
            tokens (up to 500,000 pieces, about 75 MB); False tokenises every text whole,
            slower, with the same vectors.
        native: look remembered pieces up and pool them in C when the package was built
            with its C part (the default); False keeps it all in Python, with the same
            vectors.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        remember_pieces: bool = True,
        native: bool = True,
    ) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = Path(path) if path is not None else DEFAULT_MODEL_DIR
        files = {name: folder / name for name in ("config.json", "tokenizer.json")}
        files["model.safetensors"] = folder / "model.safetensors"
        missing = [name for name, file in files.items() if not file.is_file()]
        if missing:
            raise FileNotFoundError(
                f"static embedding model folder {folder} lacks {', '.join(missing)}; "
                "rebuild it with `python -m sift.integrations.embedders.distill --out DIR`"
            )
        self._config = json.loads(files["config.json"].read_text(encoding="utf-8"))
        tensors = load_file(str(files["model.safetensors"]))
        if "embeddings" not in tensors:
            raise ValueError(f"{files['model.safetensors']} has no 'embeddings' tensor")
        table = tensors["embeddings"].astype(np.float32)
        # model2vec's vocabulary-quantised models store shared rows plus a per-token
        # mapping and weight; expanding them once keeps `embed` a plain gather.
        if "mapping" in tensors:
            table = table[tensors["mapping"].astype(np.int64)]
        if "weights" in tensors:
            table = table * tensors["weights"].astype(np.float32)[:, None]
        self._table = np.ascontiguousarray(table)

        tokenizer = Tokenizer.from_file(str(files["tokenizer.json"]))
        tokenizer.no_padding()
        tokenizer.enable_truncation(_MAX_TOKENS)
        if tokenizer.get_vocab_size() != len(self._table):
            raise ValueError(
                f"tokenizer has {tokenizer.get_vocab_size()} tokens but the model "
                f"{len(self._table)} vectors; the folder {folder} mixes two models"
            )
        self._tokenizer = tokenizer
        unk = getattr(tokenizer.model, "unk_token", None)
        # Unknown tokens carry no meaning and would pull every text toward one vector.
        self._unk_id = tokenizer.token_to_id(unk) if unk else None
        self._encode = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)
        self._folder = folder
        # Piece -> its token ids (int32 bytes); None when the tokenizer is not one whose
        # output splits at white space, and every text is tokenised whole.
        self._pieces: dict[str, bytes] | None = None
        # The same, in C: when built, it holds the pieces and `_pieces` stays empty.
        self._native: PieceTable | None = None
        spec = json.loads(files["tokenizer.json"].read_text(encoding="utf-8"))
        if remember_pieces and _splits_at_white_space(spec):
            self._pieces = {}
            if native and _pieces is not None:
                self._native = _pieces.PieceTable(
                    self._table, -1 if self._unk_id is None else self._unk_id, _MAX_TOKENS
                )
        self._piece_tokenizer: Tokenizer | None = None  # made on first use

    @property
    def name(self) -> str:
        return "static"

    @property
    def languages(self) -> frozenset[str]:
        """Distilled from an English model: Japanese text is unknown tokens to it."""
        return frozenset({"en"})

    @property
    def model_id(self) -> str:
        """Which build of the static model this is (changes when the distillation does)."""
        return str(self._config.get("sift_model_id", "static-unknown"))

    @property
    def dim(self) -> int:
        return int(self._table.shape[1])

    @property
    def releases_gil(self) -> bool:
        """Whether `embed` runs mostly without the GIL (the C part pools, the tokenizer
        learns new pieces on its own threads), so a thread beside the caller's embeds in
        parallel with it, as the embedded store's ingest does."""
        return self._native is not None

    @property
    def native(self) -> bool:
        """Whether remembered pieces are looked up and pooled in C (the package was built
        with its C part) rather than in Python."""
        return self._native is not None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not a single string")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), _BATCH):
            batch = [str(t)[:_MAX_CHARS] for t in texts[start : start + _BATCH]]
            out[start : start + len(batch)] = self._pool(batch)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        out /= norms
        return out

    def _pool(self, batch: list[str]) -> np.ndarray:
        if self._native is not None:
            return self._pool_native(self._native, batch)
        pooled = np.zeros((len(batch), self.dim), dtype=np.float32)
        for row, ids in enumerate(self._token_ids(batch)):
            self._sum(ids, pooled[row])
        return pooled

    def _sum(self, ids: np.ndarray, out: np.ndarray) -> None:
        """Sums the vectors of a text's token ids into `out` (zeros when none count)."""
        # Truncated first, then unknown tokens dropped: what tokenising whole did.
        ids = ids[:_MAX_TOKENS]
        if self._unk_id is not None:
            ids = ids[ids != self._unk_id]
        if ids.size:
            # One small gather-and-sum per text stays in cache; gathering a whole batch
            # into one (tokens x dim) matrix first is several times slower (measured), and
            # np.add.reduceat sums in another order (the vectors would change in their
            # last bits). sum(axis=0) adds the rows one after the other, as before, and
            # as _pieces.c does. The sum, not the mean: the caller L2-normalises.
            self._table.take(ids, axis=0).sum(axis=0, out=out)

    def _pool_native(self, native: PieceTable, batch: list[str]) -> np.ndarray:
        pooled = np.zeros((len(batch), self.dim), dtype=np.float32)
        whole, missing, new = native.pool(batch, pooled, _WHOLE_PIECE_CHARS)
        if missing and len(batch) < _LEARN_FROM:
            whole = sorted(whole + missing)  # a query or two: tokenised whole, nothing learnt
        elif missing:
            fresh = self._learn(list(new))
            texts = [batch[row] for row in missing]
            again = np.zeros((len(missing), self.dim), dtype=np.float32)
            # Every piece is known now, unless the memory is full or a piece too long
            # to remember: those texts are put together here.
            _, left, _ = native.pool(texts, again, _WHOLE_PIECE_CHARS)
            for index in left:
                split = texts[index].split()
                joined = b"".join([fresh[p] if p in fresh else _known(native, p) for p in split])
                self._sum(np.frombuffer(joined, dtype=np.int32), again[index])
            pooled[missing] = again
        if whole:
            for row, ids in zip(whole, self._whole([batch[r] for r in whole]), strict=True):
                self._sum(ids, pooled[row])
        return pooled

    def _token_ids(self, batch: list[str]) -> list[np.ndarray]:
        """Each text's token ids (untruncated when assembled from pieces)."""
        pieces = self._pieces
        if pieces is None:
            return self._whole(batch)
        out: list[np.ndarray | None] = [None] * len(batch)
        splits: list[list[str]] = [[] for _ in batch]
        whole: list[int] = []
        retry: list[int] = []
        missing: set[str] = set()
        lookup = pieces.__getitem__
        for row, text in enumerate(batch):
            if _SPLIT_DIFFERS.search(text):
                whole.append(row)
                continue
            split = splits[row] = text.split()
            if len(split) * _WHOLE_PIECE_CHARS < len(text):
                # Mostly long pieces (Japanese, Chinese): nothing to remember.
                whole.append(row)
                continue
            try:
                out[row] = np.frombuffer(b"".join(map(lookup, split)), dtype=np.int32)
            except KeyError:
                if len(batch) < _LEARN_FROM:
                    whole.append(row)  # a query or two: tokenised whole, nothing learnt
                    continue
                missing.update(split)
                retry.append(row)
        if retry:
            fresh = self._learn([p for p in missing if p not in pieces])
            for row in retry:
                split = splits[row]
                try:  # the new pieces were remembered, unless the memory is full
                    joined = b"".join(map(lookup, split))
                except KeyError:
                    joined = b"".join([pieces[p] if p in pieces else fresh[p] for p in split])
                out[row] = np.frombuffer(joined, dtype=np.int32)
        if whole:
            for row, ids in zip(whole, self._whole([batch[r] for r in whole]), strict=True):
                out[row] = ids
        return out  # type: ignore[return-value]  # every row was filled above

    def _whole(self, texts: list[str]) -> list[np.ndarray]:
        return [
            np.asarray(encoding.ids, dtype=np.int32)
            for encoding in self._encode(texts, add_special_tokens=False)
        ]

    def _learn(self, words: list[str]) -> dict[str, bytes]:
        """Token ids of new pieces, remembered while there is room.

        The pieces are tokenised joined by single spaces, a few thousand characters per
        string (one tokenizer call per piece costs several times more); each token goes to
        the piece its first character is in.
        """
        groups: list[list[str]] = []
        group: list[str] = []
        size = 0
        for word in words:
            if group and size + len(word) > _JOIN_CHARS:
                groups.append(group)
                group, size = [], 0
            group.append(word)
            size += len(word) + 1
        if group:
            groups.append(group)
        if self._piece_tokenizer is None:
            from tokenizers import Tokenizer

            # A copy that never truncates: each text is truncated once its pieces are
            # put together. (Made here: a CLI call that embeds one query and then exits
            # would pay for it at start-up.)
            copy = Tokenizer.from_str(self._tokenizer.to_str())
            copy.no_truncation()
            self._piece_tokenizer = copy
        encodings = self._piece_tokenizer.encode_batch(
            [" ".join(g) for g in groups], add_special_tokens=False
        )
        fresh: dict[str, bytes] = {}
        for group, encoding in zip(groups, encodings, strict=True):
            ids = np.asarray(encoding.ids, dtype=np.int32)
            first = np.fromiter((o[0] for o in encoding.offsets), np.int64, len(ids))
            starts = np.zeros(len(group), dtype=np.int64)
            np.cumsum([len(w) + 1 for w in group[:-1]], out=starts[1:])
            owner = np.searchsorted(starts, first, side="right") - 1
            bounds = np.searchsorted(owner, np.arange(len(group) + 1))
            raw = ids.tobytes()
            ends = bounds.tolist()  # token offsets: word k's ids are [ends[k], ends[k+1])
            for word, begin, end in zip(group, ends[:-1], ends[1:], strict=True):
                fresh[word] = raw[4 * begin : 4 * end]
        keep = [(w, v) for w, v in fresh.items() if len(w) <= _MAX_PIECE_CHARS]
        if self._native is not None:
            if len(self._native) < _MAX_PIECES and keep:
                self._native.add([w for w, _ in keep], [v for _, v in keep])
        elif self._pieces is not None and len(self._pieces) < _MAX_PIECES:
            self._pieces.update(keep)
        return fresh

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as its folder (another process loads its own copy): the
        # table, the tokenizer and the remembered pieces are not worth sending.
        return (_load, (self._folder, self._pieces is not None, self._native is not None))

    def __repr__(self) -> str:
        return f"StaticEmbedder({self._folder}, model_id={self.model_id!r}, dim={self.dim})"


def _load(folder: Path, remember_pieces: bool, native: bool = True) -> StaticEmbedder:
    return StaticEmbedder(folder, remember_pieces=remember_pieces, native=native)


def _known(native: PieceTable, piece: str) -> bytes:
    ids = native.get(piece)
    if ids is None:  # every piece of the text was remembered or just learnt
        raise AssertionError(f"piece {piece!r} is neither remembered nor learnt")
    return ids


def _splits_at_white_space(spec: dict[str, Any]) -> bool:
    """Whether a tokenizer (its tokenizer.json) tokenises a text as the concatenation of
    its white-space-separated pieces: BERT's normaliser (per character: clean-up, spaces
    around CJK characters, accents, lower case) and pre-tokeniser (white space, then
    punctuation), and no added token holding white space."""
    normalizer = spec.get("normalizer") or {}
    pre_tokenizer = spec.get("pre_tokenizer") or {}
    added = [str(token.get("content", "")) for token in spec.get("added_tokens") or []]
    return (
        normalizer.get("type") == "BertNormalizer"
        and pre_tokenizer.get("type") == "BertPreTokenizer"
        and not any(any(c.isspace() for c in content) for content in added)
    )
