"""os.environ -> the environment a child process gets: without the secrets numba2cuda is handed.

At the bottom of the pipeline because every stage that starts a process (the compilers, the user's
module under verify, a model's code under the LLM gate) must hand it the same scrubbed environment."""

from __future__ import annotations

import os

#: never in os.environ while a command runs (llm.config withholds them), and never in a child's environment
SECRET_ENV = ("OPENAI_API_KEY",)


def scrubbed_env(base=None) -> dict:
    """A copy of BASE (default os.environ) without the secret variables."""
    return {k: v for k, v in (os.environ if base is None else base).items() if k not in SECRET_ENV}
