"""Web accounts: users with argon2 password hashes, login sessions with CSRF secrets, personal
API tokens (sha256 only), bot ownership and in-memory rate limits.

Nothing here logs or stores a password, a session id or a token in clear.
"""
