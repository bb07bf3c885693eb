"""cordon.fs over the C API (ABI 1.1): the confined worker reads and writes
inside its workspace and refuses escapes with their stable codes."""

import os

import pytest

import cordon
from cordon import fs


@pytest.fixture
def worker(workspace):
    with fs.Worker(workspace) as w:
        yield w


def test_reads_writes_lists_and_searches_inside_the_workspace(worker, workspace):
    worker.write("notes.txt", "alpha\nbeta\n")
    with open(os.path.join(workspace, "notes.txt")) as f:
        assert f.read() == "alpha\nbeta\n"
    assert worker.read("notes.txt") == "alpha\nbeta\n"
    assert worker.edit("notes.txt", "beta", "gamma") == 1
    assert worker.read(os.path.join(workspace, "notes.txt")) == "alpha\ngamma\n"
    assert [e["name"] for e in worker.list(".")] == ["notes.txt"]
    assert worker.glob("*.txt") == [os.path.join(workspace, "notes.txt")]
    assert [(m["line"], m["text"]) for m in worker.grep("gam+a")] == [(2, "gamma")]
    assert worker.stat("notes.txt")["size"] == len("alpha\ngamma\n")
    assert worker.pid > 0


def test_a_patch_applies(worker, workspace):
    worker.write("a.txt", "one\ntwo\n")
    patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n"
    worker.apply_patch(patch)
    assert worker.read("a.txt") == "one\nthree\n"


def test_dot_dot_is_refused_as_path_escape(worker, outside):
    with open(os.path.join(outside, "secret"), "w") as f:
        f.write("hunter2\n")
    with pytest.raises(fs.FsError) as e:
        worker.read("../" + os.path.basename(outside) + "/secret")
    assert e.value.code == "path_escape"
    with pytest.raises(fs.FsError) as e:
        worker.write("../escaped.txt", "x")
    assert e.value.code == "path_escape"


def test_a_symlink_out_of_the_workspace_is_refused(worker, workspace, outside):
    with open(os.path.join(outside, "secret"), "w") as f:
        f.write("hunter2\n")
    os.symlink(os.path.join(outside, "secret"), os.path.join(workspace, "link"))
    os.symlink(outside, os.path.join(workspace, "dirlink"))
    for path, op in (("link", "read"), ("dirlink/secret", "read"), ("dirlink/new", "write")):
        with pytest.raises(fs.FsError) as e:
            worker.call(op, path=path, **({"content": "x"} if op == "write" else {}))
        assert e.value.code == "symlink", (path, e.value.response)
    assert not os.path.exists(os.path.join(outside, "new"))


def test_a_write_outside_every_root_is_refused(worker):
    with pytest.raises(fs.FsError) as e:
        worker.write("/usr/cordon-fs-test", "x")
    assert e.value.code in ("read_only", "outside_roots")
    assert not os.path.exists("/usr/cordon-fs-test")


def test_close_returns_the_report_of_every_write(workspace):
    w = fs.Worker(workspace)
    w.write("x.txt", "1")
    report = w.close()
    assert [os.path.basename(x["path"]) for x in report["worker"]["writes"]] == ["x.txt"]
    assert report["run"]["schema"] == 1
    with pytest.raises(cordon.CordonError) as closed:
        w.read("x.txt")
    assert closed.value.code == "usage_error"
