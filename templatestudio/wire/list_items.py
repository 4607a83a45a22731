"""The items of a JSON list read as they arrive in a stream: ``ListItems``.

A bare list of calls (xLAM's, and any declared format whose call is a
JSON list after its marker) has no end of its own but its last ``]``: read
whole at that point, a stream's last token would pay for decoding the whole
list (6 ms for 3,000 small calls, a quarter of the last stretch of a 256 KB
reply). ``ValueExtent`` hands this class the boundaries its bracket scan
already finds (just past an item's closing bracket, at depth one), and the
items up to each boundary are decoded in batches, each by one
``json.loads`` of ``[`` + their text + ``]``; at the list's ``]`` the last
ones are, and the extent hands the list to the reader as a ``FoundJSON``.
Decoding the items batch by batch gives the value ``json.loads`` gives the
whole list: JSON items are decoded alike wherever they stand.

Not handled here (the reader decodes the region and says what is wrong):
anything but ``[`` space ``item`` (``,`` ``item``)* space ``]``. The first
failure stops the reading for good.
"""

from __future__ import annotations

import json

from templatestudio.wire.jsonbody import skip_space

# Items are read in batches of at least this many characters: a look per
# item boundary would cost more than the decoding when items are small.
READ_EVERY = 4096


class ListItems:
    """The items of the JSON list whose ``[`` stands just before region offset at, as far as they are read.

    ``read_to`` is the region offset up to which the list was read (past
    the last item read, or the ``[``); ``values`` the items read.
    """

    __slots__ = ("at", "read_to", "values")

    def __init__(self, at: int) -> None:
        self.at = at
        self.read_to = at
        self.values: list = []

    def read(self, buffer: str, start: int, stop: int, *, last: bool = False) -> bool:
        """Reads the items that end by region offset stop; False when the text there is no list's items.

        stop is a boundary the bracket scan found: just past an item's closing
        bracket, or (last) the index of the bracket that closes the list,
        which must be a ``]``. The items since the last read are decoded in
        one C call, as the list ``[`` + their text + ``]``; after the first
        item that text must open with a comma and hold an item.
        """
        end = start + stop
        if last and buffer[end] != "]":
            return False
        position = start + self.read_to
        after_item = bool(self.values)
        if after_item:
            position = skip_space(buffer, position)
            if position == end and last:  # nothing after the last item read
                return True
            if buffer[position] != ",":
                return False
            position += 1
        try:
            batch = json.loads("[" + buffer[position:end] + "]")
        except (ValueError, RecursionError):  # JSONDecodeError, or an integer past the digit limit
            return False
        if after_item and not batch:  # a comma with no item after it
            return False
        self.values += batch
        self.read_to = stop
        return True
