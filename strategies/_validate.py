from hypothesis.errors import InvalidArgument


def check_range(name_lo: str, lo: int, name_hi: str, hi: int, *, floor: int = 0) -> None:
    for n, v in ((name_lo, lo), (name_hi, hi)):
        if not isinstance(v, int) or isinstance(v, bool) or v < floor:
            raise InvalidArgument(f"{n}={v!r} must be an int >= {floor}")
    if lo > hi:
        raise InvalidArgument(f"{name_lo}={lo} must not exceed {name_hi}={hi}")
