"""Where case runs run: the executors, by name or as objects for ``evalnb.run(..., executor=...)``.

* :class:`Local` (the default, ``executor=None`` or ``"local"``): this process's event loop.
* :class:`Ray` (``executor="ray"``, ``"ray=ADDRESS"`` or ``Ray(address=...)``): a Ray cluster, in batches, with
  the same results and recorders; Ray is the extra ``pip install "evalnb[ray]"`` and is imported only when a
  run starts on it.

An executor of your own is a class with ``async execute(job, todo, sink)``, registered with
:func:`register_executor` (see :mod:`evalnb.running._executors`).

Example::

    import evalnb
    result = evalnb.run(suite, agent, executor=evalnb.executors.Ray(address="127.0.0.1:6379"))
"""

from __future__ import annotations

from evalnb._lazy import homes
from evalnb.running._executors import Executor, Local, as_executor, register_executor
from evalnb.running._ray_executor import Ray

__all__ = ["Executor", "Local", "Ray", "as_executor", "register_executor"]

homes(__name__, globals(), __all__)  # reprs and docs name the public path
