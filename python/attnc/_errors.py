"""attnc's exception, apart so that every module of the package can raise it."""


class AttncError(RuntimeError):
    """A compile or run-time failure, with attnc's own message."""
