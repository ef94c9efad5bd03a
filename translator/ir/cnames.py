"""Python names -> C identifiers that cannot collide with what the emitted translation unit already holds.

A user's name is kept unless C would read it as something else: a keyword, a macro (`INFINITY`), a name the
headers declare at global scope (`expf`, `llabs`, `index`), one the C++ standard reserves (`__x`, `_X`), one
of the few names the templates define (`n2c`, `n2c_launch`, `n2c_dynamic_smem`), or a name outside ASCII.
reserved_names.txt holds the first three kinds, read from the real headers by tools/reserved_names.py.

Every name is claimed from a NameTable: a scope's user names first, then every name the translator makes up
(`a_shape0`, `tw_arg`, `i_stop`), so a made-up name never equals a user's (a parameter called `a_shape0` makes
the extent `a_shape0_`), and no two claims in a scope ever coincide."""

from __future__ import annotations

import itertools
import re
import unicodedata
from functools import lru_cache
from importlib import resources

#: the names templates/module.cu.j2 defines around the translated functions
TEMPLATE_NAMES = frozenset({"n2c", "n2c_launch", "n2c_dynamic_smem"})


@lru_cache(maxsize=1)
def reserved() -> frozenset:
    text = (resources.files("translator.ir") / "reserved_names.txt").read_text(encoding="utf-8")
    return frozenset(line.strip() for line in text.splitlines()
                     if line.strip() and not line.startswith(("#", "[")))


def is_reserved(name: str) -> bool:
    """Whether C would not read `name` as a fresh identifier of the translation's own."""
    return (name in reserved() or name in TEMPLATE_NAMES or "__" in name
            or (name[:1] == "_" and name[1:2].isupper()) or not name.isascii() or not name.isidentifier())


def ascii_base(name: str) -> str:
    """A C spelling of a Python identifier (or a dotted name): NFKC (as Python reads it), each non-ASCII letter as uXXXX, runs of
    underscores as one (C++ reserves `__`), and a leading `_` behind a `v` (it reserves `_X`, and `_x` at global
    scope)."""
    name = unicodedata.normalize("NFKC", name).replace(".", "_")  # a module's attribute: geom.LIMITS
    out = "".join(ch if ch.isascii() and (ch.isalnum() or ch == "_") else f"u{ord(ch):04x}" for ch in name)
    out = re.sub("_{2,}", "_", out)
    return out if out and not out[0].isdigit() and out[0] != "_" else "v" + out


class NameTable:
    """The identifiers of one C scope. claim(name) returns `name` if it is free, else the first free one of
    `name_`, `name_2`, `name_3`, ...; claim_as(key, name) claims once per key and then returns the same name."""

    def __init__(self, taken=()):
        self.taken: set = set(taken)
        self.by_key: dict = {}

    def free(self, name: str) -> bool:
        return name not in self.taken and not is_reserved(name)

    def claim(self, preferred: str, *suffixes: str) -> str:
        """The first free spelling of `preferred` (with every `preferred + suffix` free too, and claimed)."""
        base = ascii_base(preferred)
        stem = base if base.endswith("_") else base + "_"
        candidates = itertools.chain([base, stem], (f"{stem}{k}" for k in itertools.count(2)))
        name = next(c for c in candidates if all(self.free(c + s) for s in ("",) + suffixes))
        self.taken.update(name + s for s in ("",) + suffixes)
        return name

    def claim_as(self, key, preferred: str) -> str:
        if key not in self.by_key:
            self.by_key[key] = self.claim(preferred)
        return self.by_key[key]
