"""Loop plumbing for scripts and notebooks: running a coroutine to completion from sync code, Ctrl-C, progress.

Outside an event loop a run gets a fresh loop; inside a running one (Jupyter) a loop cannot be nested, so it
runs on its own loop in a separate thread. Either way Ctrl-C cancels it, and a run returns its partial Result.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["progress_bar", "run_blocking"]

_T = TypeVar("_T")


def run_blocking(make: Callable[[], Any]) -> Any:
    """Run the coroutine ``make()`` returns to completion from sync code, Jupyter included."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        return _run_in_thread(make)
    # Outside the except block: an error of the run must not carry "no running event loop" as its context.
    return _run_in_new_loop(make)


def _run_in_new_loop(make: Callable[[], Any]) -> Any:
    """Run on a fresh loop; Ctrl-C cancels the run task, which returns a partial Result (not an exception)."""
    import signal

    loop = asyncio.new_event_loop()
    task = loop.create_task(make())
    handler_set = False
    interrupted = False

    def on_sigint() -> None:
        nonlocal interrupted
        interrupted = True
        task.cancel()

    if threading.current_thread() is threading.main_thread():
        try:
            loop.add_signal_handler(signal.SIGINT, on_sigint)
            handler_set = True
        except (NotImplementedError, RuntimeError, ValueError):  # pragma: no cover - Windows
            pass
    try:
        return loop.run_until_complete(task)
    except asyncio.CancelledError:
        if interrupted:
            # Ctrl-C before the cases started (preflight, opening the data): an interrupt, not a cancellation.
            raise KeyboardInterrupt from None
        raise
    finally:
        if handler_set:
            loop.remove_signal_handler(signal.SIGINT)
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


def _run_in_thread(make: Callable[[], Any]) -> Any:
    """Run on a new loop in a worker thread (inside Jupyter); Ctrl-C in the waiting thread cancels the run."""
    import signal

    box: dict[str, Any] = {}
    ready = threading.Event()
    finished = threading.Event()

    def target() -> None:
        loop = asyncio.new_event_loop()
        try:
            task = loop.create_task(make())
            box["loop"], box["task"] = loop, task
            ready.set()
            box["result"] = loop.run_until_complete(task)
        except BaseException as exc:
            box["error"] = exc
        finally:
            ready.set()
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()
                finished.set()

    # The waiting thread is told the run is over by an Event, not by Thread.join: a KeyboardInterrupt that
    # lands inside Thread.join(timeout) makes CPython (3.11) mark the still-running thread as stopped, so a
    # later join() returned at once and the partial result was lost (KeyError: 'result').
    # A running loop may own SIGINT (asyncio.run cancels its main task and raises nothing while this thread
    # blocks): Ctrl-C must raise here, as it does in Jupyter, so the default handler is put back meanwhile.
    previous = None
    if threading.current_thread() is threading.main_thread():
        with contextlib.suppress(ValueError, TypeError):
            previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupted = False
    thread = threading.Thread(target=target, name="evalnb-run", daemon=True)
    thread.start()
    try:
        try:
            while not finished.wait(0.1):
                pass
        except KeyboardInterrupt:
            interrupted = True
            ready.wait()
            if "task" in box:
                box["loop"].call_soon_threadsafe(box["task"].cancel)
            finished.wait()  # a second Ctrl-C here gives up on the partial result
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    thread.join()
    if "error" in box:
        if interrupted and isinstance(box["error"], asyncio.CancelledError):
            raise KeyboardInterrupt from None
        raise box["error"]
    return box["result"]


def _interactive() -> bool:
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def progress_bar(progress: bool | None, *, total: int, desc: str) -> Any:
    """A ``tqdm.auto`` bar when asked, or when ``progress`` is None on a terminal or in a notebook."""
    if progress is False or total == 0:
        return None
    if progress is None and not _interactive():
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    # delay: short runs finish before a bar would flash on screen.
    return tqdm(total=total, desc=desc, unit="run", delay=0.5 if progress is None else 0, leave=False)
