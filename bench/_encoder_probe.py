"""Probe: would a stronger sentence encoder lift recall on the real chats? (bench only)

The chitchat recall bench (``bench/search_retrieval.py --set chitchat``) with the message and
query vectors swapped for precomputed ones, everything else of the ranking unchanged: the
vectors go through ``core.search.embed`` (``embed_messages``: int8 quantising, one blob per
chunk, ``message_vectors``) and the queries through ``embed.neighbours``, because a lookup
encoder stands in for the MiniLM one in ``embed``'s encoder cache. Nothing in ``core`` changes.

Steps (the encoders run apart so that torch never enters the project's virtualenv):

1. ``texts``: import the chats into ``--home``, run every question once with a recording encoder
   (random vectors, figures discarded) and write each chunk text and query text the ranking
   asks to embed.
2. ``minilm`` (project venv): those texts through Iris's own all-MiniLM-L6-v2 encoder; the
   check that the probe reproduces ``bench/search_retrieval.py``'s hybrid figures.
   ``stored`` (project venv): the same, from the MiniLM vectors a search_retrieval.py home
   already holds (no re-embedding), queries through Iris's encoder.
   ``mpnet`` (a scratch venv with torch + transformers, no ``core`` import): the same texts
   through all-mpnet-base-v2 (transformers' MPNetModel, mean pooling over real tokens, L2
   normalisation, as its sentence-transformers config says), cut into the same windows as
   Iris cuts MiniLM's (``--window``; 128 tokens as in ``core.search.encoder``).
3. ``rank``: store the vectors of a ``.npz`` in place of the MiniLM ones and print turn /
   session recall@1/5/10 per split (misses of dev / held-out only: the fresh set is blind).

Run (from the repository root):
    .venv/bin/python bench/_encoder_probe.py texts --home H --texts T.json
    .venv/bin/python bench/_encoder_probe.py minilm --texts T.json --out minilm.npz
    /tmp/mpnet-venv/bin/python bench/_encoder_probe.py mpnet --texts T.json \\
        --model DIR/all-mpnet-base-v2 --out mpnet.npz
    .venv/bin/python bench/_encoder_probe.py rank --home H --texts T.json --vectors V.npz
``--users cc-ben,...`` (minilm, mpnet, rank) embeds / asks about those bench users only (a
question searches only its own user's messages, so its result does not depend on the others);
``--reuse A.npz,B.npz`` keeps earlier runs' vectors of the same texts; ``--limit N`` times the
first N message texts and every query, writing nothing: run both encoders back to back for a
like-for-like speed comparison.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

WINDOW = 128   # as core.search.encoder: tokens per chunk, specials included
STRIDE = 112
MAX_CHUNKS = 8
LIMIT = 0      # --limit: time this many message texts only and write nothing
USERS: list[str] = []  # --users: embed these bench users' message texts only
REUSE: list[str] = []  # --reuse: .npz files whose vectors of the same texts are kept


def digest(texts: dict[str, Any]) -> str:
    kept = {"messages": texts["messages"], "queries": texts["queries"]}
    return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()[:16]


def timing(seconds: Sequence[float]) -> str:
    ordered = sorted(seconds)
    p50 = ordered[len(ordered) // 2] * 1000
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))] * 1000
    return f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, mean {statistics.fmean(seconds) * 1000:.1f} ms"


def save(out: Path, texts: dict[str, Any], chunks: np.ndarray, owners: Sequence[int],
         queries: np.ndarray, label: str) -> None:
    if LIMIT:
        return
    np.savez(out, chunks=chunks.astype(np.float32), owners=np.asarray(owners, dtype=np.int64),
             queries=queries.astype(np.float32), digest=np.array(digest(texts)),
             label=np.array(label))
    print(f"wrote {out}: {len(chunks)} chunk vectors, {len(queries)} query vectors, "
          f"dim {chunks.shape[1]}")


def encode_all(texts: dict[str, Any], chunked: Callable[[list[str]], Any],
               single: Callable[[str], np.ndarray], label: str
               ) -> tuple[np.ndarray, list[int], np.ndarray]:
    """Time the bulk embedding of the message texts (of the ``--users`` only, or the first
    ``--limit``) and each query on its own."""
    picked = list(range(len(texts["messages"])))
    if USERS:
        picked = sorted({i for user in USERS for i in texts["by_user"][user]})
    if LIMIT:  # a timing run, nothing saved
        picked = picked[:LIMIT]
    kept_chunks, kept_owners = [], []
    for old in REUSE:  # earlier runs' vectors of the same texts: computed once
        data = np.load(old)
        if str(data["digest"]) != digest(texts):
            raise SystemExit(f"{old} was not computed from these texts")
        done = set(data["owners"].tolist()) & set(picked)
        rows = [r for r, owner in enumerate(data["owners"].tolist()) if owner in done]
        kept_chunks.append(data["chunks"][rows])
        kept_owners.extend(data["owners"][rows].tolist())
        picked = [i for i in picked if i not in done]
        print(f"{len(done)} texts' vectors taken from {old}")
    single(texts["queries"][0])  # warm
    started = time.perf_counter()
    chunks, owned = chunked([texts["messages"][i] for i in picked])
    took = time.perf_counter() - started
    owners = [picked[i] for i in owned] + kept_owners
    n, computed = len(picked), len(chunks)
    chunks = np.concatenate([chunks, *kept_chunks])
    print(f"{label}: {n} message texts ({computed} chunks) in {took:.1f} s = "
          f"{took / n * 1000:.1f} ms per text ({n / took:.1f} texts/s), batches of 32",
          flush=True)
    latencies, vectors = [], []
    for query in texts["queries"]:
        t0 = time.perf_counter()
        vectors.append(single(query))
        latencies.append(time.perf_counter() - t0)
    print(f"{label}: query encoding, one at a time: {timing(latencies)} (n={len(latencies)})")
    return chunks, owners, np.stack(vectors)


# -- steps run in the project's virtualenv -------------------------------------------------

class RecordingEncoder:
    """Stands in for the encoder to learn which texts the ranking embeds (random vectors)."""

    def __init__(self, dim: int = 384):
        self.dim = dim
        self.rng = np.random.default_rng(0)
        self.messages: dict[str, None] = {}
        self.batch: dict[str, None] = {}  # since the last reset (one user's texts)
        self.queries: dict[str, None] = {}

    def _unit(self, n: int) -> np.ndarray:
        v = self.rng.standard_normal((n, self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def encode_chunks(self, texts: Sequence[str], batch_size: int = 32
                      ) -> tuple[np.ndarray, list[int]]:
        self.messages.update(dict.fromkeys(texts))
        self.batch.update(dict.fromkeys(texts))
        return self._unit(len(texts)), list(range(len(texts)))

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        self.queries.update(dict.fromkeys(texts))
        return self._unit(len(texts))


class LookupEncoder:
    """Precomputed vectors by text: every chunk of a message text, and each query text."""

    def __init__(self, texts: dict[str, list[str]], vectors: Path):
        data = np.load(vectors)
        if str(data["digest"]) != digest(texts):
            raise SystemExit(f"{vectors} was not computed from these texts")
        self.label = str(data["label"])
        chunks, owners, queries = data["chunks"], data["owners"], data["queries"]
        self.dim = int(chunks.shape[1])
        self.by_message: dict[str, list[np.ndarray]] = {}
        for row, owner in zip(chunks, owners.tolist(), strict=True):
            self.by_message.setdefault(texts["messages"][owner], []).append(row)
        self.by_query = dict(zip(texts["queries"], queries, strict=True))

    def encode_chunks(self, texts: Sequence[str], batch_size: int = 32
                      ) -> tuple[np.ndarray, list[int]]:
        rows: list[np.ndarray] = []
        owners: list[int] = []
        for i, text in enumerate(texts):
            found = self.by_message[text]  # KeyError: a text the texts step did not see
            rows.extend(found)
            owners.extend([i] * len(found))
        return np.stack(rows), owners

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        return np.stack([self.by_query[t] for t in texts])


def open_home(home: str) -> tuple[Any, dict[str, str], list[Any]]:
    """The chitchat bench's store in ``home`` with the chats imported, as search_retrieval does."""
    os.environ["IRIS_HOME"] = home
    os.environ.setdefault("IRIS_EMBED_CACHE", str(Path.home() / ".cache" / "iris-models"))
    from _chitchat import sessions
    from _common import ROOT  # noqa: F401  (puts the repository on sys.path)
    from _recall_dev_extra import DEV_EXTRA
    from _recall_eval import check_turns
    from _recall_fresh import FRESH
    from _recall_questions import QUESTIONS

    from core.config import load_settings
    from core.sessions.transfer import import_sessions, read_lines
    from core.store import open_store

    questions = [*QUESTIONS, *DEV_EXTRA, *FRESH]
    chats = sessions()
    check_turns(questions, chats)
    store = open_store(load_settings())
    report = import_sessions(store, read_lines([json.dumps(s) for s in chats]))
    print(f"{report.messages} messages imported ({report.skipped} sessions already there), "
          f"{len(questions)} questions")
    return store, report.users, questions


