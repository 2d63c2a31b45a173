"""The atomic write helper: whole files or none, permissions as open() gives them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalnb._files import atomic_write, atomic_writer


def test_text_bytes_and_writer_function(tmp_path: Path) -> None:
    t = atomic_write(tmp_path / "a" / "x.txt", "héllo\r\n")
    assert t.read_bytes() == "héllo\r\n".encode()  # no newline translation
    atomic_write(tmp_path / "y.bin", b"\x00\x01")
    assert (tmp_path / "y.bin").read_bytes() == b"\x00\x01"
    atomic_write(tmp_path / "z.bin", lambda fh: fh.write(b"zz"))
    assert (tmp_path / "z.bin").read_bytes() == b"zz"


def test_new_file_gets_umask_bits_and_existing_keeps_its_own(tmp_path: Path) -> None:
    mask = os.umask(0o022)
    os.umask(mask)
    new = atomic_write(tmp_path / "new.txt", "x")
    assert new.stat().st_mode & 0o777 == 0o666 & ~mask
    old = tmp_path / "old.txt"
    old.write_text("before")
    old.chmod(0o600)
    atomic_write(old, "after")
    assert old.read_text() == "after" and old.stat().st_mode & 0o777 == 0o600


def test_error_inside_leaves_the_target_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "keep.txt"
    target.write_text("original")
    with pytest.raises(RuntimeError), atomic_writer(target) as fh:
        fh.write("half of a new file")
        raise RuntimeError("crash while writing")
    assert target.read_text() == "original"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_not_durable_is_still_atomic(tmp_path: Path) -> None:
    # durable=False skips only the fsync: the temporary file and the rename are the same
    target = atomic_write(tmp_path / "c.json", '{"a": 1}', durable=False)
    assert target.read_text() == '{"a": 1}'
    with pytest.raises(RuntimeError), atomic_writer(target, durable=False) as fh:
        fh.write("half")
        raise RuntimeError("crash while writing")
    assert target.read_text() == '{"a": 1}' and [p.name for p in tmp_path.iterdir()] == ["c.json"]
