"""The tool the model may call, and the question that should make it call it.

Both are defined inside the package (``templatestudio/rates.py``), because
``python -m templatestudio table`` needs them where the course files are not
installed; this module gives the course its names for them.
"""

from templatestudio.rates import QUESTION, get_exchange_rate

__all__ = ["QUESTION", "get_exchange_rate"]
