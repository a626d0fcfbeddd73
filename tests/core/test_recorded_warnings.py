"""recorded_warnings: each thread's warnings in its own list, also when threads record
at once (a report's cells on the threading backend)."""

from __future__ import annotations

import threading
import warnings

import pytest

from coherence import SmallSampleWarning
from coherence._warnings import recorded_warnings


def test_records_every_warning_each_time_and_restores_the_state():
    before = (list(warnings.filters), warnings.showwarning)
    with recorded_warnings() as caught:
        for _ in range(3):
            warnings.warn("again", SmallSampleWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["again"] * 3  # "always": no registry
    assert (list(warnings.filters), warnings.showwarning) == before
    with pytest.warns(SmallSampleWarning):  # shown as before once the block is over
        warnings.warn("after", SmallSampleWarning, stacklevel=1)


def test_nested_blocks_record_in_the_innermost():
    with recorded_warnings() as outer:
        warnings.warn("outer", SmallSampleWarning, stacklevel=1)
        with recorded_warnings() as inner:
            warnings.warn("inner", SmallSampleWarning, stacklevel=1)
    assert [str(w.message) for w in outer] == ["outer"]
    assert [str(w.message) for w in inner] == ["inner"]


def test_threads_recording_at_once_keep_their_own_warnings():
    # catch_warnings swaps process-wide state: with two threads in it at once, one
    # thread's exit restored the state under the other, whose later warnings were lost
    n_threads, n_warnings = 8, 50
    start = threading.Barrier(n_threads)
    got: dict[int, list[str]] = {}

    def work(i: int) -> None:
        start.wait()
        with recorded_warnings() as caught:
            for j in range(n_warnings):
                warnings.warn(f"thread {i} warning {j}", SmallSampleWarning, stacklevel=1)
                if j % 10 == 0:
                    with recorded_warnings():  # a nested block in another thread's midst
                        pass
        got[i] = [str(w.message) for w in caught]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(n_threads):
        assert got[i] == [f"thread {i} warning {j}" for j in range(n_warnings)]
