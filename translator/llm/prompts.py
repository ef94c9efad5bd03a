"""prompts/*.j2 + a kernel's facts -> chat messages; the prompt version (prompts/VERSION) enters every cache key and artifact."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from pathlib import Path

import jinja2


def prompts_dir() -> Path:
    repo = Path(__file__).resolve().parents[2] / "prompts"
    if (repo / "translate.j2").exists():
        return repo
    return Path(str(resources.files("translator") / "prompts"))  # installed: packaged as translator/prompts


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(prompts_dir())), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False, autoescape=False)
    env.filters["fence"] = fence
    return env


def fence(text) -> str:
    """A Markdown code fence TEXT cannot close: longer than any run of backticks in it (a ``` in a kernel's
    docstring, in a compiler's message) -- CommonMark closes a fence only with at least as many."""
    longest = max((len(run) for run in re.findall(r"`+", str(text))), default=0)
    return "`" * max(3, longest + 1)


@lru_cache(maxsize=1)
def prompt_version() -> str:
    """Bumped whenever a prompt changes meaning; recorded with every request and in every written file."""
    return (prompts_dir() / "VERSION").read_text(encoding="utf-8").strip()


def _render(name: str, **context) -> str:
    return environment().get_template(name).render(**context).strip() + "\n"


def first_messages(facts: dict) -> list[dict]:
    return [{"role": "system", "content": _render("system.j2", helpers=facts["helpers"], tolerance=facts["tolerance"])},
            {"role": "user", "content": _render("translate.j2", **facts)}]


def repair_message(kind: str, detail, signature: str) -> dict:
    """kind: answer (no usable code) | allow-list (list of problems) | compile (trimmed compiler output) |
    mismatch ({case, problem, more})."""
    return {"role": "user", "content": _render("repair.j2", kind=kind, detail=detail, signature=signature)}
