"""text that may hold the API key (an answer from a server that echoes it, an error message) -> the same text without it.

Everything a model sends is redacted before anything is written or kept: the cache entry, the .cu,
the build directories, the log, the repair conversation. The key is found verbatim, and also cut into
pieces: any run of WINDOW or more of its characters (a key split across lines, half of it in a comment)
and the key with whitespace or line splices between its characters.
"""

from __future__ import annotations

import re

PLACEHOLDER = "<OPENAI_API_KEY>"
WINDOW = 12  # characters of the key that are redacted wherever they appear together
MIN_SECRET = 4  # a shorter "key" (e.g. "x" for a local server) would redact ordinary text


def redact(text: str, secret: str | None) -> str:
    if not secret or len(secret) < MIN_SECRET or not text:
        return text
    spaced = r"(?:\\?[ \t]*\r?\n[ \t]*|[ \t]+)?".join(re.escape(c) for c in secret)
    text = re.sub(spaced, PLACEHOLDER, text)
    if len(secret) > WINDOW:
        windows = {secret[k:k + WINDOW] for k in range(len(secret) - WINDOW + 1)}
        pattern = re.compile("|".join(re.escape(w) for w in sorted(windows)))
        text = _redact_runs(text, pattern)
    return text


def _redact_runs(text: str, pattern: re.Pattern) -> str:
    """Every maximal stretch covered by overlapping matches of PATTERN, replaced once."""
    spans, pos = [], 0
    while True:
        m = pattern.search(text, pos)
        if not m:
            break
        start, end = m.start(), m.end()
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
        pos = start + 1
    for start, end in reversed(spans):
        text = text[:start] + PLACEHOLDER + text[end:]
    return text


def contains(text: str, secret: str | None) -> bool:
    return bool(secret) and redact(text, secret) != text
