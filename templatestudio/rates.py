"""The course's tool and the question that should make a model call it.

The family table (notebook 12, ``python -m templatestudio table``) renders
this question with this tool through every family's template, so it lives
inside the package; the course's top-level ``rates.py`` re-exports both
under the same names.
"""

__all__ = ["QUESTION", "get_exchange_rate"]


def get_exchange_rate(base: str, quote: str) -> float:
    """Look up how many units of one currency one unit of another buys.

    Args:
        base: ISO 4217 code of the currency you hold, such as "EUR".
        quote: ISO 4217 code of the currency you want, such as "JPY".
    """
    return 162.4  # fixed, so every run of the course prints the same numbers


QUESTION = [{"role": "user", "content": "How many yen is one euro?"}]
