"""chat messages -> a model's answer over the openai client: explicit per-request timeout, retries inside one time budget, errors that never carry the key.

The openai client's own retries are switched off (max_retries=0, set explicitly) and done here
instead, `retries` times per request (2 by default), because the client would honour a server's
Retry-After of up to two minutes whatever time is left: here a 429 is retried only when its wait
fits in the budget. Each request also runs under a watchdog thread, so a server that trickles bytes
(which resets the socket's read timeout) still cannot hold the run past the request's deadline.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

from ..errors import UserError
from .config import LLMSettings
from .redact import redact

BACKOFF = (0.5, 1.0, 2.0, 4.0)  # seconds before retry 1, 2, 3, 4...


class ServiceError(Exception):
    """The server could not give an answer (unreachable, too slow, refusing); `text` is safe to print."""

    def __init__(self, text: str, hint: str = ""):
        self.text = text
        self.hint = hint
        super().__init__(text)


RESERVE = 3.0  # seconds of the budget kept for what follows the last child: its kill, the report, the interpreter's exit


@dataclass
class Budget:
    """Seconds for all LLM work of one run, counted from START (time.monotonic(); default: now; the CLI passes
    the process's start, so --llm-budget bounds the whole command)."""
    seconds: float
    start: float | None = None

    def __post_init__(self):
        if self.start is None:
            self.start = time.monotonic()

    def remaining(self) -> float:
        return self.seconds - (time.monotonic() - self.start)

    def left(self) -> float:
        """Seconds a child (a request, a compile, a verification) may take: what remains less the RESERVE."""
        return self.remaining() - RESERVE


class BudgetSpent(BaseException):
    """The end of --llm-budget reached inside numba2cuda's own work (raised by hard_deadline's alarm). A
    BaseException, like KeyboardInterrupt: no `except Exception` on the way may swallow it."""


@contextmanager
def hard_deadline(budget: Budget, margin: float = 2.0):
    """Raise BudgetSpent in this (main) thread MARGIN seconds before the budget ends, wherever it is: the children
    are bounded by their own timeouts, this bounds the parent's own work (and a machine too loaded to keep to
    the plan). Elsewhere than the main thread of a POSIX process, it does nothing."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return
    left = budget.remaining() - margin
    if left <= 0:
        raise BudgetSpent()

    def on_alarm(signum, frame):
        raise BudgetSpent()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, left)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def process_started() -> float:
    """time.monotonic() when this process started (Linux: /proc/self/stat; elsewhere: now)."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError, AttributeError):
        return time.monotonic()
    return time.monotonic() - max(age, 0.0)


def retry_after_seconds(headers) -> float | None:
    """Retry-After (or retry-after-ms) of a response, in seconds; None when absent or unreadable."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class _Deadline(Exception):
    pass


def _call_with_deadline(fn, seconds: float):
    """fn() in a daemon thread; _Deadline if it has not returned after SECONDS (the thread is abandoned)."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True, name="numba2cuda-llm-request")
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise _Deadline()
    if "error" in box:
        raise box["error"]
    return box["value"]


class ChatClient:
    """One OpenAI-compatible endpoint; complete() returns {"content", "finish_reason", "model"}."""

    def __init__(self, settings: LLMSettings):
        try:
            import openai
        except ImportError:
            raise UserError("numba2cuda: error: the LLM backend needs the openai package\n"
                            "    hint: pip install 'numba2cuda[llm]' (openai==3.57.0)") from None
        self.openai = openai
        self.settings = settings
        # A local server (vLLM, llama.cpp, Ollama) needs no key, but the client insists on one.
        self.client = openai.OpenAI(base_url=settings.base_url or None, api_key=settings.api_key or "no-key",
                                    timeout=settings.timeout, max_retries=0)

    def complete(self, model: str, messages: list, parameters: dict, budget: Budget) -> dict:
        last = None
        for retry in range(self.settings.retries + 1):
            left = budget.left()
            if left <= 0:
                raise ServiceError(f"the time budget of {self.settings.budget:g} s is spent"
                                   + (f" (last problem: {last.text})" if last else ""),
                                   "raise it with --llm-budget SECONDS")
            try:
                return self._once(model, messages, parameters, min(self.settings.timeout, left), left)
            except ServiceError as exc:
                last = exc
                asked = getattr(exc, "retry_after", None)
                if not getattr(exc, "retryable", False) or retry == self.settings.retries:
                    break
                wait = BACKOFF[min(retry, len(BACKOFF) - 1)] if asked is None else asked
                if wait >= budget.left():
                    left = max(budget.left(), 0)
                    exc.text += (f"; the server asks to wait {asked:g} s, more than the {left:.0f} s left of the "
                                 "time budget" if asked is not None else
                                 f"; the time budget of {self.settings.budget:g} s is spent")
                    exc.hint = "raise it with --llm-budget SECONDS" if asked is None else exc.hint
                    break
                time.sleep(wait)
        tries = retry + 1  # retry never passes self.settings.retries
        raise ServiceError(f"{last.text} ({tries} request{'s' * (tries != 1)})", last.hint)

    def _once(self, model, messages, parameters, timeout: float, hard: float) -> dict:
        """One request: TIMEOUT for the client, and a watchdog that never lets it outlast HARD seconds."""
        openai = self.openai
        key = self.settings.api_key
        where = self.settings.where()
        client = self.client.with_options(timeout=timeout)  # max_retries=0 carries over from __init__
        call = lambda: client.chat.completions.create(model=model, messages=messages, **parameters)  # noqa: E731
        try:
            response = _call_with_deadline(call, min(timeout + max(1.0, 0.1 * timeout), hard))
        except (_Deadline, openai.APITimeoutError):
            raise _retryable(f"no answer from {where} within {timeout:g} s", "raise --llm-timeout, or check that "
                             "the server is not overloaded") from None
        except openai.APIConnectionError as exc:
            cause = redact(str(exc.__cause__ or exc), key)
            raise _retryable(f"cannot connect to {where}: {cause}", "is the server running, and is OPENAI_BASE_URL "
                             "(or --base-url) right? vLLM serves http://HOST:8000/v1, llama.cpp :8080/v1, "
                             "Ollama :11434/v1") from None
        except openai.RateLimitError as exc:
            err = _retryable(f"{where} is rate limiting (HTTP 429)", "wait, or lower the request rate")
            err.retry_after = retry_after_seconds(exc.response.headers)
            raise err from None
        except openai.AuthenticationError:
            raise ServiceError(f"{where} refused the API key (HTTP 401)",
                               "set OPENAI_API_KEY to a key this server accepts") from None
        except openai.NotFoundError:
            raise ServiceError(f"{where} has no model {model!r} or no chat-completions endpoint (HTTP 404)",
                               "check --model / NUMBA2CUDA_MODEL and that the base URL ends in /v1") from None
        except openai.APIStatusError as exc:
            detail = redact(_short(exc.message), key)
            if exc.status_code >= 500:
                raise _retryable(f"{where} failed with HTTP {exc.status_code}: {detail}", "the server's logs say why") \
                    from None
            raise ServiceError(f"{where} rejected the request with HTTP {exc.status_code}: {detail}") from None
        except (openai.OpenAIError, ValueError, TypeError) as exc:
            raise ServiceError(f"{where} sent something that is not a chat completion: "
                               f"{redact(_short(str(exc)), key)}") from None
        return _answer(response)


def _retryable(text: str, hint: str) -> ServiceError:
    err = ServiceError(text, hint)
    err.retryable = True
    return err


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


def _answer(response) -> dict:
    """The first choice's text; an answer with no choices or no text is an empty answer, not a crash."""
    choices = getattr(response, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    content = getattr(message, "content", None) if message is not None else None
    return {"content": content if isinstance(content, str) else "",
            "finish_reason": str(getattr(choices[0], "finish_reason", "") or "") if choices else "no choices",
            "model": str(getattr(response, "model", "") or "")}
