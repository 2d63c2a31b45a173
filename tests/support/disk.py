"""A real write failure in the middle of a file: the process's file-size limit (RLIMIT_FSIZE).

Past the limit the kernel refuses the write with EFBIG (CPython ignores SIGXFSZ, so it is an ``OSError``), as
a full disk or a quota would: the writer fails from inside, after part of the file has gone to disk.
"""

from __future__ import annotations

import contextlib
import errno
import resource
from collections.abc import Iterator

import pytest

__all__ = ["assert_write_fails", "file_size_limit"]


@contextlib.contextmanager
def file_size_limit(nbytes: int) -> Iterator[None]:
    """Files this process writes cannot grow past ``nbytes`` inside the block."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


@contextlib.contextmanager
def assert_write_fails(nbytes: int) -> Iterator[None]:
    """The block must fail with EFBIG, having hit the ``nbytes`` file-size limit while writing."""
    with pytest.raises(OSError) as info, file_size_limit(nbytes):
        yield
    assert info.value.errno == errno.EFBIG, info.value
