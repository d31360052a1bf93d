"""HEAD answered like GET without the body, for every GET route at once (pages, API, streams).

FastAPI's ``@app.get`` routes answer GET only, so ``curl -I`` and uptime monitors got 405.
:class:`HeadAsGet` (added by :func:`arena.web.app.create_app`, so ``arena web`` and ``arena
serve`` have it) runs a HEAD request as the GET of the same path and passes on its status and
headers (the ``Content-Type`` and ``Content-Length`` the GET has) with an empty body; the server
(uvicorn) still sees the HEAD it got.  Errors are the GET's (404, 400, ...), and a method no route
takes is still 405.  A stream (the live and play event streams) ends once its headers are out.
"""

from __future__ import annotations

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class _Answered(OSError):
    """Raised into a stream that goes on after its HEAD answer, where the server does not tell the
    app that the response is over.  An ``OSError``, as a closed connection is: Starlette's
    streaming response stops on one."""


class HeadAsGet:
    """Serve HEAD requests by the GET route of the same path, sending the headers only.

    The status and headers go out when the GET's body begins (then a stream's generator is
    running); the body is dropped.  A stream that would go on is stopped as a GET's is when its
    client leaves: the server tells the app the response is over (``http.disconnect``), Starlette
    cancels the stream where it waits, inside the generator, so its ``finally`` runs at once (the
    live stream stops watching its match).  Under a server that does not (ASGI spec 2.4 and
    later), the stream's next chunk raises instead.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        spec = tuple(int(n) for n in scope.get("asgi", {}).get("spec_version", "2.0").split("."))
        start: Message | None = None
        answered = False

        async def send_head(message: Message) -> None:
            nonlocal start, answered
            if answered:  # the rest of the GET's body: dropped
                if message.get("more_body", False) and spec >= (2, 4):
                    raise _Answered("the HEAD request has been answered")
                return
            if message["type"] == "http.response.start":
                start = message  # held until the body begins
                return
            if start is not None:
                await send(start)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            answered = True

        try:
            await self.app({**scope, "method": "GET"}, receive, send_head)
        except (_Answered, ClientDisconnect):
            if not answered:
                raise


__all__ = ["HeadAsGet"]
