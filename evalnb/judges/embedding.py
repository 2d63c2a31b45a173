"""Where the README names the embedding judge's functions (``evalnb.judges.embedding.cosines``); their home is
:mod:`evalnb.judges.offline`, and these are the same objects.

Example::

    from evalnb.judges.embedding import cosines
    cosines(["The sky is blue."], ["Blue is the colour of the sky."])
"""

from evalnb._lazy import homes
from evalnb.judges.offline._embedding import EmbeddingJudge, Reading, cosines, read

__all__ = ["EmbeddingJudge", "Reading", "cosines", "read"]

homes(__name__, globals(), __all__)  # reprs and docs name the public path
