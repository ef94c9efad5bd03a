"""kernels the rules reject -> a model's CUDA C, accepted only through the build + verify gate: configuration
(config.py), the openai client with timeouts and a budget (client.py), versioned prompts (prompts.py),
the facts a prompt states (facts.py), the allow-list (check.py), the gate (gate.py), a content-addressed
replay cache (cache.py) and the backend choice with its repair loop (backend.py). cli.py holds
`translate` and `build`, which translate through that choice."""

__all__ = ["translate_module"]


def __getattr__(name):  # lazily: load() reads llm.config on every call and must not import the whole backend
    if name == "translate_module":
        from .backend import translate_module

        return translate_module
    raise AttributeError(name)
