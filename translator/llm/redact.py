"""text that may hold the API key (an answer from a server that echoes it, an error message) -> the same text without it.

Everything a model sends is redacted before anything is written or kept: the cache entry, the .cu,
the build directories, the log, the repair conversation. The key is found verbatim and also cut into
pieces or spread out: any run of WINDOW of its characters, once whitespace and backslashes (line splices)
are taken out of the text, is replaced, together with what it was spread over. The common case, no key
at all, costs a few searches at C speed, whatever the answer's size.
"""

from __future__ import annotations

PLACEHOLDER = "<OPENAI_API_KEY>"
WINDOW = 12  # characters of the key that are redacted wherever they appear together
MIN_SECRET = 4  # a shorter "key" (e.g. "x" for a local server) would redact ordinary text
_DROPPED = " \t\n\r\f\v\\"
_SQUEEZE = str.maketrans("", "", _DROPPED)


def redact(text: str, secret: str | None) -> str:
    if not secret or len(secret) < MIN_SECRET or not text:
        return text
    pieces = {secret} if len(secret) <= WINDOW else {secret[k:k + WINDOW] for k in range(len(secret) - WINDOW + 1)}
    squeezed = text.translate(_SQUEEZE)
    if not any(piece in squeezed for piece in pieces):
        return text
    import numpy as np

    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    keep = np.flatnonzero(~np.isin(codes, [ord(c) for c in _DROPPED]))  # squeezed index -> index in TEXT
    spans = []
    for piece in pieces:
        at = squeezed.find(piece)
        while at >= 0:
            spans.append((int(keep[at]), int(keep[at + len(piece) - 1]) + 1))
            at = squeezed.find(piece, at + 1)
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, last = [], 0
    for start, end in merged:
        out += [text[last:start], PLACEHOLDER]
        last = end
    return "".join(out + [text[last:]])


def contains(text: str, secret: str | None) -> bool:
    return bool(secret) and redact(text, secret) != text
