"""Fixtures of the campaign tests: small campaign files that run real simulations in well
under a second (the CLI called in-process, `cli`, is shared: tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from campaign_cases import SMALL_CAMPAIGN

from mptcplab import sim

if not sim.available():  # pragma: no cover - the build always provides it
    pytest.skip("the simulator extension is not built (make build)", allow_module_level=True)


@pytest.fixture
def write_campaign(tmp_path: Path) -> Callable[..., Path]:
    """Write a campaign file whose store goes to tmp_path; returns the file's path."""

    def write(text: str = SMALL_CAMPAIGN, name: str = "campaign.toml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


@pytest.fixture
def ran_campaign(write_campaign, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Write a campaign named ``name`` and run it from tmp_path with ``mptcplab run``; returns
    (campaign file, its store at the default place)."""

    def run(text: str, name: str) -> tuple[Path, Path]:
        monkeypatch.chdir(tmp_path)
        path = write_campaign(text)
        code, _, err = cli("run", str(path), "-q")
        assert code == 0, err
        return path, tmp_path / "results" / name / "store.sqlite"

    return run
