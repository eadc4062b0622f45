import json
import math
import struct
from pathlib import Path

import numpy as np
import pytest

from core.search import embed
from core.search.encoder import MAX_CHUNKS, WINDOW, erf, load_safetensors

REFERENCE = json.loads((Path(__file__).parent / "data" / "minilm_reference.json").read_text())


@pytest.fixture(scope="module")
def encoder():
    return embed.encoder(embed.FULL)


def test_matches_the_reference_implementation(encoder):
    """Vectors from Hugging Face transformers' BertModel (torch), computed outside this venv."""
    sentences = REFERENCE["sentences"]
    ids = [encoder.chunks(t)[0] for t in encoder.token_ids(sentences)]
    assert ids == REFERENCE["ids"]
    vectors = encoder.encode(sentences)
    assert np.abs(vectors[:, :8] - np.array(REFERENCE["head"])).max() < 1e-4
    assert np.abs(vectors @ vectors.T - np.array(REFERENCE["cos"])).max() < 1e-4


def test_paraphrases_are_closer_than_unrelated_sentences(encoder):
    triples = [
        ("How do I reset my router?", "What's the way to restart the wifi box?",
         "My grandmother bakes bread on Sundays."),
        ("We adopted a puppy last week.", "Our family got a new dog recently.",
         "The invoice is due at the end of the month."),
        ("Which city do we live in now?", "We moved to Lisbon in March.",
         "Preheat the oven to 180 degrees."),
    ]
    for anchor, close, far in triples:
        a, c, f = encoder.encode([anchor, close, far])
        assert a @ c > a @ f + 0.15, (anchor, float(a @ c), float(a @ f))


def test_vectors_are_unit_length_and_independent_of_the_batch(encoder):
    texts = ["short", "a somewhat longer sentence about kayaks on the river " * 3]
    together = encoder.encode(texts)
    alone = np.vstack([encoder.encode([t]) for t in texts])
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert np.abs(together - alone).max() < 1e-5  # padding is masked out


def test_long_texts_are_split_into_bounded_chunks(encoder):
    long_text = " ".join(f"sentence number {i} talks about gardening." for i in range(400))
    vectors, owners = encoder.encode_chunks(["tiny", long_text])
    assert owners.count(0) == 1 and owners.count(1) == MAX_CHUNKS
    assert all(len(c) <= WINDOW for c in encoder.chunks(encoder.token_ids([long_text])[0]))
    assert vectors.shape == (1 + MAX_CHUNKS, encoder.dim)


def test_erf_is_accurate():
    xs = np.linspace(-4, 4, 801, dtype=np.float64)
    assert max(abs(erf(xs) - np.array([math.erf(x) for x in xs]))) < 2e-7


def test_safetensors_reader(tmp_path):
    weights = np.arange(6, dtype="<f4").reshape(2, 3)
    positions = np.array([[0, 1, 2]], dtype="<i8")
    header = {
        "__metadata__": {"format": "pt"},
        "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "p": {"dtype": "I64", "shape": [1, 3], "data_offsets": [24, 48]},
    }
    raw = json.dumps(header).encode()
    path = tmp_path / "t.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + weights.tobytes() + positions.tobytes())
    tensors = load_safetensors(path)
    assert np.array_equal(tensors["w"], weights) and np.array_equal(tensors["p"], positions)
    header["w"]["dtype"] = "BF16"
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + weights.tobytes() + positions.tobytes())
    with pytest.raises(ValueError, match="unsupported dtype BF16"):
        load_safetensors(path)


def test_int8_storage_keeps_cosines(encoder):
    vectors = encoder.encode(["alpha beta", "the cat sat on the mat", "quarterly revenue"])
    back = embed.dequantise(embed.quantise(vectors), encoder.dim)
    assert np.allclose(np.sum(back * vectors, axis=1), 1.0, atol=2e-3)
    assert all(len(b) == encoder.dim for b in embed.quantise(vectors))


def test_static_encoder_distils_only_the_tokens_it_sees_and_keeps_them(encoder, tmp_path):
    from core.search.static import StaticEncoder

    static = StaticEncoder(encoder, tmp_path)
    assert static.known.sum() == 3
    a, c, f = static.encode(["our new puppy chews shoes", "the dog we adopted bites slippers",
                             "quarterly tax return deadline"])
    assert a @ c > a @ f
    seen = int(static.known.sum())
    assert 3 < seen < 60
    static.save()
    again = StaticEncoder(encoder, tmp_path)
    assert int(again.known.sum()) == seen
    assert np.allclose(again.encode(["our new puppy chews shoes"])[0], a, atol=1e-2)


def test_erf_and_gelu_leave_their_input_alone():
    """Both compute in place on their own temporaries (a layer's activations are large)."""
    from core.search.encoder import gelu

    x = np.random.default_rng(3).standard_normal((64, 1536)).astype(np.float32) * 3
    before = x.copy()
    erf(x)
    gelu(x)
    assert np.array_equal(x, before)


def test_a_forward_pass_holds_at_most_the_token_budget(encoder, monkeypatch):
    """Batches are cut by padded tokens as well as by count: 40 full windows go through in
    passes of at most MAX_BATCH_TOKENS tokens, each sequence once, vectors as encoded alone."""
    from core.search.encoder import MAX_BATCH_TOKENS

    long_text = " ".join(f"word{i} about rivers and boats" for i in range(60))
    sequences = [encoder.chunks(ids)[0] for ids in encoder.token_ids([long_text] * 40)]
    sequences += [encoder.chunks(ids)[0] for ids in encoder.token_ids(["tiny", "a bit longer"])]
    passes = []
    forward = encoder._forward

    def counted(batch):
        passes.append(len(batch) * max(len(s) for s in batch))
        return forward(batch)

    monkeypatch.setattr(encoder, "_forward", counted)
    together = encoder.encode_ids(sequences, batch_size=32)
    assert max(passes) <= MAX_BATCH_TOKENS and len(passes) > 1
    monkeypatch.setattr(encoder, "_forward", forward)
    alone = np.vstack([encoder.encode_ids([s]) for s in sequences[-3:]])
    assert np.abs(together[-3:] - alone).max() < 1e-5
