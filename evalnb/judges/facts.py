"""Where the README names the fact reading of the embedding judge (``evalnb.judges.facts``); its home is the
private ``evalnb.judges.offline._facts``, and these are the same objects.

Example::

    from evalnb.judges.facts import compare
    compare("The allowance is $60 a day.", "$40 a day.").contradicts   # True
"""

from evalnb._lazy import homes
from evalnb.judges.offline._facts import Facts, Quantity, compare

__all__ = ["Facts", "Quantity", "compare"]

homes(__name__, globals(), __all__)  # reprs and docs name the public path
