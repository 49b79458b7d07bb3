"""Cassettes: whole runs recorded at the vendor SDKs' transports, replayed offline (`agentkit.testing.Cassette`)."""

from ._cassette import Cassette, CassetteMode, default_mode
from ._format import CassetteMiss

__all__ = ["Cassette", "CassetteMiss", "CassetteMode", "default_mode"]
