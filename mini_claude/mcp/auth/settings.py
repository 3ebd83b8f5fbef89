"""`OAuthSettings`: a server entry's `oauth` object, validated. Every problem is one ConfigError naming
`mcpServers.NAME.oauth.KEY`. Files named by `privateKeyFile` / `assertionFile` / `idTokenFile` are read when the
value is needed (a workload identity token file is rotated under us), not here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mini_claude.errors import ConfigError
from mini_claude.jsonfile import json_type
from mini_claude.mcp.auth.urls import is_secure_url

__all__ = ["GRANT_TYPES", "EnterpriseSettings", "OAuthServerConfig", "OAuthSettings"]

GRANT_TYPES = ("authorization_code", "client_credentials", "jwt_bearer", "enterprise")
_SIGNING_ALGS = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA")
_MAX_PORT = 65535


class OAuthServerConfig(Protocol):
    """What OAuth reads of a server's config entry (`mini_claude.mcp.config.ServerConfig` has it): the OAuth layer
    sits below the config layer, so it names only these fields, read-only."""

    @property
    def name(self) -> str:
        """The server's configured name (in messages, config keys, the token store)."""

    @property
    def url(self) -> str | None:
        """The server's URL (None: not an HTTP server, so no OAuth)."""

    @property
    def oauth(self) -> Mapping[str, Any]:
        """The entry's `oauth` object as written ({} when there is none)."""


@dataclass(frozen=True)
class EnterpriseSettings:
    """SEP-990 enterprise-managed authorization: the IdP that turns the user's ID token into an ID-JAG."""

    idp_issuer: str | None = None
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None
    idp_client_secret: str | None = field(default=None, repr=False)
    id_token: str | None = field(default=None, repr=False)
    id_token_file: str | None = None

    def read_id_token(self, key: str) -> str:
        return _value_or_file(self.id_token, self.id_token_file, f"{key}.idToken", f"{key}.idTokenFile")


@dataclass(frozen=True)
class OAuthSettings:
    """What the user configured for one server's OAuth. Everything is optional: the default is an interactive
    authorization-code login with dynamic client registration."""

    server: str = ""
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    callback_port: int | None = None
    scopes: tuple[str, ...] | None = None
    client_metadata_url: str | None = None
    grant_type: str = "authorization_code"
    private_key: str | None = field(default=None, repr=False)
    private_key_file: str | None = None
    signing_algorithm: str | None = None
    assertion: str | None = field(default=None, repr=False)
    assertion_file: str | None = None
    enterprise: EnterpriseSettings | None = None
    dpop: bool | None = None  # None: use DPoP when the authorization server advertises it
    grant_type_explicit: bool = False  # False: inferred (the provider may switch to client_credentials)
    issuer: str | None = None  # the one authorization server to use (configured credentials go nowhere else)
    auth_server_metadata_url: str | None = None  # its metadata document: no discovery

    @property
    def key(self) -> str:
        return f"mcpServers.{self.server}.oauth"

    @property
    def has_configured_credentials(self) -> bool:
        """Whether the config holds something that identifies or authenticates us at one particular authorization
        server (a client ID, secret, key, workload assertion or enterprise IdP token): it must not be shown to
        another one."""
        return bool(self.client_id or self.client_secret or self.private_key or self.private_key_file
                    or self.assertion or self.assertion_file or self.enterprise is not None)

    @property
    def has_client_credentials(self) -> bool:
        return bool(self.client_id and (self.client_secret or self.private_key or self.private_key_file))

    def read_private_key(self) -> str | None:
        if self.private_key is None and self.private_key_file is None:
            return None
        return _value_or_file(self.private_key, self.private_key_file, f"{self.key}.privateKey",
                              f"{self.key}.privateKeyFile")

    def read_assertion(self) -> str:
        return _value_or_file(self.assertion, self.assertion_file, f"{self.key}.assertion",
                              f"{self.key}.assertionFile")

    @classmethod
    def from_config(cls, cfg: OAuthServerConfig) -> OAuthSettings:
        return cls.from_mapping(dict(cfg.oauth or {}), server=cfg.name)

    @classmethod
    def from_mapping(cls, raw: Any, *, server: str) -> OAuthSettings:
        base = f"mcpServers.{server}.oauth"
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise ConfigError(f"must be an object, got {json_type(raw)}", key=base)
        reader = _Reader(raw, base)
        scopes = reader.scopes("scopes")
        port = reader.integer("callbackPort")
        if port is not None and not 0 < port <= _MAX_PORT:
            raise ConfigError("must be a port number (1-65535)", key=f"{base}.callbackPort")
        grant = reader.string("grantType")
        enterprise_raw = raw.get("enterprise")
        enterprise = None
        if enterprise_raw is not None:
            if not isinstance(enterprise_raw, dict):
                raise ConfigError(f"must be an object, got {json_type(enterprise_raw)}", key=f"{base}.enterprise")
            ent = _Reader(enterprise_raw, f"{base}.enterprise")
            enterprise = EnterpriseSettings(
                idp_issuer=ent.string("idpIssuer"), idp_token_endpoint=ent.string("idpTokenEndpoint"),
                idp_client_id=ent.string("idpClientId"), idp_client_secret=ent.string("idpClientSecret"),
                id_token=ent.string("idToken"), id_token_file=ent.string("idTokenFile"),
            )
            if not (enterprise.idp_token_endpoint or enterprise.idp_issuer):
                raise ConfigError("needs idpTokenEndpoint or idpIssuer", key=f"{base}.enterprise")
            if not (enterprise.id_token or enterprise.id_token_file):
                raise ConfigError("needs idToken or idTokenFile", key=f"{base}.enterprise")
        explicit = grant is not None
        if grant is None:
            if enterprise is not None:
                grant = "enterprise"
            elif raw.get("assertion") is not None or raw.get("assertionFile") is not None:
                grant = "jwt_bearer"
            else:
                grant = "authorization_code"
        grant = {"jwt-bearer": "jwt_bearer", "client-credentials": "client_credentials"}.get(grant, grant)
        if grant not in GRANT_TYPES:
            raise ConfigError(f"unknown grant type {grant!r} (use {', '.join(GRANT_TYPES)})", key=f"{base}.grantType")
        settings = cls(
            server=server,
            client_id=reader.string("clientId"),
            client_secret=reader.string("clientSecret"),
            callback_port=port,
            scopes=scopes,
            client_metadata_url=reader.url("clientMetadataUrl"),
            grant_type=grant,
            private_key=reader.string("privateKey"),
            private_key_file=reader.string("privateKeyFile"),
            signing_algorithm=reader.string("signingAlgorithm"),
            assertion=reader.string("assertion"),
            assertion_file=reader.string("assertionFile"),
            enterprise=enterprise,
            dpop=reader.boolean("dpop"),
            grant_type_explicit=explicit,
            issuer=reader.secure_url("issuer", plain=True),
            auth_server_metadata_url=reader.secure_url("authServerMetadataUrl"),
        )
        settings._check(base)
        return settings

    def _check(self, base: str) -> None:
        has_key = self.private_key is not None or self.private_key_file is not None
        if self.signing_algorithm is not None and self.signing_algorithm not in _SIGNING_ALGS:
            raise ConfigError(f"unknown algorithm {self.signing_algorithm!r} (use one of {', '.join(_SIGNING_ALGS)})",
                              key=f"{base}.signingAlgorithm")
        if self.grant_type == "client_credentials":
            if not self.client_id:
                raise ConfigError("the client_credentials grant needs a clientId", key=f"{base}.clientId")
            if not self.client_secret and not has_key:
                raise ConfigError("the client_credentials grant needs clientSecret or privateKey/privateKeyFile",
                                  key=base)
        if self.grant_type == "jwt_bearer" and not (self.assertion or self.assertion_file):
            raise ConfigError("the jwt_bearer grant needs assertion or assertionFile", key=f"{base}.assertion")
        if self.grant_type == "enterprise":
            if self.enterprise is None:
                raise ConfigError("the enterprise grant needs an `enterprise` object", key=f"{base}.enterprise")
            if not self.client_id:
                raise ConfigError("enterprise-managed authorization needs a clientId", key=f"{base}.clientId")
        if self.client_secret and not self.client_id:
            raise ConfigError("a clientSecret needs its clientId", key=f"{base}.clientId")


