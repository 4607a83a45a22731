"""The model families the course compares, by Hugging Face repo id.

Llama 3 and Gemma 3 are ungated copies whose templates equal the official,
gated ones. Gemma 4 stands apart because it is the one family that ships a
response template, so the course brings it in when it reaches parsing.

Every family the course uses (Llama 3.1 too) is declared once, in
``templatestudio/families.py``; this module gives the course its two names.
"""

from templatestudio.families import FAMILIES, GEMMA4

__all__ = ["FAMILIES", "GEMMA4"]
