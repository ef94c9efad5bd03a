"""CLI flags, environment and [tool.numba2cuda] -> LLMSettings: the LLM backend's configuration, in one documented precedence.

Precedence, first found wins: command-line flags > environment (OPENAI_BASE_URL, OPENAI_API_KEY,
NUMBA2CUDA_MODEL) > [tool.numba2cuda] in the pyproject.toml nearest to the kernel file (walking up
from its directory) > defaults. The API key comes only from the environment: a key in
pyproject.toml is refused (files get committed), and the key is never printed or stored.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from ..errors import UserError
from ..sandbox import SECRET_ENV

BACKENDS = ("rules", "llm", "auto")
PYPROJECT_KEYS = {  # [tool.numba2cuda] key -> (settings field, type)
    "backend": ("backend", str), "model": ("model", str), "base_url": ("base_url", str),
    "llm_cache": ("cache_dir", str), "llm_attempts": ("attempts", int), "llm_budget": ("budget", float),
    "llm_timeout": ("timeout", float), "llm_retries": ("retries", int), "llm_max_tokens": ("max_tokens", int),
}
SECRET_KEYS = ("api_key", "openai_api_key", "key", "token", "llm_api_key")

ENABLE_HINT = ("to translate it with an LLM, point numba2cuda at an OpenAI-compatible server: set "
               "OPENAI_BASE_URL (vLLM http://localhost:8000/v1, llama.cpp http://localhost:8080/v1, Ollama "
               "http://localhost:11434/v1) and NUMBA2CUDA_MODEL (or --base-url/--model, or model/base_url in "
               "[tool.numba2cuda] of pyproject.toml), plus OPENAI_API_KEY if the server needs one; "
               "see README 'LLM backend'")


@dataclass
class LLMSettings:
    backend: str = "auto"
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)  # never printed: repr hides it
    replay: bool = False
    cache_dir: Path | None = None
    attempts: int = 3
    budget: float = 600.0  # seconds for all LLM work of one run: requests, retries, builds, verification
    timeout: float = 60.0  # seconds per request
    retries: int = 2  # per request, for timeouts, refused connections, 429 and 5xx
    max_tokens: int = 8192
    refresh: bool = False  # ask again where the cache has an answer, and record the new one over it
    started: float | None = None  # time.monotonic() the budget counts from (the command's start); None: now
    sources: dict = field(default_factory=dict)  # setting -> where it came from, for messages

    @property
    def configured(self) -> bool:
        """Whether a model can be asked: a model name, and a server (or a replay cache) to ask."""
        if not self.model:
            return False
        return self.replay or bool(self.base_url or self.api_key)

    def where(self) -> str:
        """The server, for messages: host and path only (no credentials, no query)."""
        return redact_url(self.base_url) if self.base_url else "the OpenAI API (default base URL)"

    def parameters(self) -> dict:
        """Sampling parameters sent with every request; part of every cache key."""
        return {"temperature": 0, "seed": 0, "max_tokens": self.max_tokens}

    def not_configured(self) -> str:
        missing = [] if self.model else ["a model (--model, NUMBA2CUDA_MODEL or [tool.numba2cuda] model)"]
        if not (self.replay or self.base_url or self.api_key):
            missing.append("a server (--base-url, OPENAI_BASE_URL or [tool.numba2cuda] base_url)")
        return "the LLM backend is not configured: it needs " + " and ".join(missing)


_WITHHELD: dict = {}


@contextmanager
def api_key_withheld():
    """For one command: OPENAI_API_KEY moves out of os.environ, which every subprocess (g++, nvcc, the user's
    module under verify, the openai client's own `uname`) would inherit, to where settings_from finds it."""
    saved = {k: os.environ.pop(k) for k in SECRET_ENV if k in os.environ}
    outer = _WITHHELD.get("key")
    _WITHHELD["key"] = saved.get("OPENAI_API_KEY") or outer
    try:
        yield
    finally:
        _WITHHELD["key"] = outer
        os.environ.update(saved)


def redact_url(url: str) -> str:
    """scheme://host:port/path of a URL: user:password@ and ?query (where tokens hide) are dropped."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port:
            host += f":{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, "", ""))
    except ValueError:
        return "<unparseable base URL>"


def default_cache_dir() -> Path:
    env = os.environ.get("NUMBA2CUDA_CACHE")
    return (Path(env) if env else Path.home() / ".cache" / "numba2cuda") / "llm"


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above START (a file's directory)."""
    here = start.resolve()
    for folder in [here, *here.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def read_pyproject(path: Path) -> dict:
    """[tool.numba2cuda] of PATH as {settings field: value}; a key there is an error, not a setting."""
    try:
        import tomllib  # Python 3.11+
    except ImportError:
        if "[tool.numba2cuda]" in path.read_text(encoding="utf-8", errors="replace"):
            raise UserError(f"{path}: error: reading [tool.numba2cuda] needs Python 3.11 (tomllib)") from None
        return {}
    try:
        with open(path, "rb") as f:
            table = tomllib.load(f).get("tool", {}).get("numba2cuda", {})
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"{path}: error: cannot read [tool.numba2cuda]: {exc}") from None
    out = {}
    for key, value in table.items():
        if key.lower() in SECRET_KEYS:
            raise UserError(f"{path}: error: [tool.numba2cuda] {key}: API keys are not read from files\n"
                            "    hint: remove it (and rotate it if the file was shared); set OPENAI_API_KEY "
                            "in the environment instead")
        if key not in PYPROJECT_KEYS:
            continue  # other numba2cuda settings live in the same table
        name, kind = PYPROJECT_KEYS[key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise UserError(f"{path}: error: [tool.numba2cuda] {key} must be a {kind.__name__}, got {value!r}")
        if name == "cache_dir":
            value = str((path.parent / value).resolve())  # relative to the pyproject.toml, not the cwd
        out[name] = value
    return out


def settings_from(args, kernel_file) -> LLMSettings:
    """The settings of one run: flags (args, from add_llm_options) > environment > pyproject > defaults (those
    of LLMSettings; a setting missing from `sources` came from there)."""
    layers = []
    pyproject = find_pyproject(Path(kernel_file).parent) if kernel_file else None
    if pyproject is not None:
        layers.append((str(pyproject), read_pyproject(pyproject)))
    env = {"base_url": os.environ.get("OPENAI_BASE_URL"), "model": os.environ.get("NUMBA2CUDA_MODEL")}
    layers.append(("environment", {k: v for k, v in env.items() if v}))
    flags = {"backend": getattr(args, "backend", None), "model": getattr(args, "model", None),
             "base_url": getattr(args, "base_url", None), "cache_dir": getattr(args, "llm_cache", None),
             "attempts": getattr(args, "llm_attempts", None), "budget": getattr(args, "llm_budget", None),
             "timeout": getattr(args, "llm_timeout", None), "retries": getattr(args, "llm_retries", None)}
    layers.append(("command line", {k: v for k, v in flags.items() if v is not None}))
    settings = LLMSettings()
    for origin, values in layers:
        for name, value in values.items():
            setattr(settings, name, value)
            settings.sources[name] = origin
    settings.api_key = os.environ.get("OPENAI_API_KEY") or _WITHHELD.get("key") or None
    settings.replay = bool(getattr(args, "replay", False))
    settings.refresh = bool(getattr(args, "refresh", False))
    settings.started = getattr(args, "started", None)
    settings.cache_dir = Path(settings.cache_dir) if settings.cache_dir else default_cache_dir()
    _validate(settings)
    return settings


def _validate(s: LLMSettings) -> None:
    where = lambda name: s.sources.get(name, "default")  # noqa: E731
    if s.backend not in BACKENDS:
        raise UserError(f"numba2cuda: error: backend {s.backend!r} (from {where('backend')}) is not one of "
                        f"{', '.join(BACKENDS)}")
    for name, low in (("attempts", 1), ("retries", 0), ("max_tokens", 1)):
        if getattr(s, name) < low:
            raise UserError(f"numba2cuda: error: {name} (from {where(name)}) must be at least {low}")
    for name in ("budget", "timeout"):
        if not getattr(s, name) > 0:
            raise UserError(f"numba2cuda: error: {name} (from {where(name)}) must be a positive number of seconds")
    if s.replay and s.refresh:
        raise UserError("numba2cuda: error: --replay answers from the cache only and --refresh asks the model again: "
                        "choose one")
    if s.base_url and urlsplit(s.base_url).scheme not in ("http", "https"):
        raise UserError(f"numba2cuda: error: base URL {redact_url(s.base_url)!r} (from {where('base_url')}) "
                        "must start with http:// or https://")


def add_llm_options(p) -> None:
    """The LLM backend's flags, shared by translate, build, package and verify."""
    g = p.add_argument_group("LLM backend (for kernels the rules do not translate; see README 'LLM backend')")
    g.add_argument("--backend", choices=BACKENDS, default=None,
                   help="rules: the rules only; llm: every kernel through the model; auto (default): the rules, "
                        "and the model only for kernels the rules reject, saying so")
    g.add_argument("--model", metavar="NAME", help="the model name the server knows (default: NUMBA2CUDA_MODEL, "
                                                    "then [tool.numba2cuda] model)")
    g.add_argument("--base-url", metavar="URL", help="an OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 "
                                                      "(default: OPENAI_BASE_URL, then [tool.numba2cuda] base_url); "
                                                      "the key is read only from OPENAI_API_KEY")
    g.add_argument("--replay", action="store_true",
                   help="answer every request from the cache, with no network; a request not recorded is an error")
    g.add_argument("--refresh", action="store_true",
                   help="ask the model again even where the cache has an answer, and record the new answer over it")
    g.add_argument("--llm-cache", metavar="DIR", help="the request/response cache (default: $NUMBA2CUDA_CACHE/llm "
                                                       "or ~/.cache/numba2cuda/llm)")
    g.add_argument("--llm-attempts", type=int, metavar="N", help="answers tried per kernel: the first and its "
                                                                  "repairs (default 3)")
    g.add_argument("--llm-budget", type=float, metavar="SECONDS", help="time for the whole command when a model "
                                                                        "is asked: requests, compiles and "
                                                                        "verification included (default 600)")
    g.add_argument("--llm-timeout", type=float, metavar="SECONDS", help="per request (default 60)")
    g.add_argument("--llm-retries", type=int, metavar="N", help="retries per request after a timeout, a refused "
                                                                 "connection, 429 or 5xx (default 2)")