class _Reader:
    def __init__(self, raw: dict[str, Any], base: str) -> None:
        self.raw = raw
        self.base = base

    def _bad(self, name: str, what: str) -> ConfigError:
        return ConfigError(f"must be {what}, got {json_type(self.raw[name])}", key=f"{self.base}.{name}")

    def string(self, name: str) -> str | None:
        value = self.raw.get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self._bad(name, "a string")
        return value or None

    def url(self, name: str) -> str | None:
        value = self.string(name)
        if value is not None and not value.startswith(("https://", "http://")):
            raise ConfigError(f"not a URL: {value!r}", key=f"{self.base}.{name}")
        return value

    def secure_url(self, name: str, *, plain: bool = False) -> str | None:
        """An authorization-server URL: HTTPS (plain HTTP only to loopback); `plain`: no query or fragment
        (an RFC 8414 issuer)."""
        value = self.string(name)
        if value is None:
            return None
        if not is_secure_url(value):
            raise ConfigError(f"must be an https:// URL (http:// only for a loopback host), got {value!r}",
                              key=f"{self.base}.{name}")
        if plain and ("?" in value or "#" in value):
            raise ConfigError("an issuer has no query or fragment", key=f"{self.base}.{name}")
        return value

    def integer(self, name: str) -> int | None:
        value = self.raw.get(name)
        if value is None:
            return None
        if isinstance(value, str) and value.strip().isdigit():  # "${PORT}" expands to a string
            return int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._bad(name, "an integer")
        return value

    def boolean(self, name: str) -> bool | None:
        value = self.raw.get(name)
        if value is None:
            return None
        if not isinstance(value, bool):
            raise self._bad(name, "true or false")
        return value

    def scopes(self, name: str) -> tuple[str, ...] | None:
        value = self.raw.get(name)
        if value is None:
            return None
        if isinstance(value, str):
            return tuple(value.split())
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(s for v in value for s in v.split())
        raise self._bad(name, "a string or a list of strings")


def _value_or_file(value: str | None, path: str | None, value_key: str, file_key: str) -> str:
    if value:
        return value.strip()
    if not path:
        raise ConfigError("missing", key=value_key)
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}", key=file_key) from None
    if not text:
        raise ConfigError(f"{path} is empty", key=file_key)
    return text
