"""Read and adjust one string in a GGUF file's metadata, without loading the model.

The prebuilt engine (gpt4all) bundles a llama.cpp from before SmolLM2 and refuses the model's
pre-tokenizer name "smollm". llama.cpp splits text for "smollm" exactly as for "refact" (the same
digit-then-GPT-2 expressions), and the two names have the same length, so a copy of the file with
the name replaced loads and tokenizes the same. The original file is never changed.

GGUF layout (version 2 and 3): magic ``GGUF``, u32 version, u64 tensor count, u64 key/value count,
then each key/value: u64 length + key bytes, u32 type, value. All little-endian.
"""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path
from typing import BinaryIO

PRE_TOKENIZER_KEY = "tokenizer.ggml.pre"
# Names the bundled llama.cpp does not know, and the older name it splits text the same way for.
COMPATIBLE_PRE_TOKENIZERS = {"smollm": "refact"}

_STRING, _ARRAY = 8, 9
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}  # type -> bytes
_MAX_KEYS = 1 << 16
_MAX_STRING = 1 << 24


class GGUFError(ValueError):
    """Not a GGUF file this reader understands."""


def _u32(f: BinaryIO) -> int:
    data = f.read(4)
    if len(data) != 4:
        raise GGUFError("the file ends inside its metadata")
    return int(struct.unpack("<I", data)[0])


def _u64(f: BinaryIO) -> int:
    data = f.read(8)
    if len(data) != 8:
        raise GGUFError("the file ends inside its metadata")
    return int(struct.unpack("<Q", data)[0])


def _string(f: BinaryIO) -> bytes:
    length = _u64(f)
    if length > _MAX_STRING:
        raise GGUFError(f"a metadata string of {length} bytes")
    data = f.read(length)
    if len(data) != length:
        raise GGUFError("the file ends inside its metadata")
    return data


def _skip(f: BinaryIO, kind: int) -> None:
    if kind in _FIXED:
        f.seek(_FIXED[kind], os.SEEK_CUR)
    elif kind == _STRING:
        f.seek(_u64(f), os.SEEK_CUR)
    elif kind == _ARRAY:
        inner, count = _u32(f), _u64(f)
        if inner in _FIXED:
            f.seek(_FIXED[inner] * count, os.SEEK_CUR)
        else:
            for _ in range(count):
                _skip(f, inner)
    else:
        raise GGUFError(f"unknown metadata type {kind}")


def find_string(path: Path, key: str) -> tuple[int, str] | None:
    """(offset of the value's bytes, value) of a string ``key``; None when absent."""
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise GGUFError(f"{path.name} is not a GGUF file")
        if _u32(f) not in (2, 3):
            raise GGUFError(f"{path.name}: unsupported GGUF version")
        _u64(f)  # tensors
        count = _u64(f)
        if count > _MAX_KEYS:
            raise GGUFError(f"{path.name}: {count} metadata keys")
        for _ in range(count):
            name, kind = _string(f).decode("utf-8", "replace"), _u32(f)
            if name == key and kind == _STRING:
                length = _u64(f)
                offset = f.tell()
                return offset, f.read(length).decode("utf-8", "replace")
            _skip(f, kind)
    return None


def loadable_copy(model: Path, cache: Path) -> Path:
    """``model`` itself when its pre-tokenizer needs no renaming (or it cannot be read: the
    engine then says what is wrong), else a copy in ``cache`` with the older, same-length name
    the engine knows. The copy is written once, under a temporary name, then renamed."""
    try:
        found = find_string(model, PRE_TOKENIZER_KEY)
    except (GGUFError, OSError):
        return model
    if found is None or found[1] not in COMPATIBLE_PRE_TOKENIZERS:
        return model
    offset, name = found
    replacement = COMPATIBLE_PRE_TOKENIZERS[name].encode()
    if len(replacement) != len(name.encode()):  # a different length would shift every offset
        return model
    stat = model.stat()
    target = cache / f"{model.stem}.{stat.st_size}.{int(stat.st_mtime)}.gguf"
    if target.exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.partial")
    shutil.copyfile(model, partial)
    with partial.open("r+b") as f:
        f.seek(offset)
        f.write(replacement)
    os.replace(partial, target)
    return target
