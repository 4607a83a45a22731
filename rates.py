"""The tool the model may call, and the question that should make it call it."""


def get_exchange_rate(base: str, quote: str) -> float:
    """Look up how many units of one currency one unit of another buys.

    Args:
        base: ISO 4217 code of the currency you hold, such as "EUR".
        quote: ISO 4217 code of the currency you want, such as "JPY".
    """
    return 162.4  # fixed, so every run of the course prints the same numbers


QUESTION = [{"role": "user", "content": "How many yen is one euro?"}]
