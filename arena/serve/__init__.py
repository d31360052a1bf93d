"""``arena serve``: one process that runs the web app (accounts, submission, the viewer), the match
workers behind background services (validation of uploads; more services plug in through
:data:`arena.serve.services.SERVICES`) and, when asked, the remote-bot lobby."""
