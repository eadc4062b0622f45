"""The GGUF metadata reader behind the embedded model's pre-tokenizer rename, on files written
here in the GGUF layout (the real model is exercised in test_model_server.py)."""

import struct
from pathlib import Path

import pytest

from local_dev.gguf_meta import GGUFError, find_string, loadable_copy


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def write_gguf(path: Path, pre: str | None, *, version: int = 3) -> Path:
    kvs = [
        _string("general.architecture") + struct.pack("<I", 8) + _string("llama"),
        _string("llama.context_length") + struct.pack("<I", 4) + struct.pack("<I", 8192),
        _string("general.flag") + struct.pack("<I", 7) + b"\x01",
        # an array of strings and one of floats before the key, as a tokenizer's vocabulary is
        _string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 3)
        + _string("<|im_start|>") + _string("a") + _string("Ġb"),
        _string("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 2) + struct.pack("<ff", 0, 1),
    ]
    if pre is not None:
        kvs.append(_string("tokenizer.ggml.pre") + struct.pack("<I", 8) + _string(pre))
    kvs.append(_string("tokenizer.ggml.eos_token_id") + struct.pack("<I", 4) + struct.pack("<I", 2))
    header = b"GGUF" + struct.pack("<IQQ", version, 0, len(kvs))
    path.write_bytes(header + b"".join(kvs) + b"\x00" * 64)  # the tensor data would follow
    return path


def test_the_pre_tokenizer_is_found_past_arrays(tmp_path):
    model = write_gguf(tmp_path / "m.gguf", "smollm")
    offset, value = find_string(model, "tokenizer.ggml.pre")
    assert value == "smollm" and model.read_bytes()[offset:offset + 6] == b"smollm"
    assert find_string(model, "general.missing") is None


def test_a_copy_is_made_with_the_name_the_engine_knows_and_the_original_is_untouched(tmp_path):
    model = write_gguf(tmp_path / "m.gguf", "smollm")
    before = model.read_bytes()
    copy = loadable_copy(model, tmp_path / "cache")
    assert copy != model and model.read_bytes() == before
    assert find_string(copy, "tokenizer.ggml.pre")[1] == "refact"
    assert copy.read_bytes() == before.replace(b"smollm", b"refact")
    assert loadable_copy(model, tmp_path / "cache") == copy  # made once
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [copy.name]


@pytest.mark.parametrize("pre", ["gpt2", None])
def test_a_model_the_engine_already_reads_is_used_as_it_is(tmp_path, pre):
    model = write_gguf(tmp_path / "m.gguf", pre)
    assert loadable_copy(model, tmp_path / "cache") == model
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("damage", ["not-gguf", "truncated", "version", "huge-count"])
def test_an_unreadable_file_is_left_to_the_engine_to_refuse(tmp_path, damage):
    model = write_gguf(tmp_path / "m.gguf", "smollm")
    data = model.read_bytes()
    if damage == "not-gguf":
        data = b"GGML" + data[4:]
    elif damage == "truncated":
        data = data[:200]  # inside the vocabulary array
    elif damage == "version":
        data = data[:4] + struct.pack("<I", 99) + data[8:]
    else:
        data = data[:16] + struct.pack("<Q", 1 << 40) + data[24:]
    model.write_bytes(data)
    with pytest.raises(GGUFError):
        find_string(model, "tokenizer.ggml.pre")
    assert loadable_copy(model, tmp_path / "cache") == model
