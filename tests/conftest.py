import pytest

from tests.libpcp import bridge

needs_libpcp = pytest.mark.skipif(not bridge.HAVE_LIBPCP, reason="Debian's PCP is not installed")
