"""Types of the compiled observation encoder (``_obsfast.c``)."""

from typing import Any

import numpy as np
import numpy.typing as npt

def encode(state: Any, seat: int, /) -> npt.NDArray[np.float32]: ...
def configure(settings: dict[str, Any], /) -> None: ...
