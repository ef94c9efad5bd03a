"""LLM request -> recorded answer: a content-addressed cache (sha256 of the canonical request), written atomically.

A request is {model, messages, parameters, prompt_version}; its key is the sha256 of its canonical
JSON (sorted keys, no whitespace). Entries live at DIR/KEY[:2]/KEY.json and hold the request and
the answer, never the API key or the server's URL, so a cache recorded against one server replays
anywhere (`--replay`, CI). Writes go to a temporary file in the same directory and are renamed into
place: concurrent runs and killed runs never leave half an entry, and two runs that record the same
request write the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..atomic import write_atomically

CACHE_FORMAT = 1


def canonical_json(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(request: dict) -> str:
    return hashlib.sha256(canonical_json(request).encode("utf-8")).hexdigest()


class CacheEntryError(Exception):
    """An entry that exists but is not what its name promises (edited, truncated by hand, another format)."""


class LLMCache:
    def __init__(self, root: Path):
        self.root = Path(root)

    def path_for(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        """The recorded answer ({"content", "finish_reason", "model"}) of request KEY, or None."""
        path = self.path_for(key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise CacheEntryError(f"{path}: cannot read: {exc.strerror}") from None
        try:
            entry = json.loads(text)
            ok = (entry.get("format") == CACHE_FORMAT and entry.get("key") == key
                  and request_key(entry["request"]) == key and isinstance(entry["answer"]["content"], str))
        except (ValueError, KeyError, TypeError, AttributeError):
            ok = False
        if not ok:
            raise CacheEntryError(f"{path}: not a valid format-{CACHE_FORMAT} entry for its key")
        return entry["answer"]

    def put(self, key: str, request: dict, answer: dict) -> Path:
        path = self.path_for(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"format": CACHE_FORMAT, "key": key, "request": request, "answer": answer}
        text = json.dumps(entry, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
        write_atomically(path, text)
        return path
