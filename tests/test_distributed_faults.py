"""Bad input and faults on the accl backend (host driver), in two rank processes: ranks that
disagree get an error naming the collective, a dead rank makes the others fail within the
group's timeout, a tensor on another device is refused, and destroy_process_group() leaves
the device, the allocator and the staging pool clean (tests/ranks/worker.py)."""

import pytest

from ranks.launch import run_ranks


@pytest.mark.parametrize("kind", ["shape", "dtype"])
def test_ranks_that_disagree_get_an_error_naming_the_collective(kind, tmp_path):
    results = run_ranks("mismatch", tmp_path, env={"ACCEL_TEST_MISMATCH": kind}, timeout=90)
    for _, _, output in results:
        assert "rank 0 called" in output, output[-2000:]


@pytest.mark.parametrize("kind", ["shape", "splits"])
def test_a_disagreement_among_queued_collectives_fails_only_that_one(kind, tmp_path):
    """Collectives queued together are checked in one exchange; those before the disagreement
    run with the right values."""
    run_ranks("mismatch_in_a_burst", tmp_path, env={"ACCEL_TEST_MISMATCH": kind}, timeout=90)


def test_a_dead_rank_fails_the_others_within_the_timeout(tmp_path):
    results = run_ranks("dead_rank", tmp_path, timeout=90, expect_ok=False)
    survivor_code, survivor, output = results[0]
    assert survivor_code == 0 and survivor == {"survivor_fails_within_the_timeout": None}, output
    assert results[1][0] == 3  # the rank that died


def test_wrong_device_and_destroy_leave_everything_usable(tmp_path):
    """A tensor on another device or not contiguous is refused at once and the group goes on;
    destroy_process_group() leaves the device, allocator and staging pool clean, and a new
    group works."""
    results = run_ranks("devices_and_teardown", tmp_path)
    assert {
        "tensor_on_another_device",
        "non_contiguous_tensor",
        "group_still_works",
        "round1_no_staging_leak",
        "round1_allocator_consistent",
        "round1_default_backend",
    } <= set(results[0][1])
    for _, _, output in results:  # torch's warning when a group has no default backend
        assert "No backend of type" not in output, output[-2000:]
