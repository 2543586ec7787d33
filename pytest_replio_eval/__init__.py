"""pytest-replio-eval: measure how well a language model uses tools."""
