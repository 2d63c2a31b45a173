"""Data sources for cube ``referenceQuery`` ground truth.

A cube case may give its expected rows as a ``referenceQuery`` that runs live against the data the caller
connects (docs/cube-yaml.md, structured reference queries: drift-proof ground truth). :func:`open_source` turns the
``data`` argument of ``evalnb.run`` into a :class:`Source` (:mod:`evalnb.data._sources`: SQLite or DuckDB files told
apart by their header, SQLAlchemy URLs and engines, mappings of DataFrames).

The SQL form of a reference query runs as written, if it only reads: one ``SELECT`` or ``WITH`` statement,
checked before it runs, on a connection that cannot write (:mod:`evalnb.data._readonly`; docs/cube-yaml.md,
"Reference queries only read"); anything else is a ``ReferenceQueryError`` with the code ``READ_ONLY_QUERY``.
The structured form (``measures``, ``rows`` levels,
``filters``) is translated to SQL through a :class:`CubeModel` (:mod:`evalnb.data._cube`), a small YAML file
that maps measure names to aggregate expressions and levels to columns and joins; it is found next to the
database file (``cube.yaml`` or ``<stem>.cube.yaml``) or given with ``cube=``. The structured form::

    referenceQuery:
      measures: [{name: Store Sales}, {name: Unit Sales}]
      rows: [{level: Product Family}]                 # {level: ..., as: alias} renames the column
      filters:
        - {level: State, equals: CA}                  # also: in: [..], notIn: [..], op: ">=", value: ..

The translation (:mod:`evalnb.data._sql`) binds every filter value as a parameter, never as SQL text. Its
result columns are named as the query writes the names ("Product Family", "Store Sales"), which the row
comparison matches to ``productFamily`` / ``storeSales`` by key normalisation.
"""

from __future__ import annotations

from evalnb._lazy import homes
from evalnb.data._sources import connect

__all__ = ["connect"]

homes(__name__, globals(), __all__)  # reprs and docs name the public path
