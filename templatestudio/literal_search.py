"""What a reading machine searches its text for: the literals that may open a call, and their commitments.

``watch_tables.tables`` builds, once per format and guard, one regex that
finds the next literal that may open a call where it stands
(``literal_search``) and, for each markup literal, the pattern that makes
it a malformed call's opening even where no opener matches
(``commitment``). Both are derived from the formats' openers and declared
wire shapes; nothing here is per format.

Not handled here: the decision at a literal (``openings.Opening``).
"""

from __future__ import annotations

import regex

from templatestudio.wire.base import MARKUP, Format, Opener

Pair = tuple[Format, Opener]

# The characters probed after a literal (``may_follow``); any other may always follow.
_PROBED = "".join(map(chr, range(128)))

# Held text up to this length is decided by the regex first (see openings.Opening.decide,
# and Tables.refuses, which looks as far).
REGEX_FIRST_LOOK = 512
# How far past a literal its commitment looks for the format's own markup (Opening._committed, and refuses).
COMMIT_LOOK = REGEX_FIRST_LOOK


def may_follow(pairs: list[Pair]) -> str | None:
    """The ASCII characters after the literal with which one of its openers may still match; None if every one.

    Probed with each opener's own pattern, so it says no more than the
    pattern: a literal followed by any other ASCII character is prose, as
    ``Opening.decide`` would find it.
    """
    literal = pairs[0][1].literal
    allowed = [char for char in _PROBED
               if any(opener.compiled.match(literal + char, partial=True) is not None for _, opener in pairs)]
    return None if len(allowed) == len(_PROBED) else "".join(allowed)


def literal_search(anywhere: dict[str, list[Pair]], literals: list[str], committing: set[str],
                   inner_starts: dict[str, int]) -> regex.Pattern:
    """Finds, longest literal first, a literal that may open a call where it stands.

    A literal followed by a character none of its openers accepts is
    passed over whole inside the search (``(*SKIP)``), as the machine would
    emit it as text and go on after it (only as far as ``inner_start``,
    where another literal may start inside it; ``inner_starts`` holds that
    offset per literal, from ``inner_start``): a flood of ``{`` or ``[`` that no
    opener continues costs one search, not one decision per character.
    A literal at the end of the buffer is always found (more may come), and
    so is one with a commitment (``commitment``), whatever follows it. The
    literals are spelled as a trie, so that at each position the search
    follows one path of characters instead of trying every literal.
    """
    trie: dict = {}
    for literal in literals:
        node = trie
        for char in literal:
            node = node.setdefault(char, {})
        follow = None if literal in committing else may_follow(anywhere[literal])
        if follow is None:
            node[""] = ""
        else:
            viable = "".join(map(regex.escape, follow))
            # Passed over whole, unless a literal may start inside it (then the search tries the next
            # positions as it would after any failure, and finds [TOOL_CALLS] in functools[TOOL_CALLS]).
            skip = "(*SKIP)" if inner_starts[literal] == len(literal) else ""
            node[""] = f"(?=[{viable}\\x80-\\U0010ffff]|\\Z)|{skip}(*FAIL)"

    def spelled(node: dict) -> str:
        # The longer literals (children) first, then the one ending here.
        parts = [regex.escape(char) + spelled(child) for char, child in node.items() if char]
        if "" in node:
            parts.append(node[""])
        return parts[0] if len(parts) == 1 and "" not in node else f"(?:{'|'.join(parts)})"

    firsts = regex.escape("".join(sorted(trie)))
    # The class in front lets the search skip to a possible first character at C speed.
    return regex.compile(f"(?=[{firsts}]){spelled(trie)}")


def inner_start(literal: str, literals: list[str]) -> int:
    """The first offset inside literal (past its first character) where one of literals may start, else its length.

    A literal may start there when the rest of literal from there is the
    start of one (``functools[`` and ``[TOOL_CALLS]``) or holds one whole.
    Text settled past such an offset would hide a call there: the search
    (``literal_search``), the machine's prose step and ``Tables.refused_run``
    settle a literal found prose only this far.
    """
    for offset in range(1, len(literal)):
        rest = literal[offset:]
        if any(other.startswith(rest) or rest.startswith(other) for other in literals):
            return offset
    return len(literal)


