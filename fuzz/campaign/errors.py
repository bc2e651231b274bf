"""The campaign's one error type, in a module of its own: the state dir
(state.py) and the follow-up job log (followup.py) both raise it, and
state.py reads the job log when it checks a dir."""


class StateError(ValueError):
    """The state directory belongs to another campaign, is in use, or is unreadable."""
