# SPDX-License-Identifier: MIT
"""pytest set-up: the fbwire_compare package from tools/ of this checkout, the fixtures' path."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools"))


@pytest.fixture
def fixtures():
    return os.path.join(HERE, "fixtures")
