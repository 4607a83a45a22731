"""The pieces every format module is built from: the ``Format`` type, extents, and shared readers and writers.

Nothing here knows a fact about one wire format; each format module under
``templatestudio.formats`` declares its own and uses these pieces.
"""
