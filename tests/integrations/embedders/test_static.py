from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from sift.integrations.embedders import _static, get_embedder
from sift.integrations.embedders._static import DEFAULT_MODEL_DIR, StaticEmbedder
from sift.protocols import Embedder

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "static_vectors.jsonl"
PARIS = "How tall is the Eiffel Tower?"
PARAPHRASE = "What is the height of the Eiffel Tower in Paris?"
UNRELATED = "Bananas are a good source of potassium and fibre."


@pytest.fixture(scope="module")
def embedder() -> StaticEmbedder:
    return StaticEmbedder()


def test_shipped_model_is_small_and_in_model2vec_format() -> None:
    files = {p.name: p.stat().st_size for p in DEFAULT_MODEL_DIR.iterdir() if p.is_file()}
    assert {"config.json", "tokenizer.json", "model.safetensors"} <= files.keys()
    assert sum(files.values()) < 16_000_000
    config = json.loads((DEFAULT_MODEL_DIR / "config.json").read_text())
    assert config["model_type"] == "model2vec"
    assert config["sift_model_id"].startswith("static-minilm-")


def test_embeds_to_normalised_float32_rows_of_dim(embedder: StaticEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.name == "static"
    assert embedder.dim == 256
    vectors = embedder.embed([PARIS, PARAPHRASE, UNRELATED])
    assert vectors.shape == (3, embedder.dim)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, embedder.dim)


def test_is_deterministic_across_instances_and_batch_positions(embedder: StaticEmbedder) -> None:
    texts = [f"passage number {i} about topic {i % 7}" for i in range(1500)]
    texts[1300] = PARIS  # past the first tokenizer batch
    batch = embedder.embed(texts)
    alone = StaticEmbedder().embed([PARIS])
    np.testing.assert_array_equal(batch[1300], alone[0])
    np.testing.assert_array_equal(embedder.embed(texts[:5]), batch[:5])


def test_paraphrase_ranks_above_unrelated_text(embedder: StaticEmbedder) -> None:
    query, paraphrase, unrelated = embedder.embed([PARIS, PARAPHRASE, UNRELATED])
    assert float(query @ paraphrase) > float(query @ unrelated) + 0.2


def test_empty_and_unknown_only_text_give_zero_vector(embedder: StaticEmbedder) -> None:
    vectors = embedder.embed(["", "   ", PARIS])
    assert not vectors[0].any()
    assert not vectors[1].any()
    assert np.isfinite(vectors).all()


def test_non_ascii_and_long_input(embedder: StaticEmbedder) -> None:
    texts = ["Ünïcødé café — naïve résumé", "東京は日本の首都です", "emoji 🚀🔥", "word " * 50_000]
    vectors = embedder.embed(texts)
    assert vectors.shape == (4, embedder.dim)
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_matches_model2vec_reference_encoder(embedder: StaticEmbedder) -> None:
    from model2vec import StaticModel

    texts = [PARIS, PARAPHRASE, UNRELATED, "Ünïcødé café", "a " * 300]
    reference = StaticModel.from_pretrained(DEFAULT_MODEL_DIR).encode(texts, max_length=None)
    reference = reference.astype(np.float32)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    np.testing.assert_allclose(embedder.embed(texts), reference, atol=2e-3)


def test_loads_and_embeds_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"the static embedder opened a connection: {args}")

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    vectors = get_embedder("static").embed([PARIS])
    assert vectors.shape == (1, 256)


def test_missing_model_folder_names_the_missing_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"model\.safetensors"):
        StaticEmbedder(tmp_path)


