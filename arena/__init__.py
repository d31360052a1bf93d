"""Pool Arena: a tournament and AI-arena platform for the dice game Cool am Pool.

One setting is made here, before any module of the package can import gRPC (it is read only
then): gRPC's C core writes its log lines raw to standard error, and a bot chooses some of their
bytes (the debug text of an HTTP/2 GOAWAY it sends, a header it cannot parse), so a bot could
write terminal escape sequences (a window title, colours, a cleared screen) onto the terminal
of whoever runs ``arena``.  Its log is off (``GRPC_VERBOSITY=NONE``) unless the environment
asks for one: the referee records every fault of a bot itself, with its text made printable.
"""

import os

os.environ.setdefault("GRPC_VERBOSITY", "NONE")
