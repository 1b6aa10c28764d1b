"""okstra_core: the library that knows okstra's on-disk store contracts.

Layers, in the direction data flows:

* ``layout`` and ``names`` own every path rule and the file-name grammar;
* ``models`` holds the pydantic models (the JSON Schemas in ``schemas/`` are
  generated from them);
* ``store`` is the lazy read side, returning errors as values;
* ``writes`` holds the only write primitives; ``workflows`` build on them;
* ``render`` and ``check`` derive reports and findings from the read side.

This package never imports Textual.
"""

__version__ = "0.1.0"
