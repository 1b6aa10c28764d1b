"""Rule implementations, one module per topic of the catalog.

Each function takes a :class:`okstra_core.check.unit.Unit` and the scope it
checks, and reports findings through the unit; none of them raises on bad
input and none of them writes.
"""
