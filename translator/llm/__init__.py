"""kernels the rules reject -> a model's CUDA C, accepted only through the build + verify gate: configuration
(config.py), the openai client with timeouts and a budget (client.py), versioned prompts (prompts.py),
the facts a prompt states (facts.py), the allow-list (check.py), the gate (gate.py), a content-addressed
replay cache (cache.py) and the backend choice with its repair loop (backend.py). cli.py holds
`translate` and `build`, which translate through that choice."""

from .backend import translate_module

__all__ = ["translate_module"]
