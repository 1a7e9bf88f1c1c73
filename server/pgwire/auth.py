"""Password authentication: MD5 and SCRAM-SHA-256 (RFC 5802 / RFC 7677), server side."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import unicodedata

from sql.errors import INVALID_PASSWORD, PROTOCOL_VIOLATION, SqlError

SCRAM_MECHANISM = "SCRAM-SHA-256"
SCRAM_ITERATIONS = 4096


def password_failed(user: str) -> SqlError:
    return SqlError(
        INVALID_PASSWORD, f'password authentication failed for user "{user}"', severity="FATAL"
    )


def md5_expected(user: str, password: str, salt: bytes) -> bytes:
    """What a client sends for AuthenticationMD5Password: 'md5' + md5(md5(pw + user) + salt)."""
    inner = hashlib.md5((password + user).encode()).hexdigest().encode()
    return b"md5" + hashlib.md5(inner + salt).hexdigest().encode()


def md5_verify(user: str, password: str, salt: bytes, response: bytes) -> bool:
    return hmac.compare_digest(md5_expected(user, password, salt), response)


def _malformed(what: str) -> SqlError:
    return SqlError(PROTOCOL_VIOLATION, "malformed SCRAM message", detail=what, severity="FATAL")


def _hmac(key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hashlib.sha256).digest()


def _saslprep(password: str) -> bytes:
    # libpq applies SASLprep (NFKC normalization at its core) to non-ASCII passwords.
    return unicodedata.normalize("NFKC", password).encode()


def _attrs(message: str) -> list[tuple[str, str]]:
    out = []
    for part in message.split(","):
        if len(part) < 2 or part[1] != "=":
            raise _malformed(f"invalid attribute {part!r}")
        out.append((part[0], part[2:]))
    return out


class ScramServer:
    """One SCRAM-SHA-256 exchange with a fresh salt and nonce (no channel binding)."""

    def __init__(self, password: str, iterations: int = SCRAM_ITERATIONS) -> None:
        self.salt = os.urandom(16)
        self.iterations = iterations
        salted = hashlib.pbkdf2_hmac("sha256", _saslprep(password), self.salt, iterations)
        self.stored_key = hashlib.sha256(_hmac(salted, b"Client Key")).digest()
        self.server_key = _hmac(salted, b"Server Key")
        self.nonce = ""
        self.gs2_header = ""
        self.client_first_bare = ""
        self.server_first = ""

    def handle_client_first(self, data: bytes) -> bytes:
        """client-first-message -> server-first-message."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise _malformed("not UTF-8") from None
        parts = text.split(",", 2)
        if len(parts) != 3:
            raise _malformed("missing GS2 header")
        flag, authzid, bare = parts
        if flag.startswith("p="):
            raise SqlError(
                PROTOCOL_VIOLATION,
                "channel binding is not supported by this server",
                severity="FATAL",
            )
        if flag not in ("n", "y") or (authzid and not authzid.startswith("a=")):
            raise _malformed("invalid GS2 header")
        attrs = dict(_attrs(bare))
        client_nonce = attrs.get("r")
        if "n" not in attrs or not client_nonce:
            raise _malformed("missing username or nonce")
        self.gs2_header = f"{flag},{authzid},"
        self.client_first_bare = bare
        self.nonce = client_nonce + base64.b64encode(os.urandom(18)).decode()
        salt = base64.b64encode(self.salt).decode()
        self.server_first = f"r={self.nonce},s={salt},i={self.iterations}"
        return self.server_first.encode()

    def handle_client_final(self, data: bytes, user: str) -> bytes:
        """client-final-message -> server-final-message; raises 28P01 on a wrong proof."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise _malformed("not UTF-8") from None
        attrs = _attrs(text)
        if len(attrs) < 3 or attrs[0][0] != "c" or attrs[1][0] != "r" or attrs[-1][0] != "p":
            raise _malformed("unexpected attributes in client-final-message")
        expected_cbind = base64.b64encode(self.gs2_header.encode()).decode()
        if attrs[0][1] != expected_cbind:
            raise _malformed("unexpected channel binding data")
        if attrs[1][1] != self.nonce:
            raise _malformed("nonce does not match")
        try:
            proof = base64.b64decode(attrs[-1][1], validate=True)
        except ValueError:
            raise _malformed("invalid proof encoding") from None
        if len(proof) != 32:
            raise _malformed("invalid proof length")
        without_proof = text[: text.rindex(",p=")]
        auth_message = f"{self.client_first_bare},{self.server_first},{without_proof}".encode()
        client_signature = _hmac(self.stored_key, auth_message)
        client_key = bytes(a ^ b for a, b in zip(proof, client_signature, strict=True))
        if not hmac.compare_digest(hashlib.sha256(client_key).digest(), self.stored_key):
            raise password_failed(user)
        server_signature = _hmac(self.server_key, auth_message)
        return b"v=" + base64.b64encode(server_signature)
