"""Moved to bench.common.record; this name stays for tests/support/host_record.py until it imports that."""

from bench.common.record import RESULTS, ROOT, cpu, environment, write_result

__all__ = ["RESULTS", "ROOT", "cpu", "environment", "write_result"]
