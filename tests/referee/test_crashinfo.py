"""The exception line of a crashed bot's stderr (``arena.referee.crashinfo``), in the languages
bots are written in: what a crash's forfeit detail ends with.  The texts are what each runtime
prints for an uncaught error (Node.js 20, CPython 3.11, Go, Rust, Java, C++)."""

from __future__ import annotations

import pytest

from arena.referee.crashinfo import crash_detail, exception_line

NODE_MISSING_MODULE = """node:internal/modules/cjs/loader:1148
  throw err;
  ^

Error: Cannot find module '@grpc/grpc-js'
Require stack:
- /tmp/lone/bot.js
    at Module._resolveFilename (node:internal/modules/cjs/loader:1145:15)
    at Module._load (node:internal/modules/cjs/loader:986:27) {
  code: 'MODULE_NOT_FOUND',
  requireStack: [ '/tmp/lone/bot.js' ]
}

Node.js v20.20.2
"""

CASES = [
    ("node, a missing module", NODE_MISSING_MODULE, "Error: Cannot find module '@grpc/grpc-js'"),
    (
        "node, a thrown Error",
        "/tmp/bot.js:3\nthrow new Error('boom');\n^\n\nError: boom\n"
        "    at Object.<anonymous> (/tmp/bot.js:3:7)\n\nNode.js v20.20.2\n",
        "Error: boom",
    ),
    (
        "node, an error with a code",
        'TypeError [ERR_INVALID_ARG_TYPE]: The "path" argument must be of type string\n    at f (x:1:1) {\n'
        "  code: 'ERR_INVALID_ARG_TYPE'\n}\n",
        'TypeError [ERR_INVALID_ARG_TYPE]: The "path" argument must be of type string',
    ),
    (
        "python",
        'Traceback (most recent call last):\n  File "bot.py", line 1, in <module>\n    1/0\n'
        "ZeroDivisionError: division by zero\n",
        "ZeroDivisionError: division by zero",
    ),
    ("python, Ctrl-C", "Traceback (most recent call last):\nKeyboardInterrupt\n", "KeyboardInterrupt"),
    (
        "go",
        "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n"
        "\t/tmp/x.go:5 +0x1d\nexit status 2\n",
        "panic: runtime error: index out of range [3] with length 3",
    ),
    (
        "rust",
        "thread 'main' panicked at src/main.rs:2:5:\nboom\n"
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
        "thread 'main' panicked at src/main.rs:2:5: boom",
    ),
    (
        "java",
        'Exception in thread "main" java.lang.IllegalStateException: boom\n\tat Main.main(Main.java:3)\n',
        'Exception in thread "main" java.lang.IllegalStateException: boom',
    ),
    (
        "c++",
        "terminate called after throwing an instance of 'std::runtime_error'\n  what():  boom\n",
        "terminate called after throwing an instance of 'std::runtime_error' what():  boom",
    ),
    (
        "python grpc, a refused stream",
        '  File "grpc/_channel.py", line 965, in _next\n    raise self\n'
        "grpc._channel._MultiThreadedRendezvous: <_MultiThreadedRendezvous of RPC that terminated with:\n"
        '\tstatus = StatusCode.UNAUTHENTICATED\n\tdetails = "unknown or expired token"\n'
        '\tdebug_error_string = "UNAUTHENTICATED:unknown or expired token"\n>\n',
        "grpc._channel._MultiThreadedRendezvous: the call ended with UNAUTHENTICATED: "
        "unknown or expired token",
    ),
    (
        "python grpc.aio, no referee",
        "    raise _create_rpc_error(\n"
        "grpc.aio._call.AioRpcError: <AioRpcError of RPC that terminated with:\n"
        '\tstatus = StatusCode.UNAVAILABLE\n\tdetails = "failed to connect to all addresses"\n'
        '\tdebug_error_string = "UNAVAILABLE:failed to connect to all addresses"\n>\n',
        "grpc.aio._call.AioRpcError: the call ended with UNAVAILABLE: failed to connect to all addresses",
    ),
    ("a bot's own error line", "loading\nerror: cannot open weights.bin\n", "error: cannot open weights.bin"),
    ("no error shape: the last line", "loading\nsomething odd happened\n", "something odd happened"),
    ("only noise: the last line", "    at f (x:1:1)\n}\n", "}"),
]


@pytest.mark.parametrize(("text", "line"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_exception_line_of_each_runtime(text: str, line: str) -> None:
    assert exception_line(text) == line


def test_nothing_written_is_none_and_a_long_line_is_cut() -> None:
    assert exception_line("") is None and exception_line("\n  \n") is None
    assert exception_line("ValueError: " + "x" * 1000) == ("ValueError: " + "x" * 1000)[:300]


def test_crash_detail_says_how_and_the_line_once() -> None:
    detail = crash_detail("the process exited with status 1", NODE_MISSING_MODULE, before_connecting=True)
    assert detail == (
        "the process exited with status 1 before connecting: Error: Cannot find module '@grpc/grpc-js'"
    )


def test_a_clean_exit_before_connecting_asks_whether_the_bot_was_started() -> None:
    """A script that defines a bot but never starts it exits 0 without a word: the detail says
    what to look for (a crash with an error line, or after connecting, does not get the hint)."""
    hint = "(it ended without an error and never connected: does the script start its bot, e.g. run()?)"
    assert crash_detail("the process exited with status 0", "", before_connecting=True) == (
        f"the process exited with status 0 before connecting {hint}"
    )
    assert hint not in crash_detail("the process exited with status 0", "")
    assert hint not in crash_detail("the process exited with status 1", "", before_connecting=True)
    assert hint not in crash_detail(
        "the process exited with status 0", "ValueError: x", before_connecting=True
    )