def test_mismatched_tokenizer_and_table_is_refused(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    for name in ("config.json", "tokenizer.json"):
        shutil.copy(DEFAULT_MODEL_DIR / name, tmp_path / name)
    save_file(
        {"embeddings": np.zeros((10, 8), dtype=np.float16)}, str(tmp_path / "model.safetensors")
    )
    with pytest.raises(ValueError, match="mixes two models"):
        StaticEmbedder(tmp_path)


def test_a_single_string_is_refused(embedder: StaticEmbedder) -> None:
    with pytest.raises(TypeError, match="sequence of texts"):
        embedder.embed(PARIS)  # type: ignore[arg-type]


def _recorded() -> list[dict[str, object]]:
    # split("\n"), not splitlines(): the texts hold raw U+2028, U+0085 and friends.
    lines = FIXTURE.read_text(encoding="utf-8").split("\n")
    return [json.loads(line) for line in lines if line]


def _text(record: dict[str, object]) -> str:
    if "repeat" in record:
        return str(record["repeat"]) * int(record["times"])  # type: ignore[call-overload]
    return str(record["text"])


@pytest.mark.parametrize("native", [True, False], ids=["c", "python"])
def test_vectors_are_bit_for_bit_those_recorded_before_the_piece_cache(native: bool) -> None:
    # Recorded by tests/integrations/data/record_static_vectors.py with the embedder that
    # tokenised every text whole: English, Japanese, and every white-space and control
    # character that could make a piece-wise tokenisation differ.
    records = _recorded()
    texts = [_text(r) for r in records]
    fresh = StaticEmbedder(native=native)
    cold = fresh.embed(texts)
    warm = fresh.embed(texts)  # now from remembered pieces
    shuffled = list(range(len(texts)))
    random.Random(3).shuffle(shuffled)
    mixed = fresh.embed([texts[i] for i in shuffled])
    for position, (record, vector) in enumerate(zip(records, cold, strict=True)):
        digest = hashlib.sha256(vector.tobytes()).hexdigest()
        assert digest == record["sha256"], (position, _text(record)[:60], vector[:4])
        assert warm[position].tobytes() == vector.tobytes()
    for row, position in enumerate(shuffled):
        assert mixed[row].tobytes() == cold[position].tobytes()


# Characters a piece-wise tokenisation must treat exactly as the tokenizer does: every
# white space (Python's and BERT's differ), controls, zero-width and combining marks,
# letters whose case mapping changes length, CJK, emoji, and the model's special tokens.
NASTY = [
    *"abcXYZ019.,;:!?'\"()[]-_/@#",
    *" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2002\u2009\u200a\u2028\u2029",
    *"\u202f\u205f\u3000\u200b\u200d\ufeff\x00\x07\x7f\ufffd\u0301\u0308",
    *"éÉßİﬁΣςσÅ東京のカ한日本語。「」🚀",
    "[PAD]",
    "[UNK]",
    "word",
    "Tokyo",
    "a" * 101,
]


def test_piece_wise_token_ids_equal_tokenising_whole_texts() -> None:
    embedder = StaticEmbedder(native=False)  # the Python path's pieces (the C path's: below)
    rng = random.Random(11)
    texts = ["".join(rng.choice(NASTY) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    for _ in range(2):  # pieces new, then remembered
        pieces = embedder._token_ids(texts)
        whole = embedder._whole(texts)
        for text, got, want in zip(texts, pieces, whole, strict=True):
            assert got.tolist() == want.tolist(), repr(text)


def test_only_a_bert_style_tokenizer_is_taken_piece_wise(tmp_path: Path) -> None:
    for name in ("config.json", "model.safetensors"):
        shutil.copy(DEFAULT_MODEL_DIR / name, tmp_path / name)
    spec = json.loads((DEFAULT_MODEL_DIR / "tokenizer.json").read_text(encoding="utf-8"))
    # A normaliser that works across white space (NFKC folds "ﬁ" and full-width forms,
    # which a BERT normaliser leaves) is not assumed to be piece-wise.
    spec["normalizer"] = {"type": "NFKC"}
    (tmp_path / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    other = StaticEmbedder(tmp_path)
    assert other._pieces is None
    texts = ["ﬁne Ｔｏｋｙｏ words", PARIS]
    want = []
    for ids in other._whole(texts):
        pooled = other._table.take(ids[ids != other._unk_id], axis=0).sum(axis=0)
        want.append(pooled / np.linalg.norm(pooled))
    np.testing.assert_allclose(other.embed(texts), np.array(want), rtol=0, atol=1e-6)
    assert StaticEmbedder()._pieces is not None
    # Asked not to remember pieces: whole texts, the same vectors.
    plain = StaticEmbedder(remember_pieces=False)
    assert plain._pieces is None
    texts = [_text(r) for r in _recorded()]
    np.testing.assert_array_equal(plain.embed(texts), StaticEmbedder().embed(texts))


def test_pickles_as_its_folder_and_options() -> None:
    import pickle

    for remember in (True, False):
        embedder = StaticEmbedder(remember_pieces=remember)
        embedder.embed(["warm the remembered pieces up"] * 20)
        payload = pickle.dumps(embedder)
        assert len(payload) < 1000  # the folder, not the table or the pieces
        copy = pickle.loads(payload)
        assert (copy._pieces is not None) == remember
        assert copy.embed([PARIS]).tobytes() == embedder.embed([PARIS]).tobytes()


# The C part (_pieces.c): the same vectors as the Python path, bit for bit, for every kind
# of text, from several threads at once, with a full memory, and with pieces whose hashes
# collide; and clear errors for bad input.

SOURCE = Path(_static.__file__).resolve().parent / "_pieces.c"
# Samples of the dev sets (tests/data/benchmarks/README.md).
SAMPLES = Path(__file__).resolve().parents[2] / "data" / "benchmarks"

# Without the C part (no compiler at install) its tests skip, saying so; CI sets
# SIFT_REQUIRE_NATIVE=1, and there they fail instead.
native_only = pytest.mark.skipif(
    _static._pieces is None and os.environ.get("SIFT_REQUIRE_NATIVE") != "1",
    reason="sift was installed without its C part (no C compiler): the Python path is tested",
)


@native_only
def test_the_c_part_is_built_and_used_by_default() -> None:
    # CI sets SIFT_REQUIRE_NATIVE=1: there a missing C part fails here instead of skipping.
    assert _static._pieces is not None, "the C part did not build (see pip's output)"
    assert StaticEmbedder().native
    assert not StaticEmbedder(native=False).native
    # Embedding runs without the GIL with the C part: a thread beside the caller's helps.
    assert StaticEmbedder().releases_gil and not StaticEmbedder(native=False).releases_gil
    # A table of pieces is only made for a tokenizer whose output splits at white space.
    assert not StaticEmbedder(remember_pieces=False).native


def _random_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(NASTY) for _ in range(rng.randint(0, 40))) for _ in range(count)]


def _corpus_texts(limit: int) -> list[str]:
    texts = []
    for name in ("hotpotqa", "jsquad"):
        with open(SAMPLES / name / "corpus.jsonl", encoding="utf-8") as lines:
            for _, line in zip(range(limit), lines, strict=False):
                record = json.loads(line)
                texts.append(f"{record.get('title', '')}\n{record['text']}")
    return texts


def _same_bits(got: np.ndarray, want: np.ndarray, texts: list[str]) -> None:
    for text, a, b in zip(texts, got, want, strict=True):
        assert a.tobytes() == b.tobytes(), repr(text[:80])


@native_only
def test_c_and_python_give_the_same_bits_for_every_kind_of_text() -> None:
    python = StaticEmbedder(native=False)
    native = StaticEmbedder()
    assert native.native
    # Control characters, every white space, CJK, emoji, special tokens; then English
    # and Japanese passages; then the recorded texts (long ones cut at 8,192 tokens).
    # Past 8,192 tokens a text is cut: what follows must not count.
    # (xylophonist is five tokens: the cut falls inside one.)
    long = ["river " * 5000 + "xylophonist " * 3000] * 20
    for texts in (
        _random_texts(5, 3000),
        _corpus_texts(400),
        [_text(r) for r in _recorded()],
        long,
    ):
        want = python.embed(texts)
        _same_bits(native.embed(texts), want, texts)  # pieces new
        _same_bits(native.embed(texts), want, texts)  # pieces remembered
        # A few texts at a time learn nothing (a query): tokenised whole, same bits.
        for start in range(0, 60, 3):
            few = texts[start : start + 3]
            _same_bits(StaticEmbedder().embed(few), want[start : start + 3], few)


@native_only
def test_japanese_beside_english_pools_in_c_once_pieces_are_known() -> None:
    embedder = StaticEmbedder()
    assert embedder._native is not None
    texts = ["東京 は 日本 の 首都 です", "Tokyo is the capital of Japan", "京都 and Kyoto"] * 8
    first = embedder.embed(texts)
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    whole, missing, new = embedder._native.pool(texts, out, _static._WHOLE_PIECE_CHARS)
    assert (whole, missing, new) == ([], [], set())  # every piece remembered: all in C
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    _same_bits(out / norms, first, texts)


@native_only
def test_threads_embedding_at_once_get_the_vectors_of_one_thread() -> None:
    # The GIL is released while pooling: four threads pool and learn new pieces at once
    # in one embedder, and each gets exactly what the Python path gives.
    shared = StaticEmbedder()
    batches = [_random_texts(100 + n, 600) + _corpus_texts(50 * (n + 1)) for n in range(4)]
    want = [StaticEmbedder(native=False).embed(batch) for batch in batches]
    got: list[np.ndarray | None] = [None] * 4
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def run(n: int) -> None:
        try:
            start.wait()
            for _ in range(3):
                got[n] = shared.embed(batches[n])
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for n in range(4):
        result = got[n]
        assert result is not None
        _same_bits(result, want[n], batches[n])


@native_only
def test_a_full_memory_and_pieces_too_long_to_remember_still_give_the_same_bits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_static, "_MAX_PIECES", 40)
    texts = _corpus_texts(60) + [f"{'x' * 60}{n} short words {'y' * 50}" for n in range(20)]
    native = StaticEmbedder()
    assert native._native is not None
    for _ in range(2):
        _same_bits(native.embed(texts), StaticEmbedder(native=False).embed(texts), texts)
    # It stopped remembering once full (one batch of new pieces may overshoot) and never
    # remembered a piece longer than 48 characters.
    assert 40 <= len(native._native) < 5000
    assert native._native.get("x" * 60 + "0") is None


@native_only
def test_pieces_whose_hashes_collide_are_told_apart(
    colliding_build: Callable[[str], ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    colliding = colliding_build("integrations/embedders/_pieces.c")
    monkeypatch.setattr(_static, "_pieces", colliding)
    embedder = StaticEmbedder()
    assert type(embedder._native).__module__ == colliding.__name__
    texts = _corpus_texts(40) + _random_texts(9, 300)
    want = StaticEmbedder(native=False).embed(texts)
    _same_bits(embedder.embed(texts), want, texts)
    _same_bits(embedder.embed(texts), want, texts)
    assert embedder._native is not None
    table = embedder._native
    # Told apart in C: once learnt, only texts with a piece too long to remember miss.
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    _, missing, new = table.pool(texts, out, _static._WHOLE_PIECE_CHARS)
    assert new and all(len(piece) > _static._MAX_PIECE_CHARS for piece in new)
    assert all(any(len(p) > _static._MAX_PIECE_CHARS for p in texts[r].split()) for r in missing)
    assert table.get("Tokyo") is None or table.get("Tokyo") != table.get("tokyo")
    for word in ("the", "of", "東京", "and"):
        ids = StaticEmbedder(native=False)._whole([word])[0]
        known = table.get(word)
        assert known is None or np.frombuffer(known, dtype=np.int32).tolist() == ids.tolist()


@native_only
def test_bad_arguments_are_refused_and_the_table_still_works() -> None:
    embedder = StaticEmbedder()
    table = embedder._native
    assert table is not None and _static._pieces is not None
    embedder.embed(["remember these words please"] * 20)
    known = len(table)
    out = np.zeros((2, embedder.dim), dtype=np.float32)
    with pytest.raises(TypeError, match="expected str"):
        table.pool(["fine", 3], out, 24)  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"shape \(1, 256\)"):
        table.pool(["one"], out, 24)
    with pytest.raises(ValueError, match="float32"):
        table.pool(["a", "b"], out.astype(np.float64), 24)
    with pytest.raises(ValueError, match="differ in length"):
        table.add(["a", "b"], [b"\0\0\0\0"])
    with pytest.raises(ValueError, match="outside the table"):
        table.add(["brandnewpiece"], [np.array([10**7], dtype=np.int32).tobytes()])
    with pytest.raises(TypeError, match="int32"):
        table.add(["brandnewpiece"], [b"\0\0\0"])
    with pytest.raises(ValueError, match="C-contiguous float32"):
        _static._pieces.PieceTable(np.zeros((4, 4), dtype=np.float64), -1, 10)
    with pytest.raises(ValueError, match="max_tokens"):
        _static._pieces.PieceTable(np.zeros((4, 4), dtype=np.float32), -1, 0)
    assert len(table) == known  # nothing half-added
    assert table.get("brandnewpiece") is None
    whole, missing, new = table.pool(["remember these words", "please"], out, 24)
    assert (whole, missing, new) == ([], [], set())
    with_python = StaticEmbedder(native=False).embed(["remember these words", "please"])
    _same_bits(out / np.linalg.norm(out, axis=1, keepdims=True), with_python, ["", ""])


@native_only
def test_a_pickled_embedder_keeps_its_choice_of_path() -> None:
    import pickle

    for native in (True, False):
        copy = pickle.loads(pickle.dumps(StaticEmbedder(native=native)))
        assert copy.native == native