def embed_with(store: Any, users: dict[str, str], enc: Any, clear: bool = True) -> int:
    """Replace every stored vector with ``enc``'s (for ``users``; the others get none), through
    embed's own write path."""
    from core.search import embed

    embed._encoders[embed.FULL] = enc
    if clear:
        store.vectors.db.execute("DELETE FROM message_vectors")
    return sum(embed.backfill(store, uid, model=embed.FULL) for uid in users.values())


def step_texts(args: argparse.Namespace) -> None:
    from _recall_eval import evaluate

    store, users, questions = open_home(args.home)
    recorder = RecordingEncoder()
    owned: dict[str, list[str]] = {}
    for name, uid in users.items():
        recorder.batch = {}
        embed_with(store, {name: uid}, recorder, clear=not owned)
        owned[name] = list(recorder.batch)
    with contextlib.redirect_stdout(io.StringIO()):  # random vectors: figures mean nothing
        evaluate(store, users, questions, semantic=True, show_misses=0)
    store.vectors.db.execute("DELETE FROM message_vectors")
    texts = {"messages": list(recorder.messages), "queries": list(recorder.queries)}
    index = {t: i for i, t in enumerate(texts["messages"])}
    by_user = {name: [index[t] for t in found] for name, found in owned.items()}
    Path(args.texts).write_text(json.dumps({**texts, "by_user": by_user}))
    print(f"wrote {args.texts}: {len(texts['messages'])} message texts, "
          f"{len(texts['queries'])} query texts (digest {digest(texts)})")


