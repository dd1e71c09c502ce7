import os

import pytest
from hypothesis import settings

# CI runs a fixed set of examples (reproducible verdicts); locally hypothesis explores
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

from tests.libpcp import bridge

needs_libpcp = pytest.mark.skipif(not bridge.HAVE_LIBPCP, reason="Debian's PCP is not installed")


def pytest_sessionstart(session: pytest.Session) -> None:
    # In CI the reference must be there: a differential suite that skips proves nothing.
    if os.environ.get("CI") and not bridge.HAVE_LIBPCP:
        raise pytest.UsageError("CI run without Debian's PCP: .ci/install-pcp.sh did not install it")
