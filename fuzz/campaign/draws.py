"""How a campaign draws its programs (`shapefuzz run --draw`), and the identity keys each draw sets
(CampaignConfig.identity)."""

# Blind sets none, so state dirs from before the draws had names still resume. `shapefuzz run` draws
# pair-aimed for torch.compile programs unless told (docs/benchmarks.md: the three-way comparison); a
# CampaignConfig made in code draws blind unless told, as it always has.
DRAWS = ("pair-aimed", "blind", "swarm")


def draw_flags(draw: str) -> dict:
    """CampaignConfig's fields for a draw."""
    if draw not in DRAWS:
        raise ValueError(f"unknown draw {draw!r}; the draws are {', '.join(DRAWS)}")
    return {"swarm": draw == "swarm", "pair_aimed": draw == "pair-aimed"}


def draw_of(identity: dict) -> str:
    """The draw a campaign identity (a state dir's config.json) records."""
    return "swarm" if identity.get("swarm") else "pair-aimed" if identity.get("pair_aimed") else "blind"
