from __future__ import annotations

import hashlib
import json
import random
import shutil
import socket
from pathlib import Path

import numpy as np
import pytest

from sift.integrations.embedders import get_embedder
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


def test_vectors_are_bit_for_bit_those_recorded_before_the_piece_cache() -> None:
    # Recorded by tests/integrations/data/record_static_vectors.py with the embedder that
    # tokenised every text whole: English, Japanese, and every white-space and control
    # character that could make a piece-wise tokenisation differ.
    records = _recorded()
    texts = [_text(r) for r in records]
    fresh = StaticEmbedder()
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
    embedder = StaticEmbedder()
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
