"""dpbench.io.atomic: a write replaces its file whole or not at all, and a failure is said in words."""

from __future__ import annotations

import errno
import os

import pytest

from dpbench.io.atomic import replace_explained, write_atomic, write_failure


def test_write_failure_words_and_replace_explained_leave_nothing_half_written(tmp_path):
    target = tmp_path / "out.txt"
    advice = {"full": "free space", "denied": "choose another folder"}
    assert write_failure(OSError(errno.ENOSPC, "x"), target, advice) == (
        f"disk full while writing {target} ({os.strerror(errno.ENOSPC)}); nothing half-written was left — free space"
    )
    assert write_failure(OSError(errno.EROFS, "x"), target, advice) == (
        f"cannot write {target}: {os.strerror(errno.EROFS)}; choose another folder"
    )
    assert write_failure(OSError(errno.EACCES, "x"), target, {"full": "free space"}) is None  # no advice: as it is
    assert write_failure(OSError(errno.EIO, "x"), target, advice) is None

    class Refused(RuntimeError):
        pass

    with pytest.raises(Refused, match="^disk full while writing .*out.txt"):
        with replace_explained(target, advice, lambda _errno, words: Refused(words)) as tmp:
            tmp.write_text("half")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    with pytest.raises(OSError) as info:  # an error the advice does not cover passes unchanged
        with replace_explained(target, advice, lambda _errno, words: Refused(words)) as tmp:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
    assert info.value.errno == errno.EIO
    assert list(tmp_path.iterdir()) == []  # no target, no temporary file left behind
    with replace_explained(target, advice, OSError) as tmp:
        tmp.write_text("whole")
    assert target.read_text() == "whole" and list(tmp_path.iterdir()) == [target]


def test_write_atomic_writes_text_and_bytes_whole_and_explains_a_full_disk(tmp_path, monkeypatch):
    target = tmp_path / "table.csv"
    assert write_atomic(target, "a,b\n1,2\n") == target and target.read_text() == "a,b\n1,2\n"
    write_atomic(target, b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01" and list(tmp_path.iterdir()) == [target]

    def full(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError, match=r"\[Errno \d+\] disk full while writing .*table.csv.*free space"):
        write_atomic(target, "new", {"full": "free space"})
    assert target.read_bytes() == b"\x00\x01" and list(tmp_path.iterdir()) == [target]  # old file kept whole
