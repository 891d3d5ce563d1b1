import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
# The generators under models/ are plain scripts next to the package, not part of it.
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


@pytest.fixture
def shared_dir():
    if not SHARED.is_dir():
        pytest.skip("shared peer cases are not next to the checkout")
    return SHARED