def step_minilm(args: argparse.Namespace) -> None:
    from _common import ROOT  # noqa: F401

    from core.search.embed import cache_dir
    from core.search.encoder import BertEncoder

    texts = json.loads(Path(args.texts).read_text())
    enc = BertEncoder.load(cache_dir())
    chunks, owners, queries = encode_all(
        texts, lambda batch: enc.encode_chunks(batch, 32), lambda q: enc.encode([q])[0],
        "all-MiniLM-L6-v2 (core.search.encoder, numpy)")
    save(Path(args.out), texts, chunks, owners, queries, "all-MiniLM-L6-v2")


def step_stored(args: argparse.Namespace) -> None:
    """The MiniLM vectors a bench home already holds (written by search_retrieval.py), by
    text, plus query vectors from Iris's encoder: the probe's check without re-embedding."""
    from core.search import embed

    texts = json.loads(Path(args.texts).read_text())
    store, users, _ = open_home(args.home)
    by_text: dict[str, list[bytes]] = {}
    for uid in users.values():
        rows = store.vectors.rows(uid, embed.FULL)
        stored = store.search.messages(uid, sorted(set(rows.message_ids)))
        for mid, blob in zip(rows.message_ids, rows.blobs, strict=True):
            by_text.setdefault(embed.embedding_text(stored[mid]), []).append(blob)
    missing = [t for t in texts["messages"] if t not in by_text]
    if missing:
        raise SystemExit(f"{len(missing)} message texts have no stored vectors in {args.home}")
    chunks, owners = [], []
    for i, text in enumerate(texts["messages"]):
        blobs = list(dict.fromkeys(by_text[text]))  # a text said twice: its chunks once
        chunks.append(embed.dequantise(blobs, 384))
        owners.extend([i] * len(blobs))
    enc = embed.encoder(embed.FULL)
    queries = enc.encode(texts["queries"])
    save(Path(args.out), texts, np.concatenate(chunks), owners, queries,
         "all-MiniLM-L6-v2 (stored)")


def step_rank(args: argparse.Namespace) -> None:
    from _recall_eval import evaluate

    if args.split == "fresh":
        raise SystemExit("the fresh split is blind: its misses are not shown by this probe")
    texts = json.loads(Path(args.texts).read_text())
    store, users, questions = open_home(args.home)
    if USERS:
        users = {name: uid for name, uid in users.items() if name in USERS}
        questions = [q for q in questions if q.user in users]
        print(f"users {', '.join(users)} only: {len(questions)} questions")
    enc = LookupEncoder(texts, Path(args.vectors))
    started = time.perf_counter()
    count = embed_with(store, users, enc)
    print(f"stored {enc.label} vectors of {count} messages in "
          f"{time.perf_counter() - started:.1f} s (precomputed)")
    print(f"[hybrid, {enc.label} vectors]")
    evaluate(store, users, questions, semantic=True, show_misses=args.show_misses,
             split=args.split or "dev")


# -- the scratch venv's step (torch + transformers; no project import) -----------------------

def windows(ids: list[int], bos: int, eos: int, window: int, stride: int) -> list[list[int]]:
    """As ``BertEncoder.chunks``: <s> … </s> windows over the start of a text."""
    body = window - 2
    if len(ids) <= body:
        return [[bos, *ids, eos]]
    out = []
    for start in range(0, len(ids), stride):
        out.append([bos, *ids[start:start + body], eos])
        if start + body >= len(ids) or len(out) == MAX_CHUNKS:
            break
    return out


