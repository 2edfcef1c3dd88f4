"""The base of the Python classes that own one C handle."""

from typing import Any, TypeVar

T = TypeVar("T", bound="HandleOwner")


class HandleOwner:
    """Owns ``self._handle``, an object of gramask._core that holds one reference to a
    C object. ``close()`` drops it now (objects built from it, such as compiled
    grammars and matchers, keep their own references); otherwise garbage collection
    does. Later use of a closed object raises ValueError. A context manager."""

    _handle: Any

    def close(self) -> None:
        """Drops this object's reference to its C object now (idempotent)."""
        self._handle.close()

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