def _damaged(markup: str) -> str:
    """A pattern for markup as written or damaged the ways a model damages it: spaced, re-cased, re-quoted.

    A space may stand before any of its characters, a space in it may be
    several, its letters match in either case and a quote matches either
    quote. ``<arg _key>``, ``<INVOKE NAME="``, ``<invoke name='`` after a
    call's marker are still that call's markup: the call is malformed,
    not prose.
    """
    parts = []
    for char in markup:
        if char.isspace():
            parts.append(r"\s+")
        elif char in "\"'":
            parts.append("[\"']")
        else:
            parts.append(regex.escape(char))
    return "(?i:" + " ?".join(parts) + ")"


def commitment(literal: str, pairs: list[Pair]) -> regex.Pattern | None:
    """What makes a markup literal a call's opening even where no opener matches it; None for none.

    Before the literal again or one of its formats' closers, the literal is
    followed by one of these (each piece of markup as written or damaged
    the ways ``_damaged`` names):

    - whitespace, at most one word (the call's name), whitespace, then one
      of the markup literals those formats write inside a call
      (``WireShape.inner_literals``) or another of their call markers:
      ``[TOOL_CALLS] f[ARGS]{}`` with its stray space, ``<tool_call>``
      holding a malformed ``<arg_key>``, ``<tool_calls><tool _call>``;
    - the same with a second word that touches that markup (an opening tag
      dropped: ``<tool_call>NAME\ncity</arg_key>``);
    - a name touching the literal (or spaced from it and closed by ``>``),
      then one of the formats' closers: ``<function=ping</function>``;
    - a name touching the literal, an object that opens with a key (quoted
      or not) and a colon, and the call's closer, all within the look
      (``<function=f{"a": 1}</function>``, ``<|tool_call>f{a:1}<tool_call|>``);
    - a key of the formats' JSON call object, quoted, then the object's brace
      or a colon (``<tool_calls>"name"{[: …``: its opening moved);
    - the name's prefix where it is not markup, damaged and touching the
      literal, then a name (``<|tool_call>CA LL:f``);
    - a name, then the name's closer where it is not markup
      (``<|open|>tools<|sep|>f" index="1"``: the call's opening tag dropped).

    A literal mentioned in prose (``wrap each call in <tool_call> and
    </tool_call> tags``, ``GLM writes <tool_call>NAME then <arg_key>
    pairs``, a regex naming the tags, ``<function=name>{...}</function>``)
    has more words, or none of that markup, after it and stays prose.
    Inner literals shorter than three characters (``>``, ``">``) are too
    common to count, and so is a format's framing (a message boundary
    follows prose too). A stream releases such prose up to two words
    later than it would otherwise. Literals without markup (``{``, ``[``,
    ``functools``) commit to nothing.
    """
    if MARKUP.search(literal) is None:
        return None
    formats = list(dict.fromkeys(fmt for fmt, _ in pairs if fmt.wire is not None))
    # The inner markup, and the formats' other call markers (a section's marker, then a damaged
    # call marker), not their framing (a message boundary follows prose as well).
    others = (opener.literal for fmt in formats for opener in fmt.openers
              if opener.literal != literal and opener.literal not in fmt.wire.framing
              and MARKUP.search(opener.literal) is not None)
    markup = [*(item for fmt in formats for item in fmt.wire.inner_literals), *others]
    inner = list(dict.fromkeys(item for item in markup if len(item) >= 3))
    # Not after a framing literal (a message boundary: harmony's <|return|>): a name and a
    # closer after it are no call's opening, and a commitment would make every one of a
    # flood of them a decision.
    framing = all(literal in fmt.wire.framing for fmt in formats)
    closers = [] if framing else sorted({closer for fmt in formats for closer in fmt.closers if len(closer) >= 3
                                         and MARKUP.search(closer) is not None}, key=len, reverse=True)
    # A call object's JSON keys (``"name"``, ``"tool_call_id"``), for formats whose call is one.
    keys = list(dict.fromkeys(key for fmt in formats for key in fmt.wire.call_keys))
    # The name's prefix, where it is not markup (``call:``; markup ones are inner literals).
    prefixes = [opens for fmt in formats if len(opens := fmt.wire.name_open) >= 3 and MARKUP.search(opens) is None]
    # And the name's closer, where it is not markup (Kimi K3's ``" index="``, DeepSeek V3's fence).
    suffixes = [ends for fmt in formats if len(ends := fmt.wire.name_close) >= 3 and MARKUP.search(ends) is None]
    if not inner and not closers and not keys and not prefixes and not suffixes:
        return None
    stops = sorted({literal, *(closer for fmt in formats for closer in fmt.closers)} - {""}, key=len, reverse=True)
    stop = "|".join(map(regex.escape, stops))
    # Between the literal and the inner markup: whitespace and at most one word
    # (a name, spaced or not), never the literal again or a closer.
    ways = []
    if inner:
        spelled = "|".join(map(_damaged, sorted(inner, key=len, reverse=True)))
        word = f"(?:(?!{stop})\\S)*?"
        # Or a second word that touches the inner markup (a key whose opening tag was
        # dropped: ``NAME\\ncity</arg_key>``); prose leaves a space before the markup.
        # The leading whitespace is taken possessively: no inner literal starts with whitespace
        # and the word is no whitespace, so giving some back matches nothing more, and a long
        # run of spaces after the literal is read once, not once per split (a flood of them
        # cost W² in the look's window).
        ways.append(f"\\s*+{word}(?:\\s*(?:{spelled})|\\s+\\w{word}(?:{spelled}))")
    if closers:
        # Or a call that closes right after its name: a word right after the literal (a
        # section's line break first), then a closer: ``<function=ping</function>``. The
        # word starts with a letter or digit and touches the literal, so a regex naming
        # the tags (``(\\w+)>``) and ``<tool_call> and </tool_call>`` are prose. A name
        # spaced from the literal, or one a section's closer follows, counts only with what
        # stands where its name's closer should (``>``, ``"/>``): a section holding one bare
        # word (``<ifm|tool_calls>junk</ifm|tool_calls>``) is text.
        bare = r"\w[\w.\-:/@]*(?:[ ]?[\"'/>]+)?"
        closed = r"[ ]?\w[\w.\-:/@]*[ ]?[\"'/>]+"
        sections = {fmt.wire.section.close for fmt in formats if fmt.wire.section is not None}
        calls = [closer for closer in closers if closer not in sections]
        ended = []
        if calls:
            call_closers = "|".join(map(_damaged, calls))
            ended.append(f"(?:{bare}|{closed})\\s*(?:{call_closers})")
            # Or a name touching the literal, then an object opening with a key and a colon,
            # and the call's closer after it, within the look: a body whose name's closer was
            # dropped or doubled, whose JSON was re-quoted, or whose name's prefix was dropped
            # (``<function=f{"a": 1}</function>``, ``<function=f>{'a': 1}</function>``,
            # ``<|tool_call>f{a:1}<tool_call|>``). ``<function=name>{...}</function>``
            # names no key and stays prose.
            ended.append(f"{bare}\\s*\\{{\\s*[\"']?\\w[^\\n:{{}}\"']*[\"']?\\s*:(?:(?!{stop})[\\s\\S])*?(?:{call_closers})")
        ended.append(f"{closed}\\s*(?:{'|'.join(map(_damaged, closers))})")
        ways.append(f"(?:\\n[ \\t]*)?(?:{'|'.join(ended)})")
    if prefixes:
        # Or the name's prefix where it is not markup (Gemma 4's ``call:``), touching the literal
        # and damaged (``<|tool_call>CA LL:f{``): prose about the format leaves a space after the tag.
        ways.append(f"(?:{'|'.join(map(_damaged, prefixes))})\\w")
    if suffixes:
        # Or a name right after the literal (whitespace between), then the name's closer where it
        # is not markup: the name's opening tag was dropped (``<|open|>tools<|sep|>f" index="1"``).
        ways.append(f"\\s*\\w[\\w.\\-:/@]*(?:{'|'.join(map(regex.escape, suffixes))})")
    if keys:
        # Or one of the call object's keys, quoted, right after the literal and before the
        # object's brace or a colon: the object's opening was moved or dropped
        # (``<tool_calls>"name"{[: …``). Prose about the format writes the brace first.
        ways.append(f"\\s*[\"'](?:{'|'.join(map(regex.escape, keys))})[\"']\\s*[{{\\[:]")
    return regex.compile(f"{regex.escape(literal)}(?:{'|'.join(ways)})")


def markup_after(commit: regex.Pattern, buffer: str, at: int, final: bool) -> tuple[regex.Match | None, bool]:
    """The commitment's look past the literal at buffer[at]: (what it matched, whether that is settled).

    The look ends COMMIT_LOOK characters past the literal whatever the
    chunking: the end of that window counts as the end of the text, so a
    stream decides as the whole text does. The markup is whole when the
    match is not partial; a partial match (or none) is no markup once it is
    settled: the look is whole or the text ended. ``Opening._committed``
    and ``Tables.refuses`` both decide by this.
    """
    limit = at + COMMIT_LOOK
    found = commit.match(buffer, at, min(len(buffer), limit), partial=True)
    return found, found is None or not found.partial or final or len(buffer) >= limit
