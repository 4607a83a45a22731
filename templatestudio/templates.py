"""Loading a chat template: from a tokenizer, a .jinja file, a model folder, a config, or the Hub.

``ChatTemplate`` is a template's source plus the special tokens it is
rendered with; ``load_chat_templates`` turns a command-line target into
templates. Only ``tokenizer_config.json`` and ``chat_template.jinja`` are
ever downloaded: no vocabulary, no weights.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from templatestudio.calls import NoToolCallFormat

__all__ = [
    "ChatTemplate",
    "TemplateLoadError",
    "TemplateNotFound",
    "load_chat_templates",
    "looks_like_path",
    "read_text_file",
]


class TemplateLoadError(ValueError):
    """A file that holds no chat template this package can read; the message is one line saying why."""


class TemplateNotFound(FileNotFoundError):
    """A path that does not exist, or a folder with no template in it; the message is one line."""


# What the Hub accepts as a repo id: "name" or "namespace/name" of word
# characters, "." and "-". Anything else can only be meant as a path.
_REPO_ID = re.compile(r"[\w.-]{1,96}(?:/[\w.-]{1,96})?", re.ASCII)
_PATH_SUFFIXES = (".jinja", ".json", ".j2", ".txt")


def looks_like_path(target: str) -> bool:
    """Whether target can only be a local path: it is no Hub repo id, or it names a template file."""
    return (
        not _REPO_ID.fullmatch(target)
        or target.startswith(".")
        or ".." in target
        or target.lower().endswith(_PATH_SUFFIXES)
    )


def read_text_file(path: str | Path) -> str:
    """A template or config file's text; TemplateLoadError or TemplateNotFound saying why not.

    Refused, each in one line naming the file: a missing file, a dangling
    symbolic link, a pipe, socket or device, one that cannot be read
    (permissions, a directory, a loop of links), one holding NUL bytes (a
    binary file), one that is not UTF-8, and one that is empty or only
    whitespace.
    """
    path = Path(path)
    if path.exists() and not path.is_file() and not path.is_dir():
        # Reading a FIFO would wait for a writer that may never come.
        raise TemplateLoadError(f"{path}: not a regular file (a pipe, socket or device)")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if path.is_symlink():
            raise TemplateLoadError(f"{path}: a symbolic link to {path.readlink()}, which does not exist") from None
        raise TemplateNotFound(f"no such file or directory: {path}") from None
    except OSError as error:
        raise TemplateLoadError(f"{path}: cannot be read ({error.strerror or error})") from None
    if b"\0" in data:
        at = data.index(0)
        raise TemplateLoadError(f"{path}: holds NUL bytes at offset {at}: a binary file, not a template")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        where = f"byte 0x{data[error.start]:02x} at offset {error.start}"
        raise TemplateLoadError(f"{path}: not UTF-8 text ({where})") from None
    if not text.strip():
        raise TemplateLoadError(f"{path}: the file is empty" + (" but for whitespace" if text else ""))
    return text


def _read_config(path: Path) -> dict:
    text = read_text_file(path)
    try:
        config = json.loads(text)
    except ValueError as error:
        raise TemplateLoadError(f"{path}: not valid JSON ({error})") from None
    except RecursionError:  # json.loads recurses once per nested array or object
        raise TemplateLoadError(f"{path}: not valid JSON (nested too deeply to read)") from None
    if not isinstance(config, dict):
        raise TemplateLoadError(f"{path}: must hold a JSON object, got {type(config).__name__}")
    return config

_EMPTY_BOS_EOS = (("bos_token", ""), ("eos_token", ""))


@dataclass(frozen=True)
class ChatTemplate:
    """A chat template's source and what it is rendered with.

    special_tokens are the template variables a tokenizer passes along
    (bos_token, eos_token, ...). A bare .jinja file has none, and many
    templates fail on an undefined eos_token, so files and configs that do
    not name bos and eos render them as empty strings. Two ChatTemplates are
    equal when name, source and special tokens are, which is what probe
    results are cached on. response_template is the tokenizer's response
    template when it is one transformers can read (a non-empty dict); an
    empty or other value counts as none.
    """

    name: str
    source: str
    special_tokens: tuple[tuple[str, str], ...] = _EMPTY_BOS_EOS
    response_template: dict | None = field(default=None, compare=False, repr=False)

    def render(self, conversation: list[dict], *, tools=None, add_generation_prompt=False, **variables) -> str:
        """Render through transformers' own Jinja machinery (what apply_chat_template runs).

        variables are further template variables, as apply_chat_template's
        extra keyword arguments pass them (firefunction v2 needs ``functions``
        and ``datetime``); they override a special token of the same name.
        """
        from transformers.utils.chat_template_utils import render_jinja_template

        rendered, _ = render_jinja_template(
            conversations=[conversation],
            tools=tools,
            chat_template=self.source,
            add_generation_prompt=add_generation_prompt,
            **{**dict(self.special_tokens), **variables},
        )
        return rendered[0]

    @classmethod
    def from_tokenizer(cls, tokenizer) -> ChatTemplate:
        """The template apply_chat_template(..., tools=...) would use for tokenizer."""
        if tokenizer.chat_template is None:
            raise NoToolCallFormat(f"{tokenizer.name_or_path}: the tokenizer has no chat template")
        source = tokenizer.get_chat_template(tools=[{"type": "function", "function": {"name": "probe"}}])
        tokens = {k: v for k, v in tokenizer.special_tokens_map.items() if isinstance(v, str)}
        return cls(
            tokenizer.name_or_path,
            source,
            tuple(sorted(tokens.items())),
            _response_template(getattr(tokenizer, "response_template", None)),
        )

    @classmethod
    def from_file(cls, path: str | Path) -> ChatTemplate:
        """A bare Jinja file, rendered without special tokens."""
        path = Path(path)
        return cls(path.stem, read_text_file(path))

    @classmethod
    def from_config(cls, name: str, config: dict, jinja_source: str | None = None) -> ChatTemplate:
        """From a tokenizer_config.json dict, with an optional chat_template.jinja beside it.

        A config holding several named templates uses ``tool_use`` when
        present, else ``default``, as transformers does when tools are passed.
        """
        source = jinja_source if jinja_source is not None else config.get("chat_template")
        if isinstance(source, list):
            if not all(isinstance(item, dict) for item in source):
                raise TemplateLoadError(f"{name}: its chat_template list holds entries that are not "
                                        "{name, template} objects")
            named = {item.get("name"): item.get("template") for item in source}
            source = named.get("tool_use") or named.get("default")
            if source is None:
                raise TemplateLoadError(f"{name}: its chat_template list names {sorted(map(str, named))}, "
                                        "neither 'tool_use' nor 'default'")
        if source is None:
            raise NoToolCallFormat(f"{name}: no chat template in its tokenizer config")
        if not isinstance(source, str):
            kind = {"dict": "object", "int": "number", "float": "number", "bool": "boolean"}.get(
                type(source).__name__, type(source).__name__)
            raise TemplateLoadError(f"{name}: its chat_template is a JSON {kind}, not a template string or a list "
                                    "of named templates")
        if not source.strip():
            raise TemplateLoadError(f"{name}: its chat template is empty")
        tokens = dict(_EMPTY_BOS_EOS)
        for key in ("bos_token", "eos_token", "unk_token", "pad_token"):
            value = config.get(key)
            if isinstance(value, dict):  # an AddedToken as older configs store it
                value = value.get("content")
            if isinstance(value, str):
                tokens[key] = value
        return cls(name, source, tuple(sorted(tokens.items())), _response_template(config.get("response_template")))

    @classmethod
    def from_dir(cls, path: str | Path) -> ChatTemplate:
        """A model folder: tokenizer_config.json and/or chat_template.jinja."""
        path = Path(path)
        config_file, jinja_file = path / "tokenizer_config.json", path / "chat_template.jinja"
        config = _read_config(config_file) if config_file.exists() else {}
        jinja = read_text_file(jinja_file) if jinja_file.exists() else None
        # "." and "models/qwen/" are named by the folder itself, never by an empty name.
        return cls.from_config(path.name or path.resolve().name or str(path), config, jinja)

    @classmethod
    def from_hub(cls, repo_id: str) -> ChatTemplate:
        """Download only tokenizer_config.json (and chat_template.jinja if the repo has one).

        No vocabulary and no weights: a few kilobytes, then the Hugging
        Face cache serves them.
        """
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import EntryNotFoundError

        config_path = hf_hub_download(repo_id, "tokenizer_config.json")
        config = json.loads(Path(config_path).read_text(encoding="utf-8"))
        try:
            jinja = Path(hf_hub_download(repo_id, "chat_template.jinja")).read_text(encoding="utf-8")
        except EntryNotFoundError:
            jinja = None
        return cls.from_config(repo_id, config, jinja)


def _response_template(value) -> dict | None:
    """A response template as transformers reads one (a JSON schema: a non-empty dict), else None."""
    return value if isinstance(value, dict) and value else None


def chat_template_loads(target: str | Path) -> list[tuple[str | Path, Callable[[], list[ChatTemplate]]]]:
    """(what is loaded, how) for the templates a target names: one load per file of a folder of .jinja files.

    So one file of a folder that cannot be loaded (empty, binary, a
    sub-folder or a dangling link named ``*.jinja``) fails alone and the
    others still load; any other target is one ``load_chat_templates``.
    """
    path = Path(target)
    if str(target).strip() and path.is_dir() and not _is_model_folder(path):
        files = sorted(path.glob("*.jinja"))
        if files:
            return [(file, functools.partial(_file_templates, file)) for file in files]
    return [(target, functools.partial(load_chat_templates, target))]


def _file_templates(path: Path) -> list[ChatTemplate]:
    return [ChatTemplate.from_file(path)]


def _is_model_folder(path: Path) -> bool:
    return (path / "tokenizer_config.json").exists() or (path / "chat_template.jinja").exists()


def load_chat_templates(target: str | Path) -> list[ChatTemplate]:
    """The templates a target names.

    A target is a .jinja file, a model folder (tokenizer_config.json and/or
    chat_template.jinja), a tokenizer config file under any ``.json`` name,
    a folder of .jinja files, or a Hub repo id. A
    target that can only be a path (``looks_like_path``) and does not exist
    raises TemplateNotFound ("no such file or directory: X") instead of
    being asked of the Hub; unreadable files raise as ``read_text_file`` says.
    """
    if not str(target).strip():
        raise TemplateNotFound("an empty target names no file, folder or Hub repo (use . for this folder)")
    path = Path(target)
    if path.is_file():
        if path.name == "tokenizer_config.json":
            return [ChatTemplate.from_dir(path.parent)]
        if path.suffix == ".json":  # a tokenizer config saved under another name: the config alone
            return [ChatTemplate.from_config(path.stem, _read_config(path))]
        return [ChatTemplate.from_file(path)]
    if path.is_dir():
        if _is_model_folder(path):
            return [ChatTemplate.from_dir(path)]
        templates = [ChatTemplate.from_file(file) for file in sorted(path.glob("*.jinja"))]
        if not templates:
            raise TemplateNotFound(f"{target}: no tokenizer_config.json or .jinja files in this folder")
        return templates
    if path.is_symlink() or path.exists():  # a dangling or looping link, a pipe: read_text_file says which
        return [ChatTemplate.from_file(path)]
    if isinstance(target, Path) or looks_like_path(str(target)):
        raise TemplateNotFound(f"no such file or directory: {target}")
    return [ChatTemplate.from_hub(str(target))]


