"""``python -m evalnb.examples [NAME]``: where the shipped examples are, for a shell.

With no argument, one line per example suite (its name and path) and the FoodMart sample; with a suite name,
its path alone; with ``foodmart-db``, the sample database's path (built on first use)::

    cp "$(python -m evalnb.examples tasks)" evals/
    evalnb run "$(python -m evalnb.examples foodmart-sales)" --data "$(python -m evalnb.examples foodmart-db)"
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from evalnb import examples
from evalnb.errors import ConfigError

__all__ = ["main"]

DB = "foodmart-db"


def main(argv: Sequence[str] | None = None) -> int:
    """Print the paths; exit 2 for a name that is not shipped (the message lists the names)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) > 1 or (args and args[0] in ("-h", "--help")):
        print(__doc__.strip() if __doc__ else "", file=sys.stderr if len(args) > 1 else sys.stdout)
        return 2 if len(args) > 1 else 0
    try:
        if not args:
            for name in examples.names():
                print(f"{name}\t{examples.path(name)}")
            print(f"{DB}\t{examples.foodmart_db()}")
        elif args[0] == DB:
            print(examples.foodmart_db())
        else:
            print(examples.path(args[0]))
    except ConfigError as exc:
        print(f"python -m evalnb.examples: {exc} (or {DB!r})", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
