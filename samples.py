"""Raw model output in each family's tool-call format, as written after the
generation prompt. Notebook 13 has Qwen3 write a real one instead. Samples of
every registered format live in its module: templatestudio.formats.FORMATS[name].samples.
The three calls below are taken from there, so each is written once."""

from templatestudio.formats import FORMATS


def _sample(format_name: str, source: str) -> str:
    """The text of the one sample of a registered format that names source (a KeyError or ValueError if not one)."""
    (text,) = [sample.text for sample in FORMATS[format_name].samples if sample.source == source]
    return text


QWEN3_CALL = _sample("hermes", "Qwen3-0.6B's template")

FENCED_CALL = _sample("fenced-json", "Qwen2.5-Coder habit")

GEMMA4_CALL = _sample("gemma4", "Gemma 4's template")

PLAIN_ANSWER = "One euro buys about 162.4 yen."
