"""``benchmarks/proctree.py``: the CPU of a benchmark's own process and of the processes it
starts, by kind and thread, read from /proc (the tournament and cluster benchmarks' breakdown)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from proctree import TreeCpu, kind_of

# burn s seconds of CPU, then idle a while so that a sample sees all of it before the exit
BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\ntime.sleep(0.5)\n"


def test_children_and_own_cpu_are_counted_by_kind_and_thread(tmp_path: Path) -> None:
    bot = tmp_path / "busy_bot.py"
    bot.write_text(BURN.format(s=0.3))
    marker = f"# proctree-test {tmp_path}"

    def classify(pid: int, root: int, cmdline: str) -> str:
        # only the two children started here count as theirs: the suite's process may have
        # others (a resource tracker, servers of earlier tests) that come and go meanwhile
        if pid != root and marker not in cmdline and str(bot) not in cmdline:
            return "unrelated"
        return kind_of(pid, root, cmdline)

    tree = TreeCpu(interval=0.05, classify=classify)
    subprocess.run([sys.executable, "-c", BURN.format(s=0.4) + marker], check=True)  # a "worker" (Python)
    subprocess.run([sys.executable, str(bot)], check=True)  # a "bot" (a *_bot.py script)
    t = time.process_time()
    while time.process_time() - t < 0.2:
        pass
    threads = tree.stop_threads()
    totals = {kind: sum(v.values()) for kind, v in threads.items()}
    assert 0.38 <= totals["worker"] <= 0.7, threads  # its burn and its interpreter's start
    assert 0.28 <= totals["bot"] <= 0.6, threads
    assert totals["coordinator"] >= 0.15 and threads["coordinator"]["main"] >= 0.15, threads
    seen = tree.processes()
    assert (seen["coordinator"], seen["worker"], seen["bot"]) == (1, 1, 1), seen


def test_a_child_seen_before_its_exec_is_filed_by_the_program_it_runs(tmp_path: Path) -> None:
    """Between fork and exec a child shows its parent's command line. It used to be filed by that
    first sight for good (a bot launched from a Python process counted as a "worker"; under load
    the sampler often saw that moment): the kind follows the command line."""
    bot = tmp_path / "late_bot.py"
    bot.write_text(BURN.format(s=0.2))
    tree = TreeCpu(interval=0.02)
    # the child waits after its fork, so the sampler sees it with this process's command line
    child = subprocess.Popen([sys.executable, str(bot)], preexec_fn=lambda: time.sleep(0.3))
    assert child.wait() == 0
    totals = tree.stop()
    assert 0.18 <= totals.get("bot", 0.0) <= 0.5, totals
    assert tree.kind(child.pid) == "bot"
    # (processes already running when the sampling began, such as a resource tracker an earlier
    # test's pool left in this pytest process, are not this test's: in the suite one was a "worker")
    assert tree.processes(new_only=True) == {"bot": 1}, tree.processes()


def test_kinds() -> None:
    assert kind_of(10, 10, "anything") == "coordinator"
    assert kind_of(11, 10, "/usr/bin/python3 bots/greedy_bot.py") == "bot"
    assert kind_of(11, 10, "/usr/bin/bwrap --die-with-parent ...") == "sandbox"
    assert kind_of(11, 10, "/venv/bin/python -c from multiprocessing.spawn import spawn_main") == "worker"
    assert kind_of(11, 10, "/usr/bin/node server.js") == "other"
