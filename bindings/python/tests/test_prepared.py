"""cordon.Pool: commands in sandboxes prepared ahead of time (docs/prepared.md)."""

import shutil
import subprocess
import threading
from pathlib import Path

import pytest

import cordon
from conftest import PYTHON
from test_run import WRITER


def test_a_pooled_run_is_confined_reported_as_prepared_and_alone(workspace, outside):
    inside, elsewhere = f"{workspace}/made-inside", f"{outside}/made-outside"
    with cordon.Pool("workspace-write", workspace=workspace, size=1, wait=20) as pool:
        assert pool.wait_ready(1, timeout=20)
        assert pool.ready == 1
        assert pool.refresh() is False  # nothing changed on the host
        r = pool.run([PYTHON, "-c", WRITER, inside, elsewhere, "/etc/cordon-py-probe", "/tmp/left-behind"],
                     cwd=workspace)
        assert r.exit_code == 0, r.stderr
        assert r.stdout.decode().split() == ["OK", "ENOENT", "EROFS", "OK"]
        assert Path(inside).exists() and not Path(elsewhere).exists()
        assert r.report["prepared"] is True and r.report["prepared_at"].endswith("Z")
        assert r.report["controls"]["filesystem_write"]["level"] == "enforced"
        # The next command gets a sandbox of its own: the first one's /tmp is gone.
        r = pool.run(["/bin/sh", "-c", "cat /tmp/left-behind; echo $?"], cwd=workspace, stdin="ignored")
        assert r.stdout == b"1\n" and b"No such file" in r.stderr
        assert r.report["prepared"] is True


def test_pool_options_and_a_closed_pool(workspace):
    with pytest.raises(cordon.UsageError) as e:
        cordon.Pool("workspace-write", workspace=workspace, size=0)
    assert e.value.location == "/size"
    pool = cordon.Pool("workspace-write", workspace=workspace, size=1)
    pool.close()
    with pytest.raises(ValueError):
        pool.run(["/bin/true"])
    with pytest.raises(cordon.PolicyError):
        cordon.Pool("no-such-profile")


def test_a_pool_cancels_at_its_timeout(workspace):
    with cordon.Pool("workspace-write", workspace=workspace, size=1) as pool:
        r = pool.run(["/bin/sleep", "30"], timeout=0.5)
        assert r.cancelled and r.timed_out
        assert r.report["prepared"] is True


def test_refresh_protects_a_repository_that_appeared(workspace):
    """A repository made after the pool was prepared changes the plan: refresh()
    says so, gives up the old sandboxes, and the next one protects its hooks."""
    with cordon.Pool("workspace-write", workspace=workspace, size=1) as pool:
        assert pool.wait_ready(1, timeout=20)
        subprocess.run(["git", "init", "-q", f"{workspace}/repo"], check=True)
        assert pool.refresh() is True
        hook = f"{workspace}/repo/.git/hooks/pre-commit"
        r = pool.run(["/bin/sh", "-c", f"echo x > {hook}; echo > {workspace}/repo/file; echo done"], cwd=workspace)
        assert b"Read-only file system" in r.stderr and r.stdout == b"done\n"
        assert not Path(hook).exists() and Path(workspace, "repo", "file").exists()
        assert r.report["prepared"] is True


def test_close_waits_for_runs_taking_a_sandbox_in_other_threads(workspace):
    pool = cordon.Pool("workspace-write", workspace=workspace, size=2)
    outcomes = []

    def loop():
        for _ in range(5):
            try:
                outcomes.append(pool.run(["/bin/true"]).exit_code)
            except ValueError:
                outcomes.append("closed")
    threads = [threading.Thread(target=loop) for _ in range(3)]
    for t in threads:
        t.start()
    pool.wait_ready(1, timeout=20)
    pool.close()
    pool.close()  # idempotent
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert len(outcomes) == 15 and set(outcomes) <= {0, "closed"}


def test_bad_durations_are_usage_errors(workspace):
    for bad in (float("inf"), float("nan"), "5", True):
        with pytest.raises(cordon.UsageError):
            cordon.Pool("workspace-write", workspace=workspace, max_age=bad)


def test_a_stale_pool_prepares_again_once_the_host_is_as_before(workspace):
    with cordon.Pool("workspace-write", workspace=workspace, size=1, refill_after=0) as pool:
        assert pool.wait_ready(1, timeout=20)
        subprocess.run(["git", "init", "-q", f"{workspace}/repo"], check=True)
        assert pool.run(["/bin/true"]).exit_code == 0  # prepared before the repository
        # Its replacement's helper finds the host changed: the pool fails closed.
        with pytest.raises(cordon.CordonError) as e:
            pool.run(["/bin/true"])
        assert e.value.code == "plan_stale"
        shutil.rmtree(f"{workspace}/repo")
        assert pool.refresh() is False  # the plan is right again
        assert pool.wait_ready(1, timeout=20)
        assert pool.run(["/bin/true"]).exit_code == 0