def step_mpnet(args: argparse.Namespace) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.set_num_threads(1)
    texts = json.loads(Path(args.texts).read_text())
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModel.from_pretrained(args.model).eval()
    print(f"{type(model).__name__}: {model.config.num_hidden_layers} layers, hidden "
          f"{model.config.hidden_size}, {sum(p.numel() for p in model.parameters()):,} "
          f"parameters; torch {torch.__version__}")
    bos, eos, pad = tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.pad_token_id
    stride = args.window - (WINDOW - STRIDE)

    @torch.inference_mode()
    def forward(sequences: list[list[int]]) -> np.ndarray:
        width = max(len(s) for s in sequences)
        ids = torch.full((len(sequences), width), pad, dtype=torch.long)
        mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for row, seq in enumerate(sequences):
            ids[row, :len(seq)] = torch.tensor(seq)
            mask[row, :len(seq)] = 1
        hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2, dim=1).numpy()

    def token_ids(batch: list[str]) -> list[list[int]]:
        return tokenizer(batch, add_special_tokens=False)["input_ids"]

    def chunked(batch: list[str]) -> tuple[np.ndarray, list[int]]:
        sequences, owners = [], []
        for i, ids in enumerate(token_ids(batch)):
            for chunk in windows(ids, bos, eos, args.window, stride):
                sequences.append(chunk)
                owners.append(i)
        out = np.zeros((len(sequences), model.config.hidden_size), dtype=np.float32)
        order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
        for start in range(0, len(order), 32):
            picked = order[start:start + 32]
            out[picked] = forward([sequences[i] for i in picked])
            if start % 3200 == 0:
                print(f"  {start}/{len(order)} sequences", flush=True)
        return out, owners

    lengths = [len(ids) for ids in token_ids(texts["messages"])]
    for user, found in texts["by_user"].items():
        print(f"  {user}: {len(found)} texts, {sum(lengths[i] for i in found)} tokens")
    print(f"message texts: {len(lengths)}, tokens p50 {sorted(lengths)[len(lengths) // 2]}, "
          f"max {max(lengths)}, longer than {args.window - 2}: "
          f"{sum(n > args.window - 2 for n in lengths)}")
    chunks, owners, queries = encode_all(
        texts, chunked, lambda q: forward(windows(token_ids([q])[0], bos, eos, args.window,
                                                  stride)[:1])[0],
        "all-mpnet-base-v2 (transformers MPNetModel, torch CPU, 1 thread)")
    save(Path(args.out), texts, chunks, owners, queries, "all-mpnet-base-v2")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    steps = parser.add_subparsers(dest="step", required=True)
    p = steps.add_parser("texts")
    p.add_argument("--home", required=True)
    p.add_argument("--texts", required=True)
    p = steps.add_parser("minilm")
    p.add_argument("--texts", required=True)
    p.add_argument("--out", required=True)
    p = steps.add_parser("stored")
    p.add_argument("--home", required=True)
    p.add_argument("--texts", required=True)
    p.add_argument("--out", required=True)
    p = steps.add_parser("mpnet")
    p.add_argument("--texts", required=True)
    p.add_argument("--model", required=True, help="the extracted all-mpnet-base-v2 folder")
    p.add_argument("--out", required=True)
    p.add_argument("--window", type=int, default=WINDOW)
    p = steps.add_parser("rank")
    p.add_argument("--home", required=True)
    p.add_argument("--texts", required=True)
    p.add_argument("--vectors", required=True)
    p.add_argument("--show-misses", type=int, default=0)
    p.add_argument("--split", choices=["dev", "held-out", "fresh"],
                   help="whose misses --show-misses prints (dev by default; never fresh)")
    for name in ("minilm", "mpnet"):
        steps.choices[name].add_argument("--limit", type=int, default=0,
                                         help="time this many message texts; write nothing")
    for name in ("minilm", "mpnet"):
        steps.choices[name].add_argument("--reuse", default="",
                                         help="keep these .npz files' vectors of the same texts")
    for name in ("minilm", "mpnet", "rank"):
        steps.choices[name].add_argument("--users", default="",
                                         help="only these bench users (cc-ana,...)")
    args = parser.parse_args()
    global LIMIT, USERS, REUSE
    LIMIT = getattr(args, "limit", 0)
    REUSE = [p for p in getattr(args, "reuse", "").split(",") if p]
    USERS = [u for u in getattr(args, "users", "").split(",") if u]
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    {"texts": step_texts, "minilm": step_minilm, "stored": step_stored, "mpnet": step_mpnet,
     "rank": step_rank}[args.step](args)


if __name__ == "__main__":
    main()
