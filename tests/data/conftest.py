"""The PostgreSQL fixtures for the data-source tests (a private throwaway cluster: tests/support/postgres.py)."""

from tests.support.postgres import pg_server, pg_url

__all__ = ["pg_server", "pg_url"]
